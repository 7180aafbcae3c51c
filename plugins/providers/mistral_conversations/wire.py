"""The ``mistral-conversations`` API: Mistral's streaming chat completions, as pi sends them.

Tool call ids are normalised to Mistral's nine alphanumeric characters; thinking chunks
stream as thinking and are replayed as ``thinking`` content; reasoning models get
``prompt_mode: "reasoning"`` or a ``reasoning_effort``; the session id goes in ``x-affinity``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
from piko.data.messages import Message
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.data.streaming import ToolSpec
from piko.lib.jsonio import dumps
from piko.plugins.providers.builder import MessageBuilder
from piko.plugins.providers.builder import parse_partial_json
from piko.plugins.providers.common import AbortGuard
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import base_max_tokens
from piko.plugins.providers.common import clamp_thinking_level
from piko.plugins.providers.common import iter_sse_bytes
from piko.plugins.providers.common import layer_headers
from piko.plugins.providers.common import parse_event_json
from piko.plugins.providers.common import sanitize_surrogates
from piko.plugins.providers.common import stream_message
from piko.plugins.providers.common import transform_messages
from piko.plugins.providers.common import without_sdk_retries
from piko.plugins.providers.replay import NON_VISION_USER_IMAGE_PLACEHOLDER
from piko.plugins.providers.short_hash import short_hash
from piko.plugins.providers.stream_processor import StreamProcessor

if TYPE_CHECKING:
    from piko.plugins.providers.http_client import StreamedResponse

DEFAULT_BASE_URL = "https://api.mistral.ai"
TOOL_CALL_ID_LENGTH = 9
MAX_ERROR_BODY_CHARS = 4000


UNKNOWN_ERROR = "An unknown error occurred"


# ---------------------------------------------------------------------------
# Tool call ids
# ---------------------------------------------------------------------------


def derive_tool_call_id(call_id: str, attempt: int) -> str:
    normalized = re.sub(r"[^a-zA-Z0-9]", "", call_id)
    if attempt == 0 and len(normalized) == TOOL_CALL_ID_LENGTH:
        return normalized
    seed_base = normalized or call_id
    seed = seed_base if attempt == 0 else f"{seed_base}:{attempt}"
    return re.sub(r"[^a-zA-Z0-9]", "", short_hash(seed))[:TOOL_CALL_ID_LENGTH]


def tool_call_id_normalizer() -> Callable[[str], str]:
    """Maps ids to distinct nine-character ids, stable for one request."""
    forward: dict[str, str] = {}
    owners: dict[str, str] = {}

    def normalize(call_id: str) -> str:
        if call_id in forward:
            return forward[call_id]
        attempt = 0
        while True:
            candidate = derive_tool_call_id(call_id, attempt)
            owner = owners.get(candidate)
            if owner is None or owner == call_id:
                forward[call_id] = candidate
                owners[candidate] = call_id
                return candidate
            attempt += 1

    return normalize


# ---------------------------------------------------------------------------
# Request
# ---------------------------------------------------------------------------


def _tool_result_text(text: str, has_images: bool, supports_images: bool, is_error: bool) -> str:
    trimmed = text.strip()
    prefix = "[tool error] " if is_error else ""
    if trimmed:
        suffix = (
            "\n[tool image omitted: model does not support images]"
            if has_images and not supports_images
            else ""
        )
        return f"{prefix}{trimmed}{suffix}"
    if has_images:
        if supports_images:
            return "[tool error] (see attached image)" if is_error else "(see attached image)"
        return f"{prefix}{NON_VISION_USER_IMAGE_PLACEHOLDER}"
    return f"{prefix}(no tool output)"


def to_chat_messages(messages: list[Message], supports_images: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                out.append({"role": "user", "content": sanitize_surrogates(message.content)})
                continue
            had_images = any(isinstance(b, ImageContent) for b in message.content)
            content: list[dict[str, Any]] = []
            block: Any  # text, image and tool-call blocks share this name
            for block in message.content:
                if isinstance(block, TextContent):
                    content.append({"type": "text", "text": sanitize_surrogates(block.text)})
                elif isinstance(block, ImageContent) and supports_images:
                    content.append(
                        {"type": "image_url", "image_url": f"data:{block.mime_type};base64,{block.data}"}
                    )
            if content:
                out.append({"role": "user", "content": content})
            elif had_images and not supports_images:
                out.append({"role": "user", "content": NON_VISION_USER_IMAGE_PLACEHOLDER})
        elif isinstance(message, AssistantMessage):
            parts: list[dict[str, Any]] = []
            calls: list[dict[str, Any]] = []
            for block in message.content:
                if isinstance(block, TextContent):
                    if block.text.strip():
                        parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                elif isinstance(block, ThinkingContent):
                    if block.thinking.strip():
                        parts.append(
                            {
                                "type": "thinking",
                                "thinking": [{"type": "text", "text": sanitize_surrogates(block.thinking)}],
                            }
                        )
                elif isinstance(block, ToolCall):
                    calls.append(
                        {
                            "id": block.id,
                            "type": "function",
                            "function": {"name": block.name, "arguments": dumps(block.arguments or {})},
                            "index": 0,  # the SDK's default, sent as is
                        }
                    )
            entry: dict[str, Any] = {"role": "assistant"}
            if parts:
                entry["content"] = parts
            if calls:
                entry["tool_calls"] = calls
            entry["prefix"] = False  # the SDK's default
            if parts or calls:
                out.append(entry)
        elif isinstance(message, ToolResultMessage):
            text = "\n".join(
                sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent)
            )
            has_images = any(isinstance(b, ImageContent) for b in message.content)
            tool_content: list[dict[str, Any]] = [
                {
                    "type": "text",
                    "text": _tool_result_text(text, has_images, supports_images, message.is_error),
                }
            ]
            if supports_images:
                for block in message.content:
                    if isinstance(block, ImageContent):
                        tool_content.append(
                            {"type": "image_url", "image_url": f"data:{block.mime_type};base64,{block.data}"}
                        )
            out.append(
                {
                    "role": "tool",
                    "name": message.tool_name,
                    "content": tool_content,
                    "tool_call_id": message.tool_call_id,
                }
            )
    return out


def to_function_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            },
        }
        for t in tools
    ]


def uses_reasoning_effort(model: Model) -> bool:
    return model.id in ("mistral-small-2603", "mistral-small-latest", "mistral-medium-3.5")


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The JSON body the Mistral SDK sends for pi's parameters (snake_case on the wire)."""
    normalize = tool_call_id_normalizer()
    messages = transform_messages(context.messages, model, lambda call_id, _m, _s: normalize(call_id))
    payload: dict[str, Any] = {"model": model.id}
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    max_tokens = base_max_tokens(model, options)
    if max_tokens is not None:
        payload["max_tokens"] = max_tokens
    payload["stream"] = True
    chat = to_chat_messages(messages, "image" in model.input)
    if context.system_prompt:
        chat.insert(0, {"role": "system", "content": sanitize_surrogates(context.system_prompt)})
    payload["messages"] = chat
    if context.tools:
        payload["tools"] = to_function_tools(context.tools)
    tool_choice = options.extra.get("tool_choice")
    if tool_choice:
        payload["tool_choice"] = (
            tool_choice
            if tool_choice in ("auto", "none", "any", "required")
            else {"type": "function", "function": {"name": tool_choice["function"]["name"]}}
        )
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else None
    if model.reasoning and level and level != "off":
        if uses_reasoning_effort(model):
            payload["reasoning_effort"] = (model.thinking_level_map or {}).get(level) or "high"
        else:
            payload["prompt_mode"] = "reasoning"
    return payload


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def mistral_error_message(status: int, body: str, content_type: str = "application/json") -> str:
    """``Mistral API error (<status>): <body>`` as pi words the SDK's errors."""
    text = body.strip()
    if text:
        if len(text) > MAX_ERROR_BODY_CHARS:
            text = f"{text[:MAX_ERROR_BODY_CHARS]}... [truncated {len(text) - MAX_ERROR_BODY_CHARS} chars]"
        return f"Mistral API error ({status}): {text}"
    detail = f"API error occurred: Status {status}"
    kind = content_type or '""'
    if kind != "application/json":
        shown = '"' + kind + '"' if " " in kind else kind
        detail += f" Content-Type {shown}"
    return f'Mistral API error ({status}): {detail}. Body: ""'


# ---------------------------------------------------------------------------
# Stream processing
# ---------------------------------------------------------------------------


_FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
    "error": "error",
}


def map_finish_reason(reason: str | None) -> Any:
    return _FINISH_REASONS.get(reason or "stop", "stop")


class MistralProcessor(StreamProcessor[dict[str, Any]]):
    """Feeds completion chunks into a builder."""

    def __init__(self, builder: MessageBuilder) -> None:
        super().__init__(builder)
        self.tool_blocks: dict[str, int] = {}

    def _text(self, delta: str) -> None:
        self.open_block("text")
        self.emit(self.builder.text_delta(self.index, delta))

    def handle(self, chunk: dict[str, Any]) -> None:
        b = self.builder
        message = b.message
        if not message.response_id and chunk.get("id"):
            message.response_id = chunk["id"]
        usage = chunk.get("usage")
        if usage:
            b.set_usage(
                input=usage.get("prompt_tokens") or 0,
                output=usage.get("completion_tokens") or 0,
                cache_read=0,
                cache_write=0,
            )
            if usage.get("total_tokens"):
                message.usage.total_tokens = usage["total_tokens"]
        choices = chunk.get("choices") or []
        if not choices:
            return
        choice = choices[0]
        if choice.get("finish_reason"):
            message.raw_stop_reason = str(choice["finish_reason"])
            message.stop_reason = map_finish_reason(choice["finish_reason"])
            if message.stop_reason == "error":
                message.error_message = UNKNOWN_ERROR
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if content is not None:
            for item in [content] if isinstance(content, str) else content:
                if isinstance(item, str):
                    self._text(sanitize_surrogates(item))
                elif item.get("type") == "thinking":
                    text = "".join(
                        p.get("text", "") for p in item.get("thinking") or [] if isinstance(p, dict)
                    )
                    text = sanitize_surrogates(text)
                    if not text:
                        continue
                    self.open_block("thinking")
                    self.emit(b.thinking_delta(self.index, text))
                elif item.get("type") == "text":
                    self._text(sanitize_surrogates(item.get("text") or ""))
        for call in delta.get("tool_calls") or []:
            self.close_block()
            raw_id = call.get("id")
            position = call.get("index") or 0
            call_id = (
                raw_id if raw_id and raw_id != "null" else derive_tool_call_id(f"toolcall:{position}", 0)
            )
            key = f"{call_id}:{position}"
            function = call.get("function") or {}
            index = self.tool_blocks.get(key)
            if index is None:
                index, start = b.toolcall_start(call_id, function.get("name") or "")
                self.tool_blocks[key] = index
                self.emit(start)
            arguments = function.get("arguments")
            fragment = arguments if isinstance(arguments, str) else dumps(arguments or {})
            self.emit(b.toolcall_delta(index, fragment))

    def finish(self) -> None:
        """Text and thinking end, then the tool calls, their arguments parsed."""
        self.close_block()
        for index in self.tool_blocks.values():
            arguments = parse_partial_json(self.builder.partial_json(index)) or {}
            self.emit(self.builder.toolcall_end(index, arguments=arguments))


# ---------------------------------------------------------------------------
# The stream function
# ---------------------------------------------------------------------------


def build_request(model: Model, context: Context, options: StreamOptions) -> RequestSpec:
    if not options.api_key:
        raise ProviderError(f"No API key for provider: {model.provider}")
    own = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "authorization": f"Bearer {options.api_key}",
    }
    headers = layer_headers(own, model, options)
    if options.session_id and not any(k.lower() == "x-affinity" for k in headers):
        headers["x-affinity"] = options.session_id
    return RequestSpec(
        url=(model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/chat/completions",
        headers=headers,
        body=build_payload(model, context, options),
    )


async def stream_chunks(response: StreamedResponse) -> AsyncIterator[dict[str, Any]]:
    """The completion chunks until ``[DONE]``."""
    async for _name, data in iter_sse_bytes(response.aiter_bytes()):
        if data.strip() == b"[DONE]":
            break
        chunk = parse_event_json(data)
        if isinstance(chunk, dict):
            yield chunk


def decode(
    response: StreamedResponse, builder: MessageBuilder, guard: AbortGuard
) -> AsyncIterator[list[StreamEvent]]:
    """Completion chunks as events, a list per chunk; tool calls end after the other blocks."""
    return MistralProcessor(builder).process(stream_chunks(response))


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from Mistral (pi asks its SDK for no retries)."""
    options = without_sdk_retries(options)
    return stream_message(model, context, options, build_request, decode, format_error=mistral_error_message)
