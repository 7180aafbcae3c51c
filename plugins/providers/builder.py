"""Assembles a streaming assistant message and the events that announce each change.

Every provider API plugin feeds what its wire format says (text, thinking, tool call pieces,
usage, stop reason) into a :class:`MessageBuilder`, which keeps ``message`` (the partial
:class:`~piko.messages.AssistantMessage`, the same object throughout, as pi's) and returns the
:class:`~piko.streaming.StreamEvent` to yield. It also computes cost from the model's prices.
"""

from __future__ import annotations

import json
import time
from typing import Any

from piko.messages import (
    AssistantMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from piko.streaming import StreamEvent


def now_ms() -> int:
    return int(time.time() * 1000)


def parse_partial_json(text: str) -> dict[str, Any] | None:
    """Best effort on an incomplete JSON object: close open strings, arrays and objects."""
    if not text.strip():
        return {}
    text = text.lstrip()  # trailing blanks may sit inside an unterminated string
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else None
    except ValueError:
        pass
    stack: list[str] = []
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    candidate = text
    if escaped:
        candidate = candidate[:-1]
    if in_string:
        candidate += '"'
    for _ in range(3):
        attempt = candidate.rstrip().rstrip(",").rstrip(":")
        if attempt.endswith('"') and attempt.count('"') % 2 == 1:
            attempt = attempt[:-1]
        try:
            value = json.loads(attempt + "".join(reversed(stack)))
            return value if isinstance(value, dict) else None
        except ValueError:
            # drop a dangling key or value and try again
            cut = max(attempt.rfind(","), attempt.rfind("{"), attempt.rfind("["))
            if cut <= 0:
                return None
            candidate = attempt[: cut + (0 if attempt[cut] == "," else 1)]
    return None


class MessageBuilder:
    """The partial message of one response, and events describing its growth."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.message = AssistantMessage(
            api=model.api, provider=model.provider, model=model.id, usage=Usage(), timestamp=now_ms()
        )
        self._tool_json: dict[int, str] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> StreamEvent:
        return StreamEvent(type="start", partial=self.message)

    def done(self, reason: str | None = None) -> StreamEvent:
        """The final event; ``reason`` defaults to ``toolUse`` when tool calls exist, else ``stop``."""
        if reason is None:
            reason = "toolUse" if any(isinstance(b, ToolCall) for b in self.message.content) else "stop"
        self.message.stop_reason = reason  # type: ignore[assignment]
        return StreamEvent(type="done", reason=reason, message=self.message)

    def error(self, message: str, *, aborted: bool = False) -> StreamEvent:
        reason = "aborted" if aborted else "error"
        self.message.stop_reason = reason  # type: ignore[assignment]
        self.message.error_message = message
        return StreamEvent(type="error", reason=reason, error=self.message)

    # -- text ----------------------------------------------------------------------------------

    def text_start(self, signature: str | None = None) -> tuple[int, StreamEvent]:
        self.message.content.append(TextContent(text="", text_signature=signature))
        index = len(self.message.content) - 1
        return index, StreamEvent(type="text_start", content_index=index, partial=self.message)

    def text_delta(self, index: int, delta: str) -> StreamEvent:
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        block.text += delta
        return StreamEvent(type="text_delta", content_index=index, delta=delta, partial=self.message)

    def text_end(self, index: int, signature: str | None = None) -> StreamEvent:
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        if signature is not None:
            block.text_signature = signature
        return StreamEvent(type="text_end", content_index=index, content=block.text, partial=self.message)

    # -- thinking ------------------------------------------------------------------------------

    def thinking_start(self, *, redacted: bool | None = None) -> tuple[int, StreamEvent]:
        self.message.content.append(ThinkingContent(thinking="", redacted=redacted))
        index = len(self.message.content) - 1
        return index, StreamEvent(type="thinking_start", content_index=index, partial=self.message)

    def thinking_delta(self, index: int, delta: str) -> StreamEvent:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking += delta
        return StreamEvent(type="thinking_delta", content_index=index, delta=delta, partial=self.message)

    def thinking_signature(self, index: int, signature: str, *, append: bool = False) -> None:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking_signature = (block.thinking_signature or "") + signature if append else signature

    def thinking_end(self, index: int, signature: str | None = None) -> StreamEvent:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        if signature is not None:
            block.thinking_signature = signature
        return StreamEvent(
            type="thinking_end", content_index=index, content=block.thinking, partial=self.message
        )

    # -- tool calls ------------------------------------------------------------------------------

    def toolcall_start(
        self, call_id: str, name: str, *, thought_signature: str | None = None
    ) -> tuple[int, StreamEvent]:
        self.message.content.append(
            ToolCall(id=call_id, name=name, arguments={}, thought_signature=thought_signature)
        )
        index = len(self.message.content) - 1
        self._tool_json[index] = ""
        return index, StreamEvent(type="toolcall_start", content_index=index, partial=self.message)

    def toolcall_delta(self, index: int, fragment: str) -> StreamEvent:
        """Append a piece of the arguments' JSON; the partial arguments are updated best effort."""
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        text = self._tool_json.get(index, "") + fragment
        self._tool_json[index] = text
        parsed = parse_partial_json(text)
        if parsed is not None:
            block.arguments = parsed
        return StreamEvent(type="toolcall_delta", content_index=index, delta=fragment, partial=self.message)

    def toolcall_end(self, index: int, arguments: dict[str, Any] | None = None) -> StreamEvent:
        """Finish a tool call; ``arguments`` overrides what the deltas accumulated."""
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        if arguments is not None:
            block.arguments = arguments
        else:
            text = self._tool_json.get(index, "")
            try:
                value = json.loads(text) if text.strip() else {}
                block.arguments = value if isinstance(value, dict) else {}
            except ValueError:
                parsed = parse_partial_json(text)
                block.arguments = parsed if parsed is not None else {}
        self._tool_json.pop(index, None)
        return StreamEvent(type="toolcall_end", content_index=index, tool_call=block, partial=self.message)

    # -- usage -----------------------------------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> None:
        """Record token counts (``None`` keeps the current value) and recompute cost."""
        usage = self.message.usage
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
