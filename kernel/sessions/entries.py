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
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import ClassVar
from typing import Generic
from typing import TypeVar
from typing import overload

from piko.data.wire import blocks_from_wire
from piko.data.wire import jsonable
from piko.data.wire import message_from_wire
from piko.data.wire import to_wire
from piko.lib import jsonio

__all__ = [
    "CURRENT_SESSION_VERSION",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
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
    "UsageEntry",
    "gc_paused",
    "readable_message",
    "session_version",
]

CURRENT_SESSION_VERSION = 3

T = TypeVar("T")


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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _object_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _as_written(value: Any) -> Any:
    return value


class _Field(Generic[T]):
    """A read-only attribute of a header or an entry: its JSON field ``key`` (by its wire name)
    as ``read`` takes it (a value of the wrong type reads as the empty one)."""

    __slots__ = ("key", "read")

    def __init__(self, key: str, read: Callable[[Any], T]) -> None:
        self.key = key
        self.read = read

    @overload
    def __get__(self, line: None, owner: type) -> _Field[T]: ...
    @overload
    def __get__(self, line: Any, owner: type) -> T: ...
    def __get__(self, line: Any, owner: type) -> _Field[T] | T:
        return self if line is None else self.read(line.raw.get(self.key))


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

    timestamp = _Field("timestamp", _text)
    cwd = _Field("cwd", _text)

    @property
    def parent_session(self) -> str | None:
        """The session this one was forked or branched from (``parentSession``; ``branchedFrom`` before v2)."""
        return _text_or_none(self.raw.get("parentSession", self.raw.get("branchedFrom")))

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


def is_line_of(data: bytes, size: int, entry_id: str) -> bool:
    """Whether ``data``, read where an entry's line of ``size`` bytes was, is still that line."""
    return len(data) == size and data.endswith(b"\n") and f'"id":"{entry_id}"'.encode() in data[:300]


class LineSource:
    """The session file that entries read with their lines left on disk take their bytes from
    (one file descriptor, opened on first use, shared by all of them)."""

    __slots__ = ("_fd", "path", "written")

    def __init__(self, path: str, *, written: bool = False) -> None:
        self.path = path
        self._fd: int | None = None
        #: lines piko wrote itself (the file is held open from the start, and a message entry
        #: whose line cannot be had again is written anew from its message)
        self.written = written
        if written:
            try:
                self._opened()
            except OSError:
                pass  # opened on first use, which reports what is wrong

    def _opened(self) -> int:
        """The file descriptor, opened on first use."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return self._fd

    def is_file_at_path(self) -> bool:
        """Whether the open file is still the one at :attr:`path` (not replaced or removed)."""
        if self._fd is None:
            return False
        try:
            held, current = os.fstat(self._fd), os.stat(self.path)
        except OSError:
            return False
        return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)

    def read(self, at: int, size: int, entry_id: str) -> bytes:
        """The line of ``entry_id`` at ``at``; :class:`EntryParseError` if the file no longer has it there."""
        try:
            data = os.pread(self._opened(), size, at)
        except OSError as exc:
            raise EntryParseError(f"the session file cannot be read again ({exc.strerror or exc})") from None
        if not is_line_of(data, size, entry_id):
            raise EntryParseError("the session file changed on disk since it was opened")
        return data

    def read_span(self, at: int, size: int) -> bytes:
        """``size`` bytes of the file from ``at`` (fewer at its end)."""
        return os.pread(self._opened(), size, at)

    def __del__(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass


class SessionEntry:
    """One line of a session file after the header; the base of the typed entries.

    ``type``, ``id``, ``parent_id`` and ``timestamp`` are plain attributes; ``raw`` is the whole
    JSON object (key order as on disk; parsed on first use); ``line`` the exact bytes of the
    line, newline included: kept in memory, or (message lines of a large file read from disk,
    away from its end) read again from the file when asked for. Entries are treated as
    immutable once created.
    """

    TYPE: ClassVar[str] = ""
    __slots__ = ("_at", "_line", "_raw", "_source", "id", "parent_id", "timestamp", "type")

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
        self._line: bytes | None = line
        self._source: LineSource | None = None
        self._at = 0
        self._raw = raw

    @property
    def line(self) -> bytes:
        """The line's exact bytes, newline included (read from the file if not kept)."""
        line = self._line
        if line is None:
            assert self._source is not None
            size, at = divmod(self._at, OFFSET_SPAN)
            try:
                line = self._source.read(at, size, self.id)
            except EntryParseError:
                line = self._line_anew() if self._source.written else None
                if line is None:
                    raise
        return line

    @line.setter
    def line(self, value: bytes) -> None:
        self._line = value
        self._source = None

    def _line_anew(self) -> bytes | None:
        """The line written again from what is kept in memory, or ``None`` when nothing is."""
        return None

    def leave_on_disk(self, source: LineSource, at: int, size: int) -> None:
        """Forget the line, which ``source`` holds at offset ``at``; it is read back when asked for."""
        self._line = None
        self._source = source
        self._at = size * OFFSET_SPAN + at

    @property
    def raw(self) -> dict[str, Any]:
        """The entry's JSON object (pi's entry object), parsed from the line on first use."""
        raw = self._raw
        if raw is None:
            raw = parse_entry_object(self.line)
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

    def _line_anew(self) -> bytes | None:
        if self._message is None:
            return None
        from piko.lib.redaction import mask_known_in

        raw = {"type": "message", "id": self.id, "parentId": self.parent_id, "timestamp": self.timestamp}
        return entry_line(mask_known_in({**raw, "message": to_wire(self._message)}))[0]

    @property
    def message(self) -> Any:
        """The :mod:`piko.data.messages` object (``UserMessage``, ``AssistantMessage``...)."""
        message = self._message
        if message is None:
            message = self._decode(self._raw if self._raw is not None else parse_entry_object(self.line))
        return message

    def _decode(self, raw: dict[str, Any]) -> Any:
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

    provider = _Field("provider", _text)
    model_id = _Field("modelId", _text)


class ThinkingLevelChangeEntry(SessionEntry):
    """``{"type":"thinking_level_change",...,"thinkingLevel"}``."""

    TYPE = "thinking_level_change"
    __slots__ = ()

    thinking_level = _Field("thinkingLevel", _text)


class _SummaryEntry(SessionEntry):
    """What compaction and branch-summary entries share: ``summary``, ``details``, ``fromHook``."""

    __slots__ = ()

    summary = _Field("summary", _text)
    details = _Field("details", _as_written)
    from_hook: _Field[bool | None] = _Field("fromHook", _as_written)


class CompactionEntry(_SummaryEntry):
    """``{"type":"compaction",...,"summary","firstKeptEntryId","tokensBefore"[,"details"][,"fromHook"]}``."""

    TYPE = "compaction"
    __slots__ = ()

    first_kept_entry_id = _Field("firstKeptEntryId", _text_or_none)

    @property
    def tokens_before(self) -> int:
        value = self.raw.get("tokensBefore")
        return value if isinstance(value, int) else int(value) if isinstance(value, float) else 0

    system_message = _Field("systemMessage", _object_or_none)
    """pi 1.6's checkpoint of the prompt and tools at the compaction (wire form), if any."""


class BranchSummaryEntry(_SummaryEntry):
    """``{"type":"branch_summary",...,"fromId","summary"[,"details"][,"fromHook"]}``."""

    TYPE = "branch_summary"
    __slots__ = ()

    from_id = _Field("fromId", _text)


class UsageEntry(SessionEntry):
    """pi 1.6: model usage that is no assistant message (cache warming...), not in the context:
    ``{"type":"usage",...,"kind","provider","model","usage"}``."""

    TYPE = "usage"
    __slots__ = ()

    kind = _Field("kind", _text)
    usage = _Field("usage", _object_or_none)
    """The usage in its wire form (``input``, ``output``, ``cacheRead``... ``cost``)."""


class ContextEditEntry(SessionEntry):
    """pi 1.6: an edit of what an earlier entry gives the model, on this branch only:
    ``{"type":"context_edit",...,"targetId","replacement":null|{"content":...}}``."""

    TYPE = "context_edit"
    __slots__ = ()

    target_id = _Field("targetId", _text)

    @property
    def removes(self) -> bool:
        """``replacement: null``: the target leaves the context."""
        return "replacement" in self.raw and self.raw["replacement"] is None

    @property
    def replacement_content(self) -> Any:
        """The new content (a string or wire blocks), or None when the edit replaces nothing."""
        value = self.raw.get("replacement")
        return value.get("content") if isinstance(value, dict) else None


class CustomEntry(SessionEntry):
    """Extension state, not part of the context: ``{"type":"custom","customType","data",...}``."""

    TYPE = "custom"
    __slots__ = ()

    custom_type = _Field("customType", _text)
    data = _Field("data", _as_written)


class CustomMessageEntry(SessionEntry):
    """An extension message in the context: ``{"type":"custom_message","customType","content","display",...}``."""

    TYPE = "custom_message"
    __slots__ = ()

    custom_type = _Field("customType", _text)

    @property
    def content(self) -> Any:
        """A string or content blocks (``TextContent``/``ImageContent``)."""
        value = self.raw.get("content")
        return blocks_from_wire(value) if isinstance(value, list) else value

    display = _Field("display", bool)
    details = _Field("details", _as_written)


class LabelEntry(SessionEntry):
    """A bookmark on another entry: ``{"type":"label",...,"targetId","label"}`` (no ``label``: cleared)."""

    TYPE = "label"
    __slots__ = ()

    target_id = _Field("targetId", _text)
    label = _Field("label", _text_or_none)


class SessionInfoEntry(SessionEntry):
    """Session metadata: ``{"type":"session_info",...,"name"}``."""

    TYPE = "session_info"
    __slots__ = ()

    name = _Field("name", _text_or_none)


ENTRY_CLASSES: dict[str, type[SessionEntry]] = {
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
        UsageEntry,
        ContextEditEntry,
    )
}


OFFSET_SPAN = 1 << 40  # ``_at`` holds size * span + offset: one int for both


def parse_entry_object(line: bytes) -> dict[str, Any]:
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


def entry_line(raw: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """The line of an entry piko writes, and the object it holds (what JSON cannot hold made plain)."""
    try:
        return jsonio.dumpb(raw) + b"\n", raw
    except TypeError:
        plain = jsonable(raw)
        return jsonio.dumpb(plain) + b"\n", plain


def new_entry(entry_type: str, raw: dict[str, Any], message: Any = None) -> SessionEntry:
    """An entry piko creates (``raw`` in pi's key order); serialized now."""
    line, raw = entry_line(raw)
    if entry_type == "message":
        wire = raw["message"]
        role = wire.get("role", "") if isinstance(wire, dict) else ""
        return MessageEntry(raw["id"], raw["parentId"], raw["timestamp"], line, None, role, message)
    cls = ENTRY_CLASSES.get(entry_type, SessionEntry)
    return cls(entry_type, raw["id"], raw["parentId"], raw["timestamp"], line, raw)
