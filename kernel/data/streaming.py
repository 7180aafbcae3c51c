"""The provider streaming contract: request context, options, and assistant message events.

A provider API's ``stream(model, context, options)`` is an async iterator of
:class:`StreamEvent`: ``start``, then ``text_*``/``thinking_*``/``toolcall_*`` triples per
content block, then exactly one ``done`` or ``error``. Every event but the last carries the
``partial`` message as it stands; ``done`` carries the final ``message`` and ``error`` the
failed one (``stop_reason`` ``error`` or ``aborted``, ``error_message`` set). Providers never
raise for HTTP or network failures: they end with an ``error`` event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import attrs

from piko.data.messages import AssistantMessage
from piko.data.messages import Message
from piko.data.messages import Model
from piko.data.messages import ToolCall
from piko.data.wire import to_wire
from piko.lib.abort import AbortSignal
from piko.lib.records import Record
from piko.lib.records import field


class ToolSpec(Record):
    """A tool as the model sees it."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(factory=lambda: {"type": "object", "properties": {}})
    strict: bool = False  # the tool asked for strict argument checking (OpenAI's strict mode)


class Context(Record):
    """What one provider request is about: system prompt, messages, tools."""

    system_prompt: str | None = None
    messages: list[Message] = field(factory=list)
    tools: list[ToolSpec] = field(factory=list)


class StreamOptions(Record):
    """Options of one provider request (pi's ``SimpleStreamOptions``)."""

    api_key: str | None = None
    signal: AbortSignal | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning: str | None = None  # thinking level: minimal|low|medium|high|xhigh|max; None = off
    thinking_budgets: dict[str, int] | None = None
    cache_retention: str | None = None  # none|short|long; None: PI_CACHE_RETENTION or "short"
    session_id: str | None = None
    cwd: str | None = None  # the session's working folder (a command-backed provider runs there)
    headers: dict[str, str] = field(factory=dict)
    timeout_s: float | None = None
    # before_provider_request: may return a replacement payload
    on_payload: Callable[[Any, Model], Awaitable[Any]] | None = None
    # after_provider_response: status and headers, before the body is read
    on_response: Callable[[int, dict[str, str], Model], Awaitable[None]] | None = None
    extra: dict[str, Any] = field(factory=dict)


@attrs.define(kw_only=True, slots=True)
class StreamEvent:
    """One assistant message event (pi's ``AssistantMessageEvent``)."""

    type: str
    content_index: int | None = None
    delta: str | None = None
    content: str | None = None
    tool_call: ToolCall | None = None
    reason: str | None = None
    partial: AssistantMessage | None = None
    message: AssistantMessage | None = None
    error: AssistantMessage | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON form, keys in pi's order, with the ``partial`` snapshot."""
        out = self._change_wire(name_tool_calls=False)
        if self.partial is not None:
            out["partial"] = to_wire(self.partial)
        if self.message is not None:
            out["message"] = to_wire(self.message)
        if self.error is not None:
            out["error"] = to_wire(self.error)
        return out

    def delta_wire(self) -> dict[str, Any]:
        """The JSON form pi 1.6 streams in ``message_update``: the change alone, no snapshot, so
        a stream's output grows linearly with the message. ``toolcall_start`` names the call
        (``id``, ``toolName``), since no snapshot carries them."""
        return self._change_wire(name_tool_calls=True)

    def _change_wire(self, *, name_tool_calls: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.content_index is not None:
            out["contentIndex"] = self.content_index
            if name_tool_calls and self.type == "toolcall_start" and self.partial is not None:
                content = self.partial.content
                if 0 <= self.content_index < len(content):
                    block = content[self.content_index]
                    out["id"] = getattr(block, "id", "")
                    out["toolName"] = getattr(block, "name", "")
        if self.delta is not None:
            out["delta"] = self.delta
        if self.content is not None:
            out["content"] = self.content
        if self.tool_call is not None:
            out["toolCall"] = to_wire(self.tool_call)
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @property
    def final(self) -> AssistantMessage | None:
        """The finished message of a ``done`` or ``error`` event."""
        return self.message or self.error


StreamFunction = Callable[[Model, Context, StreamOptions], AsyncIterator[StreamEvent]]
