"""Truncation shared by the tools: keep the head (read) or the tail (bash) of long output.

Two limits apply, whichever is hit first: 2000 lines and 50 KB (UTF-8 bytes). Whole lines only,
except tail truncation of a single line longer than the byte limit, which keeps its end.
Grep match lines are cut at 500 characters. The numbers and notices are pi's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from piko.lib.jsnumbers import format_size
from piko.lib.records import Record

if TYPE_CHECKING:
    from piko.data.messages import ToolResult

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500
NO_LINE_LIMIT = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER: the listing tools cut by size only

Notice = tuple[str, str, Any]
"""A listing's notice: its text, and the ``details`` key and value that say the same."""


class TruncationResult(Record):
    """What was kept and why (``truncated_by`` is ``"lines"``, ``"bytes"`` or ``None``)."""

    content: str
    truncated: bool
    truncated_by: str | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES

    def to_details(self) -> dict[str, Any]:
        """The camelCase form tools put in ``details.truncation``: every field, in order, as the
        data model writes a record."""
        from piko.data.wire import record_to_wire

        return record_to_wire(self)


def byte_length(text: str) -> int:
    """UTF-8 length of ``text`` (lone surrogates count as 3 bytes, as JavaScript replaces them)."""
    return len(text.encode("utf-8", "surrogatepass"))


def truncation_result(
    kept: list[str],
    truncated_by: str | None,
    totals: tuple[int, int],
    limits: tuple[int, int],
    **flags: bool,
) -> TruncationResult:
    """The result keeping the lines ``kept`` of a text of ``totals`` (lines, bytes) under ``limits``
    (lines, bytes); ``truncated_by`` ``None`` keeps it all."""
    output = "\n".join(kept)
    return TruncationResult(
        content=output,
        truncated=truncated_by is not None,
        truncated_by=truncated_by,
        total_lines=totals[0],
        total_bytes=totals[1],
        output_lines=len(kept),
        output_bytes=totals[1] if truncated_by is None else byte_length(output),
        max_lines=limits[0],
        max_bytes=limits[1],
        **flags,
    )


# What a way of cutting keeps of the lines: (kept lines in order, the limit hit: "lines" or "bytes", flags).
_Kept = tuple[list[str], str, dict[str, bool]]


def _truncate(
    content: str, max_lines: int, max_bytes: int, keep: Callable[[list[str], int, int], _Kept]
) -> TruncationResult:
    """``content`` whole when it fits both limits, else the lines ``keep`` chooses."""
    lines = content.split("\n")
    totals, limits = (len(lines), byte_length(content)), (max_lines, max_bytes)
    if totals[0] <= max_lines and totals[1] <= max_bytes:
        return truncation_result(lines, None, totals, limits)
    kept, truncated_by, flags = keep(lines, max_lines, max_bytes)
    return truncation_result(kept, truncated_by, totals, limits, **flags)


def _limit_hit(kept: list[str], used: int, truncated_by: str, max_lines: int, max_bytes: int) -> str:
    """``lines`` when the kept lines are as many as allowed within the byte limit, else ``truncated_by``."""
    return "lines" if len(kept) >= max_lines and used <= max_bytes else truncated_by


def _keep_head(lines: list[str], max_lines: int, max_bytes: int) -> _Kept:
    if byte_length(lines[0]) > max_bytes:
        return [], "bytes", {"first_line_exceeds_limit": True}
    kept: list[str] = []
    used = 0
    truncated_by = "lines"
    for i, line in enumerate(lines[:max_lines]):
        size = byte_length(line) + (1 if i > 0 else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    return kept, _limit_hit(kept, used, truncated_by, max_lines, max_bytes), {}


def _keep_tail(lines: list[str], max_lines: int, max_bytes: int) -> _Kept:
    kept: list[str] = []
    used = 0
    truncated_by = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = byte_length(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                piece = _tail_bytes(line, max_bytes)
                kept.append(piece)
                used = byte_length(piece)
                partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    return kept, _limit_hit(kept, used, truncated_by, max_lines, max_bytes), {"last_line_partial": partial}


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first lines that fit both limits; never a partial line."""
    return _truncate(content, max_lines, max_bytes, _keep_head)


def _tail_bytes(text: str, max_bytes: int) -> str:
    """The end of ``text`` within ``max_bytes``, starting on a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the last lines that fit both limits (a lone over-long last line keeps its end)."""
    return _truncate(content, max_lines, max_bytes, _keep_tail)


def listing_result(lines: list[str], limit_notice: Notice | None, *more: Notice | None) -> ToolResult:
    """The answer of a listing tool (ls, find, grep): its lines cut at 50 KB, then in brackets the
    notices that apply (``None`` for one that does not): the result limit's, the size limit's, then
    ``more``; ``details`` holds what they say, or is ``None``."""
    from piko.data.messages import TextContent
    from piko.data.messages import ToolResult

    truncation = truncate_head("\n".join(lines), max_lines=NO_LINE_LIMIT)
    size_notice = None
    if truncation.truncated:
        size_notice = (
            f"{format_size(DEFAULT_MAX_BYTES)} limit reached",
            "truncation",
            truncation.to_details(),
        )
    applying = [notice for notice in (limit_notice, size_notice, *more) if notice is not None]
    output = truncation.content
    if applying:
        output += f"\n\n[{'. '.join(text for text, _key, _value in applying)}]"
    details = {key: value for _text, key, value in applying}
    return ToolResult(content=[TextContent(text=output)], details=details or None)


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut a grep match line at ``max_chars`` characters, marking it ``... [truncated]``."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
