"""Content blocks that grow while a response streams, in time linear in their size.

A provider's deltas are appended to these blocks as pieces; a block's ``text``, ``thinking``
or ``arguments`` is joined (or, for a tool call, parsed) only when somebody reads it, and the
result is kept until more pieces arrive. So a 300 KB ``write`` call that arrives as 25,000
deltas costs 25,000 list appends and one join and parse at the end, unless a consumer reads the
partial arguments (an extension on ``message_update``, the interactive renderer at its frame
rate), which pays for what it reads.

The blocks are subclasses of the data model's blocks (``isinstance(block, TextContent)``
holds, and ``to_wire`` writes them alike); :func:`settled` turns one into its plain class once
it is complete, so finished messages hold plain blocks only. :data:`WORK` counts what was
joined and parsed, for tests that check the assembly stays linear.
"""

from __future__ import annotations

import json
from typing import Any
from typing import Generic
from typing import TypeVar

import attrs

from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.lib.partial_json import NestingScan
from piko.lib.partial_json import parse_scanned

Plain = TypeVar("Plain")


class StreamWork:
    """Characters joined and parsed while assembling streamed content (for linearity checks)."""

    __slots__ = ("chars_joined", "chars_parsed", "parses")

    def __init__(self) -> None:
        self.chars_joined = 0
        self.chars_parsed = 0
        self.parses = 0

    def reset(self) -> None:
        self.chars_joined = self.chars_parsed = self.parses = 0


WORK = StreamWork()
"""The process-wide counts (they change per join or parse, not per delta)."""


class GrowingText:
    """A string built by appending pieces: O(1) per append, joined when read.

    Every ``COMPACT_EVERY`` pieces are joined into one run, so a million 12-character deltas
    hold about a byte per character instead of a small string object each (61 bytes); each
    character is copied at most twice before it is read.
    """

    __slots__ = ("_joined", "_pieces", "_runs")
    COMPACT_EVERY = 1024

    def __init__(self, text: str = "") -> None:
        self._joined = text
        self._runs: list[str] = []
        self._pieces: list[str] = []

    def append(self, piece: str) -> None:
        if piece:
            pieces = self._pieces
            pieces.append(piece)
            if len(pieces) >= self.COMPACT_EVERY:
                run = "".join(pieces)
                pieces.clear()
                self._runs.append(run)
                WORK.chars_joined += len(run)

    def __str__(self) -> str:
        if self._runs or self._pieces:
            self._joined = "".join([self._joined, *self._runs, *self._pieces])
            self._runs.clear()
            self._pieces.clear()
            WORK.chars_joined += len(self._joined)
        return self._joined

    def __len__(self) -> int:
        return len(self._joined) + sum(map(len, self._runs)) + sum(map(len, self._pieces))


class GrowingJson:
    """A JSON object's text, appended piece by piece, parsed (best effort) only when read.

    The nesting state of what was scanned is kept, so each read scans only the new text; the
    parsed value is kept until more text arrives. While the text does not parse, the last
    value that did is the answer (``{}`` at first).
    """

    __slots__ = ("_parsed", "_parsed_length", "_scan", "_text")

    def __init__(self) -> None:
        self._text = GrowingText()
        self._scan: NestingScan | None = None
        self._parsed: dict[str, Any] = {}
        self._parsed_length = 0

    def append(self, piece: str) -> None:
        self._text.append(piece)

    def __len__(self) -> int:
        return len(self._text)

    @property
    def text(self) -> str:
        return str(self._text)

    def value(self) -> dict[str, Any]:
        """The object as far as it parses."""
        text = str(self._text)
        if len(text) == self._parsed_length:
            return self._parsed
        WORK.parses += 1
        WORK.chars_parsed += len(text)
        self._parsed_length = len(text)
        stripped = text.lstrip()
        if not stripped.rstrip():
            self._parsed = {}
            return self._parsed
        # leading blanks stay as they are once something else arrived, so positions in the
        # stripped text are stable and the scan resumes where the last read stopped
        scan = self._scan
        if scan is None:
            scan = self._scan = NestingScan()
        scan.scan(stripped)
        parsed: dict[str, Any] | None = None
        if not scan.in_string and not scan.stack:
            try:
                value = json.loads(stripped)
                parsed = value if isinstance(value, dict) else None
            except ValueError:
                parsed = parse_scanned(stripped, scan)
        else:
            parsed = parse_scanned(stripped, scan)
        if parsed is not None:
            self._parsed = parsed
        return self._parsed


# ---------------------------------------------------------------------------
# The blocks
# ---------------------------------------------------------------------------


class _Settles(Generic[Plain]):
    """A streaming block's :meth:`settled`: the plain class it grows into, every field copied."""

    __slots__ = ()

    def settled(self) -> Plain:
        plain = STREAMING_BLOCKS[type(self)]
        return plain(**{f.name: getattr(self, f.name) for f in attrs.fields(plain)})  # type: ignore[no-any-return]


def _growing_field() -> Any:
    """A block's text field kept as a :class:`GrowingText`: assigning starts it over, reading
    joins it."""

    def read(block: StreamingTextContent | StreamingThinkingContent) -> str:
        return str(block._growing)

    def write(block: StreamingTextContent | StreamingThinkingContent, value: str) -> None:
        block._growing = GrowingText(value)

    return property(read, write)


class _GrowingBlock:
    """What the streaming text and thinking blocks share: the growing text, and ``append``."""

    __slots__ = ()
    _growing: GrowingText

    def append(self, delta: str) -> None:
        self._growing.append(delta)


class StreamingTextContent(_GrowingBlock, _Settles[TextContent], TextContent):
    """A text block being streamed: ``append(delta)``; ``text`` is joined when read."""

    __slots__ = ("_growing",)
    text = _growing_field()


class StreamingThinkingContent(_GrowingBlock, _Settles[ThinkingContent], ThinkingContent):
    """A thinking block being streamed: ``append(delta)``; ``thinking`` is joined when read."""

    __slots__ = ("_growing",)
    thinking = _growing_field()


class StreamingToolCall(_Settles[ToolCall], ToolCall):
    """A tool call whose arguments are streaming: ``append_json(fragment)``; ``arguments`` is
    parsed from the JSON so far when read (and kept until more arrives).

    Assigning ``arguments`` sets them outright (a provider that sends whole arguments) until
    more JSON arrives.
    """

    __slots__ = ("_assigned", "_assigned_at", "_json")
    _assigned: dict[str, Any]
    _assigned_at: int
    _json: GrowingJson

    @property  # type: ignore[override]
    def arguments(self) -> dict[str, Any]:
        if len(self._json) == self._assigned_at:
            return self._assigned
        return self._json.value()

    @arguments.setter
    def arguments(self, value: dict[str, Any]) -> None:
        try:
            growing = self._json
        except AttributeError:  # the first assignment, from __init__
            growing = self._json = GrowingJson()
        self._assigned = value
        self._assigned_at = len(growing)

    def append_json(self, fragment: str) -> None:
        self._json.append(fragment)

    def replace_json(self, text: str) -> None:
        """Start the arguments' JSON over with ``text`` (a provider that resent them whole)."""
        self._json = GrowingJson()
        self._json.append(text)
        self._assigned_at = -1

    @property
    def partial_json(self) -> str:
        """The arguments' JSON text as streamed so far."""
        return self._json.text


STREAMING_BLOCKS: dict[type, Any] = {
    StreamingTextContent: TextContent,
    StreamingThinkingContent: ThinkingContent,
    StreamingToolCall: ToolCall,
}
"""Each streaming block class and the plain class it settles into."""


def settled(block: Any) -> Any:
    """``block`` as its plain data-model class (itself when it is not a streaming block)."""
    settle = getattr(block, "settled", None)
    return settle() if settle is not None and type(block) in STREAMING_BLOCKS else block


def settle_content(content: list[Any]) -> None:
    """Replace every streaming block of a message's ``content`` with its plain form, in place."""
    for index, block in enumerate(content):
        if type(block) in STREAMING_BLOCKS:
            content[index] = block.settled()
