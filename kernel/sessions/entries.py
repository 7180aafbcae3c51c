"""Session file entries (pi's JSONL v3): typed, lazily parsed views over their exact JSON lines.

Every entry keeps the bytes of its line as they are (or will be) on disk, so a session read
from pi and written again by piko is byte-identical, unknown entry types and fields included.
The tree fields (``type``, ``id``, ``parentId``, ``timestamp``) are read from the start of the
line without parsing the rest; everything else (the message of a message entry above all) is
parsed the first time it is asked for. New entries are serialized at creation, in pi's key
order, with :func:`piko.lib.jsonio.dumpb` (JavaScript's ``JSON.stringify`` output).
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import threading
import time
import uuid
from collections.abc import Container, Iterator, Mapping
from typing import Any, ClassVar

from piko.data.wire import blocks_from_wire, message_from_wire, to_wire
from piko.lib import jsonio

__all__ = [
    "CURRENT_SESSION_VERSION",
    "BranchSummaryEntry",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "EntryParseError",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "entry_from_dict",
    "entry_from_line",
    "gc_paused",
    "iso_now",
    "ms_from_iso",
    "new_entry_id",
    "new_session_id",
    "read_entries",
    "readable_message",
    "session_version",
]

CURRENT_SESSION_VERSION = 3


def session_version(value: Any) -> int | None:
    """The version a header's ``version`` value stands for: 1 when absent (``None``, as pi reads
    a v1 header), 1 to 3 as written (an integral float too), ``None`` for anything else (a
    string, a boolean, a fraction, a version newer than piko's): a file piko must not rewrite."""
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not value.is_integer():  # a fraction, infinity, NaN
            return None
        value = int(value)
    return value if 1 <= value <= CURRENT_SESSION_VERSION else None


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects (a large
    session creates millions; collections triggered along the way cost more than the work)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ---------------------------------------------------------------------------
# Ids and timestamps as pi makes them
# ---------------------------------------------------------------------------


def new_entry_id(taken: Container[str]) -> str:
    """Eight hex characters (the start of a random UUID), unique within ``taken``; 100 tries, then a full UUID."""
    for _ in range(100):
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


class _Uuid7:
    """UUIDv7 exactly as the ``uuid`` npm package makes them: ms time, then a 31-bit counter seeded at random."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._msecs = -1
        self._seq = 0

    def __call__(self) -> str:
        rnds = os.urandom(16)
        with self._lock:
            now = time.time_ns() // 1_000_000
            if now > self._msecs:
                self._seq = ((rnds[6] & 0x7F) << 24) | (rnds[7] << 16) | (rnds[8] << 8) | rnds[9]
                self._msecs = now
            else:
                self._seq = (self._seq + 1) & 0xFFFFFFFF
                if self._seq == 0:
                    self._msecs += 1
            msecs, seq = self._msecs, self._seq
        b = bytearray(16)
        b[0:6] = msecs.to_bytes(6, "big")
        b[6] = 0x70 | ((seq >> 28) & 0x0F)
        b[7] = (seq >> 20) & 0xFF
        b[8] = 0x80 | ((seq >> 14) & 0x3F)
        b[9] = (seq >> 6) & 0xFF
        b[10] = ((seq << 2) & 0xFF) | (rnds[10] & 0x03)
        b[11:16] = rnds[11:16]
        h = b.hex()
        return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


new_session_id = _Uuid7()
new_session_id.__doc__ = (
    "A new session id: a UUIDv7 (``01a228af-d835-700c-...``), monotonic within the process."
)


def iso_from_ms(ms: int) -> str:
    """``Date.toISOString()``: ``2026-11-29T19:02:30.908Z``."""
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def iso_now() -> str:
    """The current time as ``Date.toISOString()`` writes it."""
    return iso_from_ms(time.time_ns() // 1_000_000)


_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$")


def ms_from_iso(text: Any) -> int | None:
    """``new Date(text).getTime()`` for ISO timestamps; ``None`` when it is not one."""
    if not isinstance(text, str):
        return None
    m = _ISO.match(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac = m.group(7) or "0"
    millis = int((frac + "00")[:3])
    try:
        import calendar

        seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (OverflowError, ValueError):
        return None
    zone = m.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds * 1000 + millis


# ---------------------------------------------------------------------------
# Header
# ---------------------------------------------------------------------------


class SessionHeader:
    """The first line of a session file: ``{"type":"session","version":3,"id","timestamp","cwd"[,"parentSession"]}``."""

    __slots__ = ("line", "raw")

    def __init__(self, raw: dict[str, Any], line: bytes | None = None) -> None:
        self.raw = raw
        self.line = line if line is not None else jsonio.dumpb(raw) + b"\n"

    @classmethod
    def new(
        cls, session_id: str, timestamp: str, cwd: str, parent_session: str | None = None
    ) -> SessionHeader:
        raw: dict[str, Any] = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": session_id,
            "timestamp": timestamp,
            "cwd": cwd,
        }
        if parent_session is not None:
            raw["parentSession"] = parent_session
        return cls(raw)

    @property
    def type(self) -> str:
        return "session"

    @property
    def id(self) -> str:
        return str(self.raw.get("id", ""))

    @property
    def version(self) -> int | None:
        """1 to 3 (1 when the header has none), or ``None`` for a version piko does not know."""
        return session_version(self.raw.get("version"))

    @property
    def timestamp(self) -> str:
        value = self.raw.get("timestamp")
        return value if isinstance(value, str) else ""

    @property
    def cwd(self) -> str:
        value = self.raw.get("cwd")
        return value if isinstance(value, str) else ""

    @property
    def parent_session(self) -> str | None:
        """The session this one was forked or branched from (``parentSession``; ``branchedFrom`` before v2)."""
        value = self.raw.get("parentSession", self.raw.get("branchedFrom"))
        return value if isinstance(value, str) else None

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __repr__(self) -> str:
        return f"SessionHeader({self.raw!r})"


# ---------------------------------------------------------------------------
# Entries
# ---------------------------------------------------------------------------


_ABSENT = object()


class EntryParseError(ValueError):
    """A line that is not a usable session entry (invalid JSON, not an object, no id or type)."""


class SessionEntry:
    """One line of a session file after the header; the base of the typed entries.

    ``type``, ``id``, ``parent_id`` and ``timestamp`` are plain attributes; ``raw`` is the whole
    JSON object (key order as on disk; parsed on first use); ``line`` the exact bytes of the
    line, newline included. Entries are treated as immutable once created.
    """

    TYPE: ClassVar[str] = ""
    __slots__ = ("_raw", "id", "line", "parent_id", "timestamp", "type")

    def __init__(
        self,
        type: str,
        id: str,
        parent_id: str | None,
        timestamp: str,
        line: bytes,
        raw: dict[str, Any] | None = None,
    ) -> None:
        self.type = type
        self.id = id
        self.parent_id = parent_id
        self.timestamp = timestamp
        self.line = line
        self._raw = raw

    @property
    def raw(self) -> dict[str, Any]:
        """The entry's JSON object (pi's entry object), parsed from the line on first use."""
        raw = self._raw
        if raw is None:
            raw = _parse_object(self.line)
            if self._keep_raw():
                self._raw = raw
        return raw

    def _keep_raw(self) -> bool:
        return True

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the JSON object by its wire (camelCase) name."""
        return self.raw.get(key, default)

    def __getitem__(self, key: str) -> Any:
        """``entry["type"]``, ``entry["message"]``, ``entry["customType"]``: as pi's entry objects read."""
        from piko.lib.text import snake

        value = getattr(self, snake(key), _ABSENT) if isinstance(key, str) else _ABSENT
        if value is _ABSENT:
            value = self.raw.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def to_json(self) -> dict[str, Any]:
        """The JSON object (a copy-free view: do not modify it)."""
        return self.raw

    def _str(self, key: str) -> str:
        value = self.raw.get(key)
        return value if isinstance(value, str) else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, parent_id={self.parent_id!r}, type={self.type!r})"


class MessageEntry(SessionEntry):
    """``{"type":"message",...,"message":AgentMessage}``; ``message`` is structured on first use."""

    TYPE = "message"
    __slots__ = ("_message", "role")

    def __init__(
        self,
        id: str,
        parent_id: str | None,
        timestamp: str,
        line: bytes,
        raw: dict[str, Any] | None = None,
        role: str = "",
        message: Any = None,
    ) -> None:
        super().__init__("message", id, parent_id, timestamp, line, raw)
        self.role = role
        self._message = message

    def _keep_raw(self) -> bool:
        return False  # large; the structured message is what is kept

    @property
    def message(self) -> Any:
        """The :mod:`piko.data.messages` object (``UserMessage``, ``AssistantMessage``...)."""
        message = self._message
        if message is None:
            raw = self._raw if self._raw is not None else _parse_object(self.line)
            wire = raw.get("message")
            if not isinstance(wire, dict):
                raise EntryParseError(f"entry {self.id} has no message object")
            message = self._message = message_from_wire(wire)
            self._raw = None
        return message


def readable_message(entry: Any) -> Any:
    """The message of a message entry, or ``None`` for other entries and for a message line that
    cannot be read (a damaged line: building the context reports it)."""
    if not isinstance(entry, MessageEntry):
        return None
    try:
        return entry.message
    except Exception:
        return None


class ModelChangeEntry(SessionEntry):
    """``{"type":"model_change",...,"provider","modelId"}``."""

    TYPE = "model_change"
    __slots__ = ()

    @property
    def provider(self) -> str:
        return self._str("provider")

    @property
    def model_id(self) -> str:
        return self._str("modelId")


class ThinkingLevelChangeEntry(SessionEntry):
    """``{"type":"thinking_level_change",...,"thinkingLevel"}``."""

    TYPE = "thinking_level_change"
    __slots__ = ()

    @property
    def thinking_level(self) -> str:
        return self._str("thinkingLevel")


class _SummaryEntry(SessionEntry):
    """What compaction and branch-summary entries share: ``summary``, ``details``, ``fromHook``."""

    __slots__ = ()

    @property
    def summary(self) -> str:
        return self._str("summary")

    @property
    def details(self) -> Any:
        return self.raw.get("details")

    @property
    def from_hook(self) -> bool | None:
        return self.raw.get("fromHook")


class CompactionEntry(_SummaryEntry):
    """``{"type":"compaction",...,"summary","firstKeptEntryId","tokensBefore"[,"details"][,"fromHook"]}``."""

    TYPE = "compaction"
    __slots__ = ()

    @property
    def first_kept_entry_id(self) -> str | None:
        value = self.raw.get("firstKeptEntryId")
        return value if isinstance(value, str) else None

    @property
    def tokens_before(self) -> int:
        value = self.raw.get("tokensBefore")
        return value if isinstance(value, int) else int(value) if isinstance(value, float) else 0


class BranchSummaryEntry(_SummaryEntry):
    """``{"type":"branch_summary",...,"fromId","summary"[,"details"][,"fromHook"]}``."""

    TYPE = "branch_summary"
    __slots__ = ()

    @property
    def from_id(self) -> str:
        return self._str("fromId")


class CustomEntry(SessionEntry):
    """Extension state, not part of the context: ``{"type":"custom","customType","data",...}``."""

    TYPE = "custom"
    __slots__ = ()

    @property
    def custom_type(self) -> str:
        return self._str("customType")

    @property
    def data(self) -> Any:
        return self.raw.get("data")


class CustomMessageEntry(SessionEntry):
    """An extension message in the context: ``{"type":"custom_message","customType","content","display",...}``."""

    TYPE = "custom_message"
    __slots__ = ()

    @property
    def custom_type(self) -> str:
        return self._str("customType")

    @property
    def content(self) -> Any:
        """A string or content blocks (``TextContent``/``ImageContent``)."""
        value = self.raw.get("content")
        return blocks_from_wire(value) if isinstance(value, list) else value

    @property
    def display(self) -> bool:
        return bool(self.raw.get("display"))

    @property
    def details(self) -> Any:
        return self.raw.get("details")


class LabelEntry(SessionEntry):
    """A bookmark on another entry: ``{"type":"label",...,"targetId","label"}`` (no ``label``: cleared)."""

    TYPE = "label"
    __slots__ = ()

    @property
    def target_id(self) -> str:
        return self._str("targetId")

    @property
    def label(self) -> str | None:
        value = self.raw.get("label")
        return value if isinstance(value, str) else None


class SessionInfoEntry(SessionEntry):
    """Session metadata: ``{"type":"session_info",...,"name"}``."""

    TYPE = "session_info"
    __slots__ = ()

    @property
    def name(self) -> str | None:
        value = self.raw.get("name")
        return value if isinstance(value, str) else None


_ENTRY_CLASSES: dict[str, type[SessionEntry]] = {
    cls.TYPE: cls
    for cls in (
        ModelChangeEntry,
        ThinkingLevelChangeEntry,
        CompactionEntry,
        BranchSummaryEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        SessionInfoEntry,
    )
}


# ---------------------------------------------------------------------------
# Reading lines
# ---------------------------------------------------------------------------

# pi writes the tree fields first (custom entries excepted); a message line then starts its
# message with the role. Ids and timestamps never contain quotes or backslashes.
ENTRY_PREFIX = _PREFIX = re.compile(
    rb'\{"type":"([^"\\]+)","id":"([^"\\]+)","parentId":(?:null|"([^"\\]*)"),"timestamp":"([^"\\]*)"'
    rb'(?:,"message":\{"role":"([^"\\]*)")?'
)


def _parse_object(line: bytes) -> dict[str, Any]:
    try:
        value = jsonio.loads(line)
    except ValueError:
        # what JSON.parse accepts and orjson does not: lone surrogate escapes, and bad UTF-8,
        # which pi reads as U+FFFD as it reads the file as UTF-8
        try:
            value = jsonio.loads(line.decode("utf-8", errors="replace"), lenient=True)
        except ValueError as exc:
            raise EntryParseError(f"invalid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise EntryParseError(f"not a JSON object ({type(value).__name__})")
    return value


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
    cls = _ENTRY_CLASSES.get(entry_type, SessionEntry)
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
    raw = _parse_object(line)
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
                entry.line = line
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


def _jsonable(value: Any) -> Any:
    """``value`` with what JSON cannot hold made plain: data-model objects by their wire form,
    tuples and sets as lists, anything else as its string (as ``JSON.stringify`` never fails)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    wire = to_wire(value)
    return str(value) if wire is value else _jsonable(wire)


def new_entry(entry_type: str, raw: dict[str, Any], message: Any = None) -> SessionEntry:
    """An entry piko creates (``raw`` in pi's key order); serialized now."""
    try:
        line = jsonio.dumpb(raw) + b"\n"
    except TypeError:
        raw = _jsonable(raw)
        line = jsonio.dumpb(raw) + b"\n"
    if entry_type == "message":
        wire = raw["message"]
        role = wire.get("role", "") if isinstance(wire, dict) else ""
        return MessageEntry(raw["id"], raw["parentId"], raw["timestamp"], line, None, role, message)
    cls = _ENTRY_CLASSES.get(entry_type, SessionEntry)
    return cls(entry_type, raw["id"], raw["parentId"], raw["timestamp"], line, raw)
