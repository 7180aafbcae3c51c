"""Assembles a streaming assistant message and the events that announce each change.

Every provider API plugin feeds what its wire format says (text, thinking, tool call pieces,
usage, stop reason) into a :class:`MessageBuilder`, which keeps ``message`` (the partial
:class:`~piko.data.messages.AssistantMessage`, the same object throughout, as pi's) and returns the
:class:`~piko.data.streaming.StreamEvent` to yield. It also computes cost from the model's prices.

Blocks grow in linear time: while a block streams it is one of :mod:`piko.data.stream_blocks`'
classes, which keep the deltas as pieces and join (or, for tool arguments, parse) them only
when read; when the block ends it is replaced by its plain form.
"""

from __future__ import annotations

import time
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import Usage
from piko.data.stream_blocks import StreamingTextContent
from piko.data.stream_blocks import StreamingThinkingContent
from piko.data.stream_blocks import StreamingToolCall
from piko.data.stream_blocks import settle_content
from piko.data.stream_blocks import settled
from piko.data.streaming import StreamEvent
from piko.lib.partial_json import parse_partial_json
from piko.plugins.providers.json_repair import fast_json_loads

__all__ = ["MessageBuilder", "final_arguments", "now_ms", "parse_partial_json"]


def now_ms() -> int:
    return int(time.time() * 1000)


# The blocks that grow by text deltas: kind (also the field the text is in) -> the streaming
# class, the plain class it settles into, the delta event's type
_GROWING: dict[str, tuple[type[Any], type[Any], str]] = {
    "text": (StreamingTextContent, TextContent, "text_delta"),
    "thinking": (StreamingThinkingContent, ThinkingContent, "thinking_delta"),
}


class MessageBuilder:
    """The partial message of one response, and events describing its growth."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.message = AssistantMessage(
            api=model.api, provider=model.provider, model=model.id, usage=Usage(), timestamp=now_ms()
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> StreamEvent:
        return StreamEvent(type="start", partial=self.message)

    def done(self, reason: str | None = None) -> StreamEvent:
        """The final event; ``reason`` defaults to ``toolUse`` when tool calls exist, else ``stop``."""
        settle_content(self.message.content)
        if reason is None:
            reason = "toolUse" if any(isinstance(b, ToolCall) for b in self.message.content) else "stop"
        self.message.stop_reason = reason  # type: ignore[assignment]
        return StreamEvent(type="done", reason=reason, message=self.message)

    def error(self, message: str, *, aborted: bool = False) -> StreamEvent:
        settle_content(self.message.content)
        reason = "aborted" if aborted else "error"
        self.message.stop_reason = reason  # type: ignore[assignment]
        self.message.error_message = message
        return StreamEvent(type="error", reason=reason, error=self.message)

    # -- blocks ----------------------------------------------------------------------------------

    def _start(self, block: Any, event_type: str) -> tuple[int, StreamEvent]:
        """Append a new streaming block: its index and the ``*_start`` event announcing it."""
        content = self.message.content
        content.append(block)
        index = len(content) - 1
        return index, StreamEvent(type=event_type, content_index=index, partial=self.message)

    def _settle(self, index: int) -> Any:
        """The block at ``index`` in its plain form, put in place of the streaming one."""
        content = self.message.content
        block = content[index] = settled(content[index])
        return block

    def _grow(self, kind: str, index: int, delta: str) -> StreamEvent:
        """Add ``delta`` to the ``kind`` block (text or thinking) at ``index``: its ``*_delta`` event."""
        streaming, plain, event_type = _GROWING[kind]
        block: Any = self.message.content[index]
        if isinstance(block, streaming):
            block.append(delta)
        else:
            assert isinstance(block, plain)
            setattr(block, kind, getattr(block, kind) + delta)
        return StreamEvent(type=event_type, content_index=index, delta=delta, partial=self.message)

    def _end(self, kind: str, index: int, signature: str | None) -> StreamEvent:
        """Settle the ``kind`` block at ``index``, signed with ``signature`` when given: its ``*_end`` event."""
        block = self._settle(index)
        assert isinstance(block, _GROWING[kind][1])
        if signature is not None:
            setattr(block, f"{kind}_signature", signature)
        return StreamEvent(
            type=f"{kind}_end", content_index=index, content=getattr(block, kind), partial=self.message
        )

    # -- text ----------------------------------------------------------------------------------

    def text_start(self, signature: str | None = None) -> tuple[int, StreamEvent]:
        return self._start(StreamingTextContent(text="", text_signature=signature), "text_start")

    def text_delta(self, index: int, delta: str) -> StreamEvent:
        return self._grow("text", index, delta)

    def text_end(self, index: int, signature: str | None = None) -> StreamEvent:
        return self._end("text", index, signature)

    # -- thinking ------------------------------------------------------------------------------

    def thinking_start(self, *, redacted: bool | None = None) -> tuple[int, StreamEvent]:
        return self._start(StreamingThinkingContent(thinking="", redacted=redacted), "thinking_start")

    def thinking_delta(self, index: int, delta: str) -> StreamEvent:
        return self._grow("thinking", index, delta)

    def thinking_signature(self, index: int, signature: str, *, append: bool = False) -> None:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking_signature = (block.thinking_signature or "") + signature if append else signature

    def thinking_end(self, index: int, signature: str | None = None) -> StreamEvent:
        return self._end("thinking", index, signature)

    # -- tool calls ------------------------------------------------------------------------------

    def toolcall_start(
        self, call_id: str, name: str, *, thought_signature: str | None = None
    ) -> tuple[int, StreamEvent]:
        return self._start(
            StreamingToolCall(id=call_id, name=name, arguments={}, thought_signature=thought_signature),
            "toolcall_start",
        )

    def toolcall_delta(self, index: int, fragment: str) -> StreamEvent:
        """Append a piece of the arguments' JSON (parsed only when somebody reads the arguments)."""
        block = self.message.content[index]
        assert isinstance(block, StreamingToolCall)
        block.append_json(fragment)
        return StreamEvent(type="toolcall_delta", content_index=index, delta=fragment, partial=self.message)

    def partial_json(self, index: int) -> str:
        """The JSON text of a streaming tool call's arguments so far (``""`` once it ended)."""
        block = self.message.content[index]
        return block.partial_json if isinstance(block, StreamingToolCall) else ""

    def toolcall_end(self, index: int, arguments: dict[str, Any] | None = None) -> StreamEvent:
        """Finish a tool call; ``arguments`` overrides what the deltas accumulated."""
        content = self.message.content
        block = content[index]
        assert isinstance(block, ToolCall)
        if isinstance(block, StreamingToolCall):
            if arguments is None:
                arguments = final_arguments(block.partial_json)
            block.arguments = arguments  # settled as they are, not parsed again from the deltas
            block = content[index] = block.settled()
        elif arguments is not None:
            block.arguments = arguments
        return StreamEvent(type="toolcall_end", content_index=index, tool_call=block, partial=self.message)

    # -- usage -----------------------------------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        reasoning: int | None = None,
    ) -> None:
        """Record token counts (``None`` keeps the current value) and recompute cost from the
        catalog's prices (``total_from_provider`` False until :meth:`set_billed_cost`).
        ``reasoning`` is the part of ``output`` the provider says was reasoning (pi 1.6)."""
        usage = self.message.usage
        if reasoning is not None:
            usage.reasoning = int(reasoning)
        if input is not None:
            usage.input = int(input)
        if output is not None:
            usage.output = int(output)
        if cache_read is not None:
            usage.cache_read = int(cache_read)
        if cache_write is not None:
            usage.cache_write = int(cache_write)
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        price = self.model.cost
        cost = usage.cost
        # pi's order of operations ((price / 1e6) * tokens), so the floats come out identical
        cost.input = price.input / 1_000_000 * usage.input
        cost.output = price.output / 1_000_000 * usage.output
        cost.cache_read = price.cache_read / 1_000_000 * usage.cache_read
        cost.cache_write = price.cache_write / 1_000_000 * usage.cache_write
        cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
        cost.total_from_provider = False

    def set_billed_cost(self, total: float) -> None:
        """The provider reported what the response cost: ``total`` replaces the catalog estimate
        (the per-kind amounts stay estimates, as in pi 1.6)."""
        cost = self.message.usage.cost
        cost.total = total
        cost.total_from_provider = True


def final_arguments(text: str) -> dict[str, Any]:
    """The arguments of a finished tool call from its whole JSON text: ``{}`` when blank, a
    best-effort parse when it is not complete JSON."""
    if not text.strip():
        return {}
    try:
        value = fast_json_loads(text)
        return value if isinstance(value, dict) else {}
    except ValueError:
        return parse_partial_json(text) or {}
