"""msgspec's typed decoding of the message lines pi writes most, straight into the data model.

A session's user, assistant and tool-result message lines are decoded here by msgspec into
``Struct`` mirrors of the wire classes (messages tagged by ``role``, blocks by ``type``,
camelCase names), in C, then built into the attrs classes of :mod:`piko.data.messages`.
``benchmarks/bench_decoders.py`` measures the 100,000 message lines of a never-compacted
session: 0.99 s CPU through ``orjson.loads`` and cattrs (:mod:`piko.data.wire`), 0.62 s this
way (msgspec alone into its Structs: 0.37 s; ``orjson.loads`` alone, no objects made: 0.50 s).

The mirrors accept a subset of what the cattrs path does: a key they do not declare (kept in
``extra`` there), a block of another type, a value of another JSON type or a role they do not
know is refused (``forbid_unknown_fields`` and strict types), and :func:`decode_message_line`
returns ``None`` for the caller to take the cattrs path. For every line msgspec accepts, the
object is equal to the one the cattrs path makes (``tests/session/test_fast_decode.py`` checks
this against every session fixture, field by field of the mirrors against the attrs classes).

msgspec costs about 5 ms to import (it brings ``decimal`` and ``typing_extensions``), so this
module is imported only where many messages are decoded at once
(:func:`piko.sessions.reading.decode_messages`); a short session never imports it.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

import msgspec

from piko.data import messages as model

__all__ = ["decode_message_line"]


class _Block(msgspec.Struct, tag_field="type", rename="camel", forbid_unknown_fields=True):
    pass


class _Text(_Block, tag="text"):
    text: str = ""
    text_signature: str | None = None


class _Thinking(_Block, tag="thinking"):
    thinking: str = ""
    thinking_signature: str | None = None
    redacted: bool | None = None


class _Image(_Block, tag="image"):
    data: str = ""
    mime_type: str = "image/png"


class _ToolCall(_Block, tag="toolCall"):
    id: str = ""
    name: str = ""
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    thought_signature: str | None = None


class _Cost(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0
    total_from_provider: bool | None = None


class _Usage(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None
    total_tokens: int = 0
    cost: _Cost = msgspec.field(default_factory=_Cost)


class _Message(msgspec.Struct, tag_field="role", rename="camel", forbid_unknown_fields=True):
    pass


class _User(_Message, tag="user"):
    content: str | list[_Text | _Image] = msgspec.field(default_factory=list)
    timestamp: int = 0


class _Assistant(_Message, tag="assistant"):
    content: list[_Text | _Thinking | _ToolCall] = msgspec.field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: _Usage = msgspec.field(default_factory=_Usage)
    stop_reason: Literal["pending", "stop", "length", "toolUse", "error", "aborted"] = "stop"
    timestamp: int = 0
    response_id: str | None = None
    response_model: str | None = None
    error_message: str | None = None
    raw_stop_reason: str | None = None
    duration_ms: int | None = None
    thinking_level: str | None = None


class _ToolResult(_Message, tag="toolResult"):
    tool_call_id: str = ""
    tool_name: str = ""
    content: list[_Text | _Image] = msgspec.field(default_factory=list)
    details: Any = None
    is_error: bool = False
    duration_ms: int | None = None
    timestamp: int = 0


class _Entry(msgspec.Struct):
    """A message entry line: only its message is read here (the tree fields come from the scan)."""

    message: _User | _Assistant | _ToolResult


MIRRORS: dict[type, type] = {
    model.TextContent: _Text,
    model.ThinkingContent: _Thinking,
    model.ImageContent: _Image,
    model.ToolCall: _ToolCall,
    model.Cost: _Cost,
    model.Usage: _Usage,
    model.UserMessage: _User,
    model.AssistantMessage: _Assistant,
    model.ToolResultMessage: _ToolResult,
}
"""Each data-model class decoded here and its mirror (the test compares their fields)."""

_decode = msgspec.json.Decoder(_Entry).decode


def _block(block: Any) -> Any:
    if type(block) is _Text:
        return model.TextContent(text=block.text, text_signature=block.text_signature)
    if type(block) is _ToolCall:
        return model.ToolCall(
            id=block.id, name=block.name, arguments=block.arguments, thought_signature=block.thought_signature
        )
    if type(block) is _Thinking:
        return model.ThinkingContent(
            thinking=block.thinking, thinking_signature=block.thinking_signature, redacted=block.redacted
        )
    return model.ImageContent(data=block.data, mime_type=block.mime_type)


def _assistant(message: _Assistant) -> model.AssistantMessage:
    usage, cost = message.usage, message.usage.cost
    return model.AssistantMessage(
        content=[_block(b) for b in message.content],
        api=message.api,
        provider=message.provider,
        model=message.model,
        usage=model.Usage(
            input=usage.input,
            output=usage.output,
            cache_read=usage.cache_read,
            cache_write=usage.cache_write,
            reasoning=usage.reasoning,
            total_tokens=usage.total_tokens,
            cost=model.Cost(
                input=cost.input,
                output=cost.output,
                cache_read=cost.cache_read,
                cache_write=cost.cache_write,
                total=cost.total,
                total_from_provider=cost.total_from_provider,
            ),
        ),
        stop_reason=message.stop_reason,
        timestamp=message.timestamp,
        response_id=message.response_id,
        response_model=message.response_model,
        error_message=message.error_message,
        raw_stop_reason=message.raw_stop_reason,
        duration_ms=message.duration_ms,
        thinking_level=message.thinking_level,
    )


def _message(message: Any) -> Any:
    if type(message) is _Assistant:
        return _assistant(message)
    if type(message) is _ToolResult:
        return model.ToolResultMessage(
            tool_call_id=message.tool_call_id,
            tool_name=message.tool_name,
            content=[_block(b) for b in message.content],
            details=message.details,
            is_error=message.is_error,
            duration_ms=message.duration_ms,
            timestamp=message.timestamp,
        )
    content = message.content
    return model.UserMessage(
        content=content if isinstance(content, str) else [_block(b) for b in content],
        timestamp=message.timestamp,
    )


def decode_message_line(line: bytes) -> Any | None:
    """The data-model message of a message entry's line, or ``None`` when the line is not one
    the mirrors take whole (then :mod:`piko.data.wire`'s path decides, as for any line)."""
    try:
        return _message(_decode(line).message)
    except Exception:  # whatever msgspec does not take whole goes the cattrs way
        return None
