"""Server-sent events decoding shared by the provider plugins (no vendor SDKs)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from attrs import define


@define(slots=True)
class SSEEvent:
    """One event: its ``event`` name (``None`` when the stream names none) and its ``data`` text."""

    event: str | None
    data: str
    id: str | None = None


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SSEEvent]:
    """Events from the lines of an SSE body (``response.aiter_lines()``).

    Follows the WHATWG rules that matter here: ``data`` lines of one event are joined with
    newlines, comment lines (``:``) are skipped, one leading space after the colon is dropped,
    and an event is complete at a blank line (or at the end of the stream).
    """
    event: str | None = None
    data: list[str] = []
    event_id: str | None = None
    async for raw in lines:
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line:
            if data:
                yield SSEEvent(event, "\n".join(data), event_id)
            event, data = None, []
            continue
        if line[0] == ":":
            continue
        name, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id":
            event_id = value
    if data:
        yield SSEEvent(event, "\n".join(data), event_id)
