"""Reading a session file into entries: the prefix scan of the tree fields, chunked reads of large
files that keep only what the context needs, message decoding on demand, and branch paths."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from piko.lib import jsonio
from piko.sessions.entries import ENTRY_CLASSES
from piko.sessions.entries import OFFSET_SPAN
from piko.sessions.entries import EntryParseError
from piko.sessions.entries import LineSource
from piko.sessions.entries import MessageEntry
from piko.sessions.entries import SessionEntry
from piko.sessions.entries import is_line_of
from piko.sessions.entries import parse_entry_object

# pi writes the tree fields first (custom entries excepted); a message line then starts its
# message with the role. Ids and timestamps never contain quotes or backslashes.
ENTRY_PREFIX = _PREFIX = re.compile(
    rb'\{"type":"([^"\\]+)","id":"([^"\\]+)","parentId":(?:null|"([^"\\]*)"),"timestamp":"([^"\\]*)"'
    rb'(?:,"message":\{"role":"([^"\\]*)")?'
)


def entry_from_dict(raw: dict[str, Any], line: bytes | None = None) -> SessionEntry:
    """An entry from its JSON object (``line`` defaults to its serialization)."""
    entry_type = raw.get("type")
    entry_id = raw.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        raise EntryParseError("entry has no id")
    if not isinstance(entry_type, str) or not entry_type:
        raise EntryParseError("entry has no type")
    parent = raw.get("parentId")
    parent_id = parent if isinstance(parent, str) else None
    stamp = raw.get("timestamp")
    timestamp = stamp if isinstance(stamp, str) else ""
    if line is None:
        line = jsonio.dumpb(raw) + b"\n"
    if entry_type == "message":
        message = raw.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        return MessageEntry(entry_id, parent_id, timestamp, line, raw, role if isinstance(role, str) else "")
    cls = ENTRY_CLASSES.get(entry_type, SessionEntry)
    if cls is SessionEntry:
        return SessionEntry(entry_type, entry_id, parent_id, timestamp, line, raw)
    return cls(entry_type, entry_id, parent_id, timestamp, line, raw)


def entry_from_line(line: bytes, *, validate: bool = False) -> SessionEntry:
    """An entry from one line of a v3 file (newline included or not).

    A message line is only scanned for its tree fields and role unless ``validate`` is true
    or the line does not look complete; other lines are parsed whole. Raises
    :class:`EntryParseError` for a line that is not an entry.
    """
    m = _PREFIX.match(line)
    if m is not None and m.group(1) == b"message" and m.group(5) is not None and not validate:
        if line.rstrip().endswith(b"}"):
            parent = m.group(3)
            return MessageEntry(
                m.group(2).decode(),
                parent.decode() if parent is not None else None,
                m.group(4).decode(),
                line if line.endswith(b"\n") else line + b"\n",
                None,
                m.group(5).decode(),
            )
    raw = parse_entry_object(line)
    if raw.get("type") == "session":
        raise EntryParseError("a second session header")
    entry = entry_from_dict(raw, line if line.endswith(b"\n") else line + b"\n")
    if isinstance(entry, MessageEntry):
        entry._raw = None  # keep only the line; the message is structured when asked for
    return entry


def read_entries(lines: list[bytes]) -> tuple[list[SessionEntry], list[tuple[int, str]]]:
    """Entries from the lines of a v3 file after its header (each ``\\n``-terminated but maybe the last).

    Returns the entries and ``(index in lines, problem)`` for each line skipped. Blank lines
    are ignored. The last non-blank line is validated whole (a crash may have cut it short).
    """
    entries: list[SessionEntry] = []
    problems: list[tuple[int, str]] = []
    append = entries.append
    match = _PREFIX.match
    make = MessageEntry.__new__
    last = len(lines) - 1
    while last >= 0 and not lines[last].strip():
        last -= 1
    for index, line in enumerate(lines):
        m = match(line)
        if m is not None and index != last:
            entry_type, entry_id, parent, stamp, role = m.groups()
            if role is not None and entry_type == b"message" and line.endswith(b"}\n"):
                entry = make(MessageEntry)
                entry.type = "message"
                entry.id = entry_id.decode()
                entry.parent_id = parent.decode() if parent is not None else None
                entry.timestamp = stamp.decode()
                entry._source = None
                entry._at = 0
                entry._line = line
                entry._raw = None
                entry.role = role.decode()
                entry._message = None
                append(entry)
                continue
        elif not line.strip():
            continue
        try:
            append(entry_from_line(line, validate=True))
        except EntryParseError as exc:
            problems.append((index, str(exc)))
    return entries, problems


_ROLES = {r.encode(): r for r in ("user", "assistant", "toolResult", "bashExecution", "custom", "system")}
_CHUNK = 1 << 22


KEEP_TAIL = 8 << 20
"""How many bytes at the end of a session file keep their message lines in memory when it is
read (the context after the latest compaction lies there); lines before are read again when needed."""


def read_entries_from(
    fh: Any, start: int, path: str, keep_tail: int | None = None
) -> tuple[list[SessionEntry], list[tuple[int, str]]]:
    """Entries from the rest of an open v3 file (``fh`` at byte ``start``, after the header), read
    in chunks; as :func:`read_entries` (``(index of the line after the header, problem)`` for
    each line skipped), but the message lines that end more than ``keep_tail`` bytes before the
    end of the file are not kept in memory: their entries read them again from ``path`` when
    asked (building the context of an old branch, writing a copy)."""
    size = fh.seek(0, os.SEEK_END)
    fh.seek(start)
    keep_from = size - (KEEP_TAIL if keep_tail is None else keep_tail)
    source = LineSource(path)
    entries: list[SessionEntry] = []
    problems: list[tuple[int, str]] = []
    append = entries.append
    match = _PREFIX.match
    find = bytes.find
    make = MessageEntry.__new__
    roles = _ROLES
    index = 0
    offset = start
    pending = b""
    parts: list[bytes] = []  # the pieces of a line longer than a chunk, joined once it ends
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            break
        if b"\n" not in chunk:
            parts.append(chunk)
            continue
        if parts:
            parts.append(chunk)
            chunk = b"".join(parts)
            parts = []
        data = pending + chunk if pending else chunk
        cut = (
            data.rfind(b"\n", 0, len(data) - 1) + 1
        )  # the last line waits: only the file's last may be cut short
        if cut == 0:
            pending = data
            continue
        pending = data[cut:]
        base = offset
        pos = 0
        # line by line without copying the lines that stay on disk
        while pos < cut:
            end = find(data, b"\n", pos) + 1
            m = match(data, pos, end)
            if m is not None:
                entry_type, entry_id, parent, stamp, role = m.groups()
                if role is not None and entry_type == b"message" and data[end - 2] == 125:  # ends in "}\n"
                    entry = make(MessageEntry)
                    entry.type = "message"
                    entry.id = entry_id.decode()
                    entry.parent_id = parent.decode() if parent is not None else None
                    entry.timestamp = stamp.decode()
                    if base + pos >= keep_from:
                        entry._line, entry._source, entry._at = data[pos:end], None, 0
                    else:
                        entry._line, entry._source, entry._at = (
                            None,
                            source,
                            (end - pos) * OFFSET_SPAN + base + pos,
                        )
                    entry._raw = None
                    entry.role = roles.get(role) or role.decode()
                    entry._message = None
                    append(entry)
                    pos = end
                    index += 1
                    continue
            line = data[pos:end]
            if line.strip():
                try:
                    append(entry_from_line(line, validate=True))
                except EntryParseError as exc:
                    problems.append((index, str(exc)))
            pos = end
            index += 1
        offset = base + cut
    if parts:
        pending += b"".join(parts)
    if pending:
        rest, skipped = read_entries([pending])
        entries.extend(rest)
        problems.extend((index + i, problem) for i, problem in skipped)
    return entries, problems


FAST_DECODE_AT = 2000
"""From how many undecoded messages :func:`decode_messages` decodes through msgspec
(:mod:`piko.data.fast_decode`, about 3.7 µs a message less, 5 ms to import)."""


def _fast_decoder(count: int) -> Callable[[bytes], Any] | None:
    """msgspec's line decoder when ``count`` messages make its import worth it (and it is installed)."""
    if count < FAST_DECODE_AT:
        return None
    try:
        from piko.data.fast_decode import decode_message_line
    except Exception:  # msgspec missing, or a data-model type it cannot mirror: cattrs decodes all
        return None
    return decode_message_line


def decode_messages(entries: list[SessionEntry]) -> None:
    """Structure now the messages of ``entries`` not decoded yet. Adjacent lines left on disk are
    read in one go (a context of thousands of old messages costs a few reads, not one a line);
    when there are many messages, msgspec decodes the lines it takes whole. A line that cannot
    be had or decoded is left as it was: asking for its message reports it."""
    pending = [e for e in entries if isinstance(e, MessageEntry) and e._message is None]
    fast = _fast_decoder(len(pending))
    if fast is not None:
        for entry in pending:
            line = entry._line
            if line is not None and entry._raw is None:
                message = fast(line)
                if message is not None:
                    entry._message = message
    lazy = [e for e in pending if e._line is None]
    if len(lazy) < 2:
        return
    lazy.sort(key=lambda e: e._at % OFFSET_SPAN)
    first = 0
    while first < len(lazy):
        source = lazy[first]._source
        size, start = divmod(lazy[first]._at, OFFSET_SPAN)
        end = start + size
        last = first + 1
        while last < len(lazy) and lazy[last]._source is source and end - start < _CHUNK:
            size, at = divmod(lazy[last]._at, OFFSET_SPAN)
            if at - end > 1 << 16:
                break
            end = max(end, at + size)
            last += 1
        assert source is not None
        try:
            span = source.read_span(start, end - start)
        except OSError:
            span = b""
        for entry in lazy[first:last]:
            size, at = divmod(entry._at, OFFSET_SPAN)
            line = span[at - start : at - start + size]
            if not is_line_of(line, size, entry.id):
                continue
            message = fast(line) if fast is not None else None
            if message is not None:
                entry._message, entry._raw = message, None
                continue
            try:
                entry._decode(parse_entry_object(line))
            except Exception:  # left for .message to report
                continue
        first = last


def branch_path(by_id: Mapping[str, SessionEntry], leaf_id: str | None) -> list[SessionEntry]:
    """The entries from the root to ``leaf_id`` by their parent links; a parent cycle (a
    hand-edited file, colliding ids) stops at the repeat."""
    path: list[SessionEntry] = []
    append = path.append
    current = by_id.get(leaf_id) if leaf_id else None
    budget = len(by_id)
    while current is not None and budget > 0:
        append(current)
        budget -= 1
        parent = current.parent_id
        current = by_id.get(parent) if parent else None
    if current is not None:  # more steps than entries: there is a cycle, walk again watching for it
        path = []
        seen: set[str] = set()
        current = by_id.get(leaf_id) if leaf_id else None
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            current = by_id.get(current.parent_id) if current.parent_id else None
    path.reverse()
    return path
