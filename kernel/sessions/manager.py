"""The session: an append-only tree of entries in a JSONL file, its leaf, and the context it gives.

``SessionManager`` is pi's: entries hang off the current leaf, ``branch`` moves the leaf,
``build_context`` resolves the current branch into the messages for the model (compaction and
branch summaries applied). A new session writes nothing until its first assistant message, then
everything so far, then one line per entry. Opening a file reads the tree fields of each line and
parses messages only when the context needs them; broken lines are skipped and reported in
``diagnostics``; files of older versions are migrated and rewritten, as pi does. Reading the
file is :mod:`piko.sessions.file`'s job, building the context :mod:`piko.sessions.context`'s.
An appended entry has the user's known credentials masked (:func:`piko.lib.redaction.mask_known_in`)
before it is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING
from typing import Any

import attrs

from piko.data.wire import message_from_wire
from piko.data.wire import to_wire
from piko.lib import jsonio
from piko.lib.redaction import mask_known_in
from piko.sessions.context import ContextProblem
from piko.sessions.context import ModelRef
from piko.sessions.context import SessionContext
from piko.sessions.context import build_session_context
from piko.sessions.entries import CURRENT_SESSION_VERSION
from piko.sessions.entries import LabelEntry
from piko.sessions.entries import LineSource
from piko.sessions.entries import MessageEntry
from piko.sessions.entries import SessionEntry
from piko.sessions.entries import SessionHeader
from piko.sessions.entries import SessionInfoEntry
from piko.sessions.entries import gc_paused
from piko.sessions.entries import new_entry
from piko.sessions.file import SessionDiagnostic
from piko.sessions.file import SessionError
from piko.sessions.file import SessionFileError
from piko.sessions.file import ends_torn
from piko.sessions.file import keep_backup
from piko.sessions.file import lines_of_ids
from piko.sessions.file import read_session_file
from piko.sessions.file import write_session_bytes
from piko.sessions.ids import check_session_id
from piko.sessions.ids import iso_now
from piko.sessions.ids import new_entry_id
from piko.sessions.ids import new_session_id
from piko.sessions.listing import SessionInfo
from piko.sessions.listing import default_session_dir
from piko.sessions.listing import find_most_recent_session
from piko.sessions.listing import find_session_by_id
from piko.sessions.listing import list_all_sessions
from piko.sessions.listing import list_sessions
from piko.sessions.listing import read_header
from piko.sessions.listing import resolve_session
from piko.sessions.reading import branch_path
from piko.sessions.reading import entry_from_dict

if TYPE_CHECKING:
    from piko.sessions.readonly import ReadonlySessionManager

__all__ = [
    "EntryNotFoundError",
    "ModelRef",
    "SessionContext",
    "SessionDiagnostic",
    "SessionError",
    "SessionFileError",
    "SessionInOtherProjectError",
    "SessionInfo",
    "SessionManager",
    "SessionNotFoundError",
    "SessionTreeNode",
    "build_session_context",
    "list_all_sessions",
    "list_sessions",
]


class EntryNotFoundError(SessionError):
    """``Entry <id> not found``."""

    def __init__(self, entry_id: str | None) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id


class SessionNotFoundError(SessionError):
    """``No session found matching '<arg>'``."""

    def __init__(self, arg: str) -> None:
        super().__init__(f"No session found matching '{arg}'")
        self.arg = arg


class SessionInOtherProjectError(SessionError):
    """An id prefix that matched only a session of another project (pi then offers to fork it)."""

    def __init__(self, path: str, cwd: str) -> None:
        super().__init__(f"Session found in different project: {cwd}")
        self.path = path
        self.cwd = cwd


@attrs.define(eq=False)
class SessionTreeNode:
    """A node of :meth:`SessionManager.get_tree`: the entry, its children (oldest first), its label."""

    entry: SessionEntry
    children: list[SessionTreeNode] = attrs.field(factory=list)
    label: str | None = None
    label_timestamp: str | None = None


# ---------------------------------------------------------------------------
# The manager
# ---------------------------------------------------------------------------

_UNSET: Any = object()


class SessionManager:
    """A session file (or an in-memory session) as a tree of entries with a current leaf."""

    def __init__(
        self,
        cwd: str,
        session_dir: str | None,
        session_file: str | None,
        persist: bool,
        session_id: str | None = None,
    ) -> None:
        """Prefer the constructors: :meth:`create`, :meth:`open`, :meth:`in_memory`, :meth:`continue_recent`, :meth:`fork_from`."""
        self.cwd = cwd
        self.session_dir = session_dir or ""
        self._persist_enabled = persist
        self.session_id = ""
        self.session_file: str | None = None
        self.diagnostics: list[SessionDiagnostic] = []
        self._header = SessionHeader.new("", "", cwd)
        self._entries: list[SessionEntry] = []
        self._by_id: dict[str, SessionEntry] = {}
        self._labels: dict[str, str] = {}
        self._label_times: dict[str, str] = {}
        self._leaf_id: str | None = None
        self._has_assistant = False
        # get_branch's last answer: (leaf, generation, path); a new generation whenever entries
        # are replaced (an append only adds descendants, so it cannot change an existing path)
        self._generation = 0
        self._branch_cache: tuple[str | None, int, list[SessionEntry]] | None = None
        self._on_disk = 0  # how many lines of header + entries the file holds
        self._needs_newline = False  # the file ends in a line cut short
        self._written_lines: LineSource | None = None  # the file the dropped lines are read back from
        self.write_error: OSError | None = None  # the last failed write, None once writing works
        self._rewrite_pending = False  # the whole file must be written again (a failed rewrite)
        self._backup_pending = False  # a copy of the file must be kept before it is rewritten
        if persist and self.session_dir:
            os.makedirs(self.session_dir, exist_ok=True)
        if session_file:
            self.set_session_file(session_file)
        else:
            self.new_session(session_id)

    # -- constructors --------------------------------------------------------------------------

    @classmethod
    def create(
        cls, cwd: str, session_dir: str | None = None, *, session_id: str | None = None
    ) -> SessionManager:
        """A new session in ``session_dir`` (default ``<agent dir>/sessions/--<cwd>--``); written lazily.

        ``session_id`` (``--session-id``) is its id instead of a new UUID; one pi would not
        accept raises :class:`~piko.sessions.ids.InvalidSessionIdError`.
        """
        directory = session_dir if session_dir is not None else default_session_dir(cwd)
        return cls(cwd, directory, None, True, _checked(session_id))

    @classmethod
    def in_memory(cls, cwd: str | None = None, *, session_id: str | None = None) -> SessionManager:
        """A session that is never written (``--no-session``), with ``session_id`` as its id if given."""
        return cls(cwd if cwd is not None else os.getcwd(), "", None, False, _checked(session_id))

    @classmethod
    def find_by_id(cls, cwd: str, session_id: str, session_dir: str | None = None) -> str | None:
        """The file of this project's session with exactly that id (headers only are read), or None."""
        return find_session_by_id(cwd, session_id, session_dir)

    @classmethod
    def open(
        cls,
        path_or_id: str,
        cwd: str | None = None,
        session_dir: str | None = None,
        *,
        cwd_override: str | None = None,
    ) -> SessionManager:
        """Open a session file, or the newest session whose id starts with ``path_or_id``.

        ``cwd`` is the current directory, used to look an id up (this project's sessions first,
        ``session_dir`` if given); an id found only in another project raises
        :class:`SessionInOtherProjectError` (pi asks whether to fork it: :meth:`fork_from`).
        The session's cwd is its header's, or ``cwd_override``. A path that does not exist
        starts a new session there.
        """
        here = cwd if cwd is not None else os.getcwd()
        resolved = resolve_session(path_or_id, here, session_dir)
        if resolved.kind == "not_found" or resolved.path is None:
            raise SessionNotFoundError(path_or_id)
        if resolved.kind == "global":
            raise SessionInOtherProjectError(resolved.path, resolved.cwd or "")
        path = resolved.path
        header = read_header(path)
        stored_cwd = header.get("cwd") if header is not None else None
        session_cwd = cwd_override or (stored_cwd if isinstance(stored_cwd, str) else None) or here
        directory = session_dir if session_dir is not None else os.path.dirname(os.path.abspath(path))
        return cls(session_cwd, directory, path, True)

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: str | None = None) -> SessionManager:
        """The most recently modified session of ``session_dir`` (default: the cwd's), else a new one."""
        directory = session_dir if session_dir is not None else default_session_dir(cwd)
        recent = find_most_recent_session(directory)
        return cls(cwd, directory, recent, True)

    @classmethod
    def fork_from(
        cls, path_or_id: str, cwd: str, session_dir: str | None = None, *, session_id: str | None = None
    ) -> SessionManager:
        """Copy a session (any project's) into a new session of ``cwd`` whose header names it as parent
        (its id ``session_id`` if given)."""
        _checked(session_id)
        resolved = resolve_session(path_or_id, cwd, session_dir)
        if resolved.path is None:
            raise SessionNotFoundError(path_or_id)
        source = resolved.path
        try:
            contents = read_session_file(source)
        except (OSError, SessionFileError):
            contents = None
        if contents is None or contents.header is None:
            raise SessionFileError(f"Cannot fork: source session file is empty or invalid: {source}")
        directory = session_dir if session_dir is not None else default_session_dir(cwd)
        os.makedirs(directory, exist_ok=True)
        new_id = session_id or new_session_id()
        timestamp = iso_now()
        new_file = os.path.join(directory, f"{_file_stamp(timestamp)}_{new_id}.jsonl")
        new_header = SessionHeader.new(new_id, timestamp, cwd, source)
        with open(new_file, "ab") as fh:
            fh.write(new_header.line + b"".join(e.line for e in contents.entries))
        manager = cls(cwd, directory, new_file, True)
        # what the copy lacks is reported against the source
        manager.diagnostics[:0] = contents.diagnostics
        if contents.unknown_version:
            manager.diagnostics.insert(0, _unknown_version(source, contents.header, "read as version 3"))
        return manager

    # -- session switching ---------------------------------------------------------------------

    def new_session(self, id: str | None = None, parent_session: str | None = None) -> str | None:
        """Start a new, empty session (``/new``); returns its file path (None in memory)."""
        self.session_id = id or new_session_id()
        timestamp = iso_now()
        self._header = SessionHeader.new(self.session_id, timestamp, self.cwd, parent_session)
        self._reset_entries([])
        self._on_disk = 0
        self._needs_newline = False
        self._rewrite_pending = False
        self._backup_pending = False
        self.diagnostics = []
        self.write_error = None
        if self._persist_enabled:
            self.session_file = os.path.join(
                self.session_dir, f"{_file_stamp(timestamp)}_{self.session_id}.jsonl"
            )
        return self.session_file

    def set_session_file(self, path: str) -> None:
        """Switch to the session in ``path`` (``/resume``, ``switch_session``); a missing file starts a new session there."""
        resolved = os.path.abspath(path)
        if not os.path.exists(resolved):
            self.new_session()
            self.session_file = resolved
            return
        header, entries, problems, migrated, unknown_version = read_session_file(resolved)
        if header is None:
            # An empty file: start afresh and write the header now, as pi does.
            self.new_session()
            self.session_file = resolved
            self._rewrite_pending = True
            self._flush_rewrite()
            return
        self.session_file = resolved
        self.session_id = header.id
        self._header = header
        self._reset_entries(entries)
        self.diagnostics = problems
        self._report_tree_damage(resolved)
        self.write_error = None
        self._on_disk = 1 + len(entries)
        self._needs_newline = False
        self._rewrite_pending = False
        self._backup_pending = False
        if unknown_version:
            self._continue_in_new_file(resolved, header)
        elif migrated:
            # pi rewrites a migrated file at once; piko keeps the original as <file>.bak first
            self._backup_pending = self._persist_enabled
            self._rewrite_pending = True
            self._flush_rewrite()
        else:
            self._needs_newline = ends_torn(resolved)

    def _continue_in_new_file(self, path: str, header: SessionHeader) -> None:
        """A file of a version piko does not know is never written: what this session adds goes to
        a new session file (its header names ``path`` as parent), written with the first entry
        appended, with the entries read from ``path`` first. In memory nothing changes."""
        if not self._persist_enabled:
            self.diagnostics.insert(0, _unknown_version(path, header, "read as version 3"))
            return
        self.session_id = new_session_id()
        timestamp = iso_now()
        self._header = SessionHeader.new(self.session_id, timestamp, self.cwd, path)
        self.session_file = os.path.join(
            self.session_dir or os.path.dirname(path), f"{_file_stamp(timestamp)}_{self.session_id}.jsonl"
        )
        self._on_disk = 0
        self._rewrite_pending = bool(self._entries)  # the copy is written whole with the next entry
        note = f"read as version 3, left as it is; this session continues in {self.session_file}"
        self.diagnostics.insert(0, _unknown_version(path, header, note))

    def _report_tree_damage(self, path: str) -> None:
        """Report entries whose id another line uses too (the later line wins, as in pi)."""
        if len(self._by_id) == len(self._entries):
            return
        seen: set[str] = set()
        repeated: list[str] = []
        for entry in self._entries:
            if entry.id in seen and entry.id not in repeated:
                repeated.append(entry.id)
            seen.add(entry.id)
        lines = lines_of_ids(path, repeated)
        for entry_id in repeated:
            where = ", ".join(str(n) for n in lines.get(entry_id, []))
            self.diagnostics.append(
                SessionDiagnostic(
                    path,
                    0,
                    f"entry id {entry_id} is used by more than one line ({where}); the last one counts",
                )
            )

    def _flush_rewrite(self) -> None:
        """Write the whole file now (migration, empty file); on failure retry with the next entry.

        A migration keeps the original first (``<file>.bak``, or ``.bak.1``... when taken): if that
        copy cannot be made, the file is not rewritten.
        """
        try:
            if self._backup_pending and self.session_file:
                keep_backup(self.session_file)
                self._backup_pending = False
            self._write_all(rewrite=True)
            self._rewrite_pending = False
            self.write_error = None
        except OSError as exc:
            self._write_failed(exc)

    def _write_failed(self, exc: OSError) -> None:
        self.write_error = exc
        self.diagnostics.append(
            SessionDiagnostic(
                self.session_file or "", 0, f"could not write the session file: {exc.strerror or exc}"
            )
        )

    def _reset_entries(self, entries: list[SessionEntry]) -> None:
        """Index a whole file's entries at once (as :meth:`_index` one by one: the last of an id
        wins, the last entry is the leaf), with comprehensions rather than a call per entry."""
        self._entries = entries
        self._by_id = {entry.id: entry for entry in entries}
        self._generation += 1
        self._labels = {}
        self._label_times = {}
        self._leaf_id = entries[-1].id if entries else None
        self._has_assistant = any(
            isinstance(entry, MessageEntry) and entry.role == "assistant" for entry in entries
        )
        for label in [entry for entry in entries if isinstance(entry, LabelEntry)]:
            self._apply_label(label.target_id, label.label, label.timestamp)

    def _index(self, entry: SessionEntry) -> None:
        if entry.id in self._by_id:  # an id seen before now names another entry: paths may change
            self._generation += 1
        self._by_id[entry.id] = entry
        self._leaf_id = entry.id
        if isinstance(entry, MessageEntry):
            if entry.role == "assistant":
                self._has_assistant = True
        elif isinstance(entry, LabelEntry):
            self._apply_label(entry.target_id, entry.label, entry.timestamp)

    def _apply_label(self, target_id: str, label: str | None, timestamp: str) -> None:
        if label:
            self._labels[target_id] = label
            self._label_times[target_id] = timestamp
        else:
            self._labels.pop(target_id, None)
            self._label_times.pop(target_id, None)

    # -- writing -------------------------------------------------------------------------------

    def _lines(self) -> Iterator[bytes]:
        yield self._header.line
        for entry in self._entries:
            yield entry.line

    def _write_all(self, rewrite: bool) -> None:
        if not self._persist_enabled or not self.session_file:
            return
        lines = list(self._lines())
        data = b"".join(lines)
        directory = os.path.dirname(self.session_file)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if rewrite:
            write_session_bytes(self.session_file, data)
            start = 0
        else:
            with open(self.session_file, "ab") as fh:
                start = fh.seek(0, os.SEEK_END)
                fh.write(data)
        self._on_disk = 1 + len(self._entries)
        self._needs_newline = False
        self._leave_on_disk(self._entries, lines[1:], start + len(lines[0]), whole_file=True)

    def _persist(self) -> None:
        """pi's rule: nothing before the first assistant message, then everything, then each entry.

        A failed write (disk full, file not writable) does not lose the entry: it stays in memory,
        the error is kept in ``write_error`` and ``diagnostics``, and the next append writes every
        entry still missing from the file.
        """
        if not self._persist_enabled or not self.session_file:
            return
        if self._rewrite_pending:
            self._flush_rewrite()
            return
        if not self._has_assistant:
            return
        try:
            if self._on_disk and not os.path.exists(self.session_file):
                self._on_disk = 0  # the file was removed under us: write it whole again
            if self._on_disk == 0:
                self._write_all(rewrite=False)
            else:
                pending = self._entries[self._on_disk - 1 :]
                if pending:
                    lines = [e.line for e in pending]
                    data = b"".join(lines)
                    if self._needs_newline:
                        data = b"\n" + data
                    with open(self.session_file, "ab") as fh:
                        start = fh.seek(0, os.SEEK_END)
                        fh.write(data)
                    self._on_disk = 1 + len(self._entries)
                    self._leave_on_disk(pending, lines, start + (1 if self._needs_newline else 0))
                    self._needs_newline = False
            self.write_error = None
        except OSError as exc:
            self._write_failed(exc)
            self._needs_newline = self._needs_newline or ends_torn(self.session_file)

    def _leave_on_disk(
        self, entries: list[SessionEntry], lines: list[bytes], start: int, *, whole_file: bool = False
    ) -> None:
        """The written lines of message entries are dropped from memory and read back from the
        file when asked for, as the lines of a loaded file are: their structured message is
        what the session uses, and a long session otherwise holds every line twice (issue 20:
        memory over 1,000 turns). ``lines`` were written in order from offset ``start``.

        The source holds the file open from now on, so a file that is replaced or removed
        under us still gives back what was written; our own rewrites call this again."""
        if self.session_file is None:
            return
        source = self._written_lines
        if whole_file or source is None or source.path != self.session_file or not source.is_file_at_path():
            source = self._written_lines = LineSource(self.session_file, written=True)
        at = start
        for entry, line in zip(entries, lines, strict=True):
            if isinstance(entry, MessageEntry) and entry._message is not None:
                entry.leave_on_disk(source, at, len(line))
            at += len(line)

    def _append(
        self, entry_type: str, fields: dict[str, Any], *, fields_first: bool = False, message: Any = None
    ) -> str:
        tree = {"id": new_entry_id(self._by_id), "parentId": self._leaf_id, "timestamp": iso_now()}
        # pi writes the own fields of custom entries before the tree fields
        ordered = {**fields, **tree} if fields_first else {**tree, **fields}
        raw = {"type": entry_type, **{k: v for k, v in ordered.items() if v is not _UNSET}}
        raw = mask_known_in(raw)  # the user's own credentials are never written to disk
        entry = new_entry(entry_type, raw, message)
        self._entries.append(entry)
        self._index(entry)
        self._persist()
        return entry.id

    # -- appending -----------------------------------------------------------------------------

    def append_message(self, message: Any) -> str:
        """Append an agent message (a :mod:`piko.data.messages` object or its wire dict); returns the entry id."""
        if isinstance(message, dict):
            wire = message
            message = message_from_wire(wire)
        else:
            wire = to_wire(message)
        return self._append("message", {"message": wire}, message=message)

    def append_thinking_level_change(self, level: str) -> str:
        """Record a change of thinking level; returns the entry id."""
        return self._append("thinking_level_change", {"thinkingLevel": level})

    def append_model_change(self, provider: str, model_id: str) -> str:
        """Record a change of model; returns the entry id."""
        return self._append("model_change", {"provider": provider, "modelId": model_id})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
    ) -> str:
        """Record a compaction: the ``summary`` replaces the entries before ``first_kept_entry_id``
        in the context; returns the entry id."""
        return self._append(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": first_kept_entry_id,
                "tokensBefore": tokens_before,
                "details": _opt(details),
                "fromHook": _opt(from_hook),
            },
        )

    def append_branch_summary(
        self, from_id: str, summary: str, details: Any = None, from_hook: bool | None = None
    ) -> str:
        """A ``branch_summary`` entry at the current leaf (see :meth:`branch_with_summary` for pi's ``/tree``)."""
        return self._append(
            "branch_summary",
            {"fromId": from_id, "summary": summary, "details": _opt(details), "fromHook": _opt(from_hook)},
        )

    def branch_with_summary(
        self, branch_from_id: str | None, summary: str, details: Any = None, from_hook: bool | None = None
    ) -> str:
        """Move the leaf to ``branch_from_id`` (None: before the first entry) and record a summary of
        the branch left there (pi's ``branchWithSummary``: ``fromId`` is that entry, or ``root``)."""
        if branch_from_id is not None and branch_from_id not in self._by_id:
            raise EntryNotFoundError(branch_from_id)
        self._leaf_id = branch_from_id
        return self._append(
            "branch_summary",
            {
                "fromId": branch_from_id if branch_from_id is not None else "root",
                "summary": summary,
                "details": _opt(details),
                "fromHook": _opt(from_hook),
            },
        )

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        """Extension state (not in the context)."""
        return self._append("custom", {"customType": custom_type, "data": _opt(data)}, fields_first=True)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool, details: Any = None
    ) -> str:
        """An extension message that is part of the context; ``content`` is a string or blocks."""
        wire_content = content if isinstance(content, str) else to_wire(list(content))
        return self._append(
            "custom_message",
            {
                "customType": custom_type,
                "content": wire_content,
                "display": display,
                "details": _opt(details),
            },
            fields_first=True,
        )

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with None/empty, clear) the label of an entry."""
        if target_id not in self._by_id:
            raise EntryNotFoundError(target_id)
        return self._append("label", {"targetId": target_id, "label": _opt(label)})

    def append_session_info(self, name: str) -> str:
        """Name the session (an empty name clears it)."""
        return self._append("session_info", {"name": name.strip()})

    # pi's names
    append_custom_entry = append_custom
    append_custom_message_entry = append_custom_message
    append_label_change = append_label

    # -- reading -------------------------------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        """The session's header (the file's first line: ``id``, ``cwd``, ``timestamp``, ``parentSession``)."""
        return self._header

    @property
    def leaf_id(self) -> str | None:
        """The id of the entry the next one is appended after (``None`` in an empty session)."""
        return self._leaf_id

    def is_persisted(self) -> bool:
        """Whether entries are written to a file (``False`` for ``--no-session``)."""
        return self._persist_enabled

    def get_cwd(self) -> str:
        """The working directory the session belongs to."""
        return self.cwd

    def get_session_dir(self) -> str:
        """The folder of the session's file."""
        return self.session_dir

    def get_session_id(self) -> str:
        """The session's id (a UUID)."""
        return self.session_id

    def get_session_file(self) -> str | None:
        """The path of the session's JSONL file (``None`` when it is not persisted)."""
        return self.session_file

    def get_header(self) -> SessionHeader:
        """The session's header (see :attr:`header`)."""
        return self._header

    def get_leaf_id(self) -> str | None:
        """The id of the current leaf (see :attr:`leaf_id`)."""
        return self._leaf_id

    def get_leaf_entry(self) -> SessionEntry | None:
        """The current leaf's entry, or ``None`` in an empty session."""
        return self._by_id.get(self._leaf_id) if self._leaf_id else None

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        """The entry with that id, or ``None``."""
        return self._by_id.get(entry_id)

    def get_entries(self) -> list[SessionEntry]:
        """Every entry in file order (header excluded); a new list."""
        return list(self._entries)

    def get_children(self, parent_id: str | None) -> list[SessionEntry]:
        """The entries whose parent is ``parent_id`` (``None``: the roots)."""
        return [e for e in self._by_id.values() if e.parent_id == parent_id]

    def get_label(self, entry_id: str) -> str | None:
        """The label set on an entry (``pi.set_label(entry_id, label)``), or ``None``."""
        return self._labels.get(entry_id)

    def get_session_name(self) -> str | None:
        """The name of the latest ``session_info`` entry (an empty one clears it)."""
        for entry in reversed(self._entries):
            if isinstance(entry, SessionInfoEntry):
                name = entry.name
                return name.strip() or None if name else None
        return None

    def get_branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """The entries from the root to ``leaf_id`` (default: the current leaf).

        The last complete path (one that starts at a root) is kept until the entries are replaced,
        so that asking again, as switching sessions does for the context and for the tools, does
        not walk 100,000 parent links twice."""
        leaf = leaf_id if leaf_id is not None else self._leaf_id
        cached = self._branch_cache
        if cached is not None and cached[0] == leaf and cached[1] == self._generation:
            return cached[2].copy()
        path = branch_path(self._by_id, leaf)
        if not path or path[0].parent_id is None:  # a path cut off at a missing parent may change
            self._branch_cache = (leaf, self._generation, path)
        return path.copy()

    def get_tree(self) -> list[SessionTreeNode]:
        """All entries as a forest (normally one root; orphans become roots), children oldest first."""
        nodes: dict[str, SessionTreeNode] = {}
        for entry in self._entries:
            nodes[entry.id] = SessionTreeNode(
                entry, [], self._labels.get(entry.id), self._label_times.get(entry.id)
            )
        roots: list[SessionTreeNode] = []
        for entry in self._entries:
            node = nodes[entry.id]
            parent_id = entry.parent_id
            parent = nodes.get(parent_id) if parent_id is not None and parent_id != entry.id else None
            if parent is None:
                roots.append(node)
            else:
                parent.children.append(node)
        stack = list(roots)
        while stack:
            node = stack.pop()
            node.children.sort(key=_timestamp_key)
            stack.extend(node.children)
        return roots

    def build_context(self) -> SessionContext:
        """The context of the current branch (pi's ``buildSessionContext``)."""
        if self._leaf_id is None:
            return SessionContext([], "off", None)
        problems: list[ContextProblem] = []
        with gc_paused():
            path = self.get_branch()
            context = build_session_context(path, problems)
        if path and path[0].parent_id is not None:
            root = path[0]
            why = (
                "its parent links form a cycle"
                if root.parent_id in self._by_id
                else f"its parent {root.parent_id} is not in the file"
            )
            problems.insert(0, ContextProblem(root.id, f"{why}; the conversation starts at this entry"))
        if problems:
            self._add_context_problems(problems)
        return context

    def _add_context_problems(self, problems: list[ContextProblem]) -> None:
        """Record what building the context found, each once, with the line of its entry."""
        path = self.session_file or ""
        known = {d.message for d in self.diagnostics}
        fresh = [p for p in problems if f"entry {p.entry_id}: {p.message}" not in known]
        if not fresh:
            return
        lines = lines_of_ids(path, [p.entry_id for p in fresh]) if path else {}
        for problem in fresh:
            message = f"entry {problem.entry_id}: {problem.message}"
            if message in known:
                continue
            known.add(message)
            numbers = lines.get(problem.entry_id) or [0]
            self.diagnostics.append(SessionDiagnostic(path, numbers[-1], message))

    build_session_context = build_context

    # -- navigation ----------------------------------------------------------------------------

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an earlier entry; what is appended next starts a new branch there."""
        if entry_id not in self._by_id:
            raise EntryNotFoundError(entry_id)
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry (the next entry is a new root)."""
        self._leaf_id = None

    def create_branched_session(self, leaf_id: str) -> str | None:
        """A new session holding the path root..``leaf_id`` (labels on it kept); the manager switches to it.

        Returns the new file path (None in memory). The file is written now if the path has an
        assistant message, else with the first one, like a new session.
        """
        previous_file = self.session_file
        path = self.get_branch(leaf_id)
        if not path:
            raise EntryNotFoundError(leaf_id)
        kept = [e for e in path if not isinstance(e, LabelEntry)]
        new_id = new_session_id()
        timestamp = iso_now()
        new_file = os.path.join(self.session_dir, f"{_file_stamp(timestamp)}_{new_id}.jsonl")
        header = SessionHeader.new(
            new_id, timestamp, self.cwd, previous_file if self._persist_enabled else None
        )
        ids = {e.id for e in kept}
        labels = [
            (target, label, self._label_times.get(target))
            for target, label in self._labels.items()
            if target in ids
        ]
        parent_id = kept[-1].id if kept else None
        label_entries: list[SessionEntry] = []
        for target, label, label_time in labels:
            entry_id = new_entry_id(ids)
            ids.add(entry_id)
            raw: dict[str, Any] = {"type": "label", "id": entry_id, "parentId": parent_id}
            if label_time is not None:
                raw["timestamp"] = label_time
            raw["targetId"] = target
            raw["label"] = label
            label_entries.append(entry_from_dict(raw))
            parent_id = entry_id
        self._header = header
        self.session_id = new_id
        self._reset_entries(kept + label_entries)
        self._needs_newline = False
        self._on_disk = 0
        if not self._persist_enabled:
            return None
        self.session_file = new_file
        self.diagnostics = []
        self.write_error = None
        if self._has_assistant:
            self._rewrite_pending = True
            self._flush_rewrite()
        return new_file

    def read_only_session_manager(self) -> ReadonlySessionManager:
        """The read-only view extensions get (pi's ``ReadonlySessionManager``)."""
        from piko.sessions.readonly import ReadonlySessionManager  # here: only extensions ask

        return ReadonlySessionManager(self)


def _checked(session_id: str | None) -> str | None:
    return None if session_id is None else check_session_id(session_id)


def _timestamp_key(node: SessionTreeNode) -> str:
    return node.entry.timestamp  # ISO strings of one format sort chronologically


def _opt(value: Any) -> Any:
    """None means "absent" (JavaScript's undefined): the key is not written."""
    return _UNSET if value is None else value


def _file_stamp(timestamp: str) -> str:
    return timestamp.replace(":", "-").replace(".", "-")


def _unknown_version(path: str, header: SessionHeader, what: str) -> SessionDiagnostic:
    version = jsonio.dumps(header.get("version")) if "version" in header.raw else "(none)"
    return SessionDiagnostic(
        path,
        1,
        f"session version {version} is not one piko knows (1 to {CURRENT_SESSION_VERSION}): {what}",
    )
