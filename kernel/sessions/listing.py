"""Finding session files: per-project listing, listing everything, most recent, ``--session <id>``.

Listing parses only the lines it needs (the header, session names, the first user message and
the last user/assistant message), and through :mod:`piko.sessions.listing_cache` reads only
what changed since the last listing (an unchanged file is not opened, one that grew is read from
where the last listing stopped); the text of all messages (for searching in a picker) is
computed only when asked for.

Files are read in blocks of whole lines (:func:`line_blocks`, about 1 MiB each), so listing a
folder that holds a 2 GB session, or a large file that is no session at all, takes memory for
one block (or one longer line) at a time, not for the file.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from typing import Any
from typing import Literal

from piko.config.paths import agent_dir
from piko.lib import jsonio
from piko.lib.records import Record
from piko.sessions.ids import ms_from_iso
from piko.sessions.migrations import encode_cwd
from piko.sessions.reading import ENTRY_PREFIX

__all__ = [
    "ListingScan",
    "ResolvedSession",
    "SessionInfo",
    "default_session_dir",
    "find_most_recent_session",
    "find_session_by_id",
    "is_session_file",
    "line_blocks",
    "lines_of",
    "list_all_sessions",
    "list_sessions",
    "read_header",
    "read_session_info",
    "resolve_session",
    "sessions_root",
]


def sessions_root() -> Path:
    """``<agent dir>/sessions``: one sub-directory per project."""
    return agent_dir() / "sessions"


def default_session_dir(cwd: str, root: str | os.PathLike[str] | None = None) -> str:
    """``<agent dir>/sessions/--<cwd encoded>--`` (not created here)."""
    return os.path.join(str(root) if root is not None else str(sessions_root()), encode_cwd(cwd))


def read_header(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The header of a session file, or None when its first line is not one."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 20)
        header = jsonio.loads(first) if first.strip() else None
    except (OSError, ValueError):
        return None
    if isinstance(header, dict) and header.get("type") == "session" and isinstance(header.get("id"), str):
        return header
    return None


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """Whether the first line of ``path`` is a session header (``type`` session, string ``id``)."""
    return read_header(path) is not None


def find_most_recent_session(session_dir: str | os.PathLike[str]) -> str | None:
    """The most recently modified valid session file of a directory (by file mtime), or None.

    Files are taken newest first and only their first lines read until one is a session
    header (pi 1.6's order): with thousands of sessions, one header is read, not thousands.
    """
    try:
        entries = [e for e in os.scandir(session_dir) if e.name.endswith(".jsonl")]
    except OSError:
        return None
    dated: list[tuple[float, str]] = []
    for entry in entries:
        try:
            dated.append((entry.stat().st_mtime, entry.path))
        except OSError:
            continue
    dated.sort(key=lambda item: item[0], reverse=True)
    for _mtime, path in dated:
        if is_session_file(path):
            return path
    return None


def find_session_by_id(
    cwd: str, session_id: str, session_dir: str | os.PathLike[str] | None = None
) -> str | None:
    """The file of this project's session whose header id is exactly ``session_id`` (``--session-id``).

    Only headers are read. With a ``session_dir`` other than the project's default folder,
    the header's ``cwd`` must also be ``cwd`` (that folder may hold every project's sessions).
    """
    default = default_session_dir(cwd)
    directory = str(session_dir) if session_dir is not None else default
    other_folder = os.path.abspath(directory) != os.path.abspath(default)
    wanted_cwd = os.path.abspath(cwd)
    for path in _jsonl_files(directory):
        header = read_header(path)
        if header is None or header.get("id") != session_id:
            continue
        stored = header.get("cwd")
        if other_folder and not (
            isinstance(stored, str) and stored and os.path.abspath(stored) == wanted_cwd
        ):
            continue
        return path
    return None


# ---------------------------------------------------------------------------
# Session info (what the picker and RPC show)
# ---------------------------------------------------------------------------


def _utc(ms: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)


class SessionInfo(Record):
    """One session file as listed: ``created``/``modified`` are aware UTC datetimes."""

    path: str
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime.datetime
    modified: datetime.datetime
    message_count: int
    first_message: str

    @property
    def all_messages_text(self) -> str:
        """The text of every user and assistant message, space-joined (read on first use)."""
        text: str | None = self.__dict__.get("_all_text")
        if text is None:
            text = self.__dict__["_all_text"] = _all_messages_text(self.path)
        return text


def _message_text(message: Any) -> str | None:
    """The text of a user/assistant message with content (pi's ``extractTextContent``), else None."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    if "content" not in message:
        return None
    content = message["content"]
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _parse(line: bytes) -> Any:
    try:
        return jsonio.loads(line)
    except ValueError:
        return None


def lines_of(data: bytes) -> list[bytes]:
    """The non-blank lines of ``data`` (no newlines)."""
    return [line for line in data.split(b"\n") if line and not line.isspace()]


READ_BLOCK = 1 << 20
"""About how many bytes :func:`line_blocks` reads at a time."""


def line_blocks(fh: IO[bytes], size: int = READ_BLOCK) -> Iterator[bytes]:
    """The rest of ``fh`` as blocks of whole lines, each ending with a newline: about ``size``
    bytes each, or one line when a line is longer. The last block is what follows the last
    newline when the file does not end with one (a line cut short)."""
    parts: list[bytes] = []  # a line longer than a read, joined once it ends
    while chunk := fh.read(size):
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:
            parts.append(chunk)
            continue
        whole = chunk if cut == len(chunk) else chunk[:cut]
        if parts:
            parts.append(whole)
            whole = b"".join(parts)
            parts = []
        if cut < len(chunk):
            parts.append(chunk[cut:])
        yield whole
    if parts:
        yield b"".join(parts)


def _all_messages_text(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return " ".join(text for block in line_blocks(fh) for text in _texts_of(block))
    except OSError:
        return ""


def _texts_of(block: bytes) -> list[str]:
    """The texts of the user and assistant messages on the lines of ``block``."""
    texts: list[str] = []
    for line in lines_of(block):
        _type, role, obj = _scan(line)
        if role != "user" and role != "assistant":
            continue
        obj = obj if obj is not None else _parse(line)
        if isinstance(obj, dict) and obj.get("type") == "message":
            text = _message_text(obj.get("message"))
            if text:
                texts.append(text)
    return texts


def _scan(line: bytes) -> tuple[str, str | None, Any]:
    """``(type, message role or None, parsed object or None)``; pi-written lines are not parsed."""
    m = ENTRY_PREFIX.match(line)
    if m is not None and (m.group(5) is not None or m.group(1) != b"message"):
        role = m.group(5)
        return m.group(1).decode("utf-8", "replace"), role.decode("utf-8", "replace") if role else None, None
    # otherwise a message line not in pi's compact form (spaces after the colons): parsed below
    if line.startswith(b'{"type":"') and not line.startswith(b'{"type":"message"'):
        end = line.find(b'"', 9)
        return (line[9:end].decode("utf-8", "replace") if end > 0 else ""), None, None
    obj = _parse(line)
    if isinstance(obj, dict) and isinstance(obj.get("type"), str):
        message = obj.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        return obj["type"], role if isinstance(role, str) else None, obj
    return "", None, None


class ListingScan(Record):
    """What listing needs from a session file, gathered line by line so that a file that grew
    can be scanned from where the last scan stopped (:mod:`piko.sessions.listing_cache`)."""

    header: dict[str, Any] | None = None
    message_count: int = 0
    first_message: str = ""
    name: str | None = None
    last_activity: int | None = None

    def add_lines(self, lines: list[bytes]) -> bool:
        """Take the next lines of the file; False when its first line is not a session header."""
        start = 0
        if self.header is None:
            header: Any = None
            for start, line in enumerate(lines):  # noqa: B007 - the first parseable line is the header
                header = _parse(line)
                if header is not None:
                    break
            else:
                return True  # nothing parseable yet
            if not isinstance(header, dict) or header.get("type") != "session":
                return False
            self.header = header
            start += 1
        candidates: list[bytes] = []  # user/assistant lines, latest last
        for line in lines[start:]:
            entry_type, role, obj = _scan(line)
            if entry_type == "session_info":
                obj = obj if obj is not None else _parse(line)
                if isinstance(obj, dict):
                    value = obj.get("name")
                    self.name = value.strip() or None if isinstance(value, str) else None
                continue
            if entry_type != "message":
                continue
            if obj is None and not line.endswith(b"}") and not line.rstrip().endswith(b"}"):
                if _parse(line) is None:
                    continue  # a line cut short: pi skips it
            self.message_count += 1
            if role == "user" or role == "assistant":
                candidates.append(line)
                if not self.first_message and role == "user":
                    parsed = obj if obj is not None else _parse(line)
                    message = parsed.get("message") if isinstance(parsed, dict) else None
                    if isinstance(message, dict):
                        text = _message_text(message)
                        if text:
                            self.first_message = text
        # Last activity: pi takes the newest user/assistant message time; messages are appended
        # in time order, so the last such line that has one decides.
        for line in reversed(candidates):
            parsed = _parse(line)
            if not isinstance(parsed, dict):
                continue
            message = parsed.get("message")
            if _message_text(message) is None:
                continue
            stamp = message.get("timestamp") if isinstance(message, dict) else None
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                activity: int | None = int(stamp)
            else:
                activity = ms_from_iso(parsed.get("timestamp"))
            if activity is not None:
                self.last_activity = activity
                break
        return True

    def info(self, path: str, mtime: float) -> SessionInfo | None:
        """The listing record, or None when no session header was found."""
        header = self.header
        if header is None:
            return None
        created_ms = ms_from_iso(header.get("timestamp"))
        if self.last_activity is not None and self.last_activity > 0:
            modified = _utc(self.last_activity)
        elif created_ms is not None:
            modified = _utc(created_ms)
        else:
            modified = _utc(mtime * 1000)
        cwd = header.get("cwd")
        parent = header.get("parentSession")
        return SessionInfo(
            path=path,
            id=str(header.get("id", "")),
            cwd=cwd if isinstance(cwd, str) else "",
            name=self.name,
            parent_session_path=parent if isinstance(parent, str) else None,
            created=_utc(created_ms) if created_ms is not None else _utc(mtime * 1000),
            modified=modified,
            message_count=self.message_count,
            first_message=self.first_message or "(no messages)",
        )


def read_session_info(path: str | os.PathLike[str]) -> SessionInfo | None:
    """The listing record of one session file, or None when it is not a session file."""
    path = str(path)
    scan = ListingScan()
    try:
        with open(path, "rb") as fh:
            mtime = os.fstat(fh.fileno()).st_mtime
            for block in line_blocks(fh):
                if not scan.add_lines(lines_of(block)):
                    return None  # its first line is no session header: the rest is not read
    except OSError:
        return None
    return scan.info(path, mtime)


def _infos(files: list[str]) -> list[SessionInfo]:
    """The listing records of ``files``, newest activity first (through the listing cache)."""
    from piko.sessions.listing_cache import cached_session_infos

    infos = cached_session_infos(files)
    infos.sort(key=lambda s: s.modified, reverse=True)
    return infos


def _jsonl_files(directory: str | os.PathLike[str]) -> list[str]:
    try:
        return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".jsonl"))
    except OSError:
        return []


def list_sessions(cwd: str, session_dir: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """Sessions of a project (``session_dir``, default ``<agent dir>/sessions/--<cwd>--``), newest first."""
    directory = session_dir if session_dir is not None else default_session_dir(cwd)
    return _infos(_jsonl_files(directory))


def list_all_sessions(sessions_root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """Sessions of every project under ``sessions_root`` (default ``<agent dir>/sessions``), newest first."""
    root = Path(sessions_root) if sessions_root is not None else agent_dir() / "sessions"
    try:
        dirs = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []
    files: list[str] = []
    for directory in dirs:
        files.extend(_jsonl_files(directory))
    return _infos(files)


# ---------------------------------------------------------------------------
# --session / --fork argument
# ---------------------------------------------------------------------------


class ResolvedSession(Record, kw_only=False, frozen=True):
    """What a ``--session``/``--fork`` argument names.

    ``kind``: ``path`` (the argument is a path), ``local`` (an id prefix matched in this
    project), ``global`` (matched in another project; ``cwd`` is that project's), ``not_found``.
    """

    kind: Literal["path", "local", "global", "not_found"]
    path: str | None = None
    cwd: str | None = None
    arg: str = ""


def _id_matches(files: list[str], prefix: str) -> list[SessionInfo]:
    matching = [f for f in files if (h := read_header(f)) is not None and str(h["id"]).startswith(prefix)]
    return _infos(matching)


def resolve_session(
    arg: str,
    cwd: str,
    session_dir: str | os.PathLike[str] | None = None,
    sessions_root: str | os.PathLike[str] | None = None,
) -> ResolvedSession:
    """pi's rule: a path if the argument has a slash or ends in ``.jsonl``, else a session-id
    prefix looked up in this project's sessions, then in every project's (newest match wins)."""
    if "/" in arg or "\\" in arg or arg.endswith(".jsonl"):
        return ResolvedSession("path", arg, arg=arg)
    local_dir = session_dir if session_dir is not None else default_session_dir(cwd, sessions_root)
    local = _id_matches(_jsonl_files(local_dir), arg)
    if local:
        return ResolvedSession("local", local[0].path, local[0].cwd, arg)
    root = Path(sessions_root) if sessions_root is not None else agent_dir() / "sessions"
    files: list[str] = []
    try:
        for directory in sorted(p for p in root.iterdir() if p.is_dir()):
            files.extend(_jsonl_files(directory))
    except OSError:
        pass
    found = _id_matches(files, arg)
    if found:
        return ResolvedSession("global", found[0].path, found[0].cwd, arg)
    return ResolvedSession("not_found", None, None, arg)
