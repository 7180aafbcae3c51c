"""The ``openai-responses`` API: request building, SSE event processing and the stream function.

The conversion and the event processor are shared with ``azure-openai-responses``. Reasoning
items stream as thinking (summary text) and are replayed whole from the thinking signature
(``include: ["reasoning.encrypted_content"]``, ``store: false``); function calls get pi's
``call_id|item_id`` ids; text blocks carry ``{"v":1,"id":...}`` signatures.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.stream_blocks import StreamingToolCall
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
from piko.plugins.providers.common import parse_event_json
from piko.plugins.providers.common import resolve_cache_retention
from piko.plugins.providers.common import sanitize_surrogates
from piko.plugins.providers.common import sdk_error_message
from piko.plugins.providers.common import stream_message
from piko.plugins.providers.common import transform_messages
from piko.plugins.providers.short_hash import short_hash
from piko.plugins.providers.stream_processor import StreamProcessor

if TYPE_CHECKING:
    from piko.plugins.providers.http_client import StreamedResponse

OPENAI_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
UNKNOWN_ERROR = "An unknown error occurred"


# ---------------------------------------------------------------------------
# Text signatures
# ---------------------------------------------------------------------------


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return dumps(payload)


def parse_text_signature(signature: str | None) -> dict[str, str] | None:
    """``{"id", "phase"?}`` from a v1 signature; a legacy plain string is the id itself."""
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            if parsed.get("phase") in ("commentary", "final_answer"):
                return {"id": parsed["id"], "phase": parsed["phase"]}
            return {"id": parsed["id"]}
    return {"id": signature}


# ---------------------------------------------------------------------------
# Messages and tools
# ---------------------------------------------------------------------------


def _normalize_id_part(part: str) -> str:
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in part)
    return cleaned[:64].rstrip("_")


def convert_messages(
    model: Model,
    context: Context,
    allowed_tool_call_providers: frozenset[str],
    *,
    include_system_prompt: bool = True,
) -> list[dict[str, Any]]:
    """The ``input`` items of a responses request."""

    def normalize_tool_call_id(call_id: str, _model: Model, source: AssistantMessage) -> str:
        if model.provider not in allowed_tool_call_providers or "|" not in call_id:
            return _normalize_id_part(call_id)
        raw_call, raw_item = call_id.split("|")[:2]
        foreign = source.provider != model.provider or source.api != model.api
        item = f"fc_{short_hash(raw_item)}"[:64] if foreign else _normalize_id_part(raw_item)
        if not item.startswith("fc_"):
            item = _normalize_id_part(f"fc_{item}")
        return f"{_normalize_id_part(raw_call)}|{item}"

    items: list[dict[str, Any]] = []
    if include_system_prompt and context.system_prompt:
        items.append(
            {
                "role": "developer" if model.reasoning else "system",
                "content": sanitize_surrogates(context.system_prompt),
            }
        )
    for index, message in enumerate(transform_messages(context.messages, model, normalize_tool_call_id)):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                items.append(
                    {
                        "role": "user",
                        "content": [{"type": "input_text", "text": sanitize_surrogates(message.content)}],
                    }
                )
                continue
            parts: list[dict[str, Any]] = []
            block: Any  # text, image and tool-call blocks share this name
            for block in message.content:
                if isinstance(block, TextContent):
                    parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
                elif isinstance(block, ImageContent):
                    parts.append(
                        {
                            "type": "input_image",
                            "detail": "auto",
                            "image_url": f"data:{block.mime_type};base64,{block.data}",
                        }
                    )
            if parts:
                items.append({"role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            different_model = (
                message.model != model.id and message.provider == model.provider and message.api == model.api
            )
            for block in message.content:
                if isinstance(block, ThinkingContent):
                    if block.thinking_signature:
                        try:
                            items.append(json.loads(block.thinking_signature))
                        except ValueError:
                            pass  # not a reasoning item (another API's signature): nothing to replay
                elif isinstance(block, TextContent):
                    parsed = parse_text_signature(block.text_signature)
                    msg_id = parsed["id"] if parsed else None
                    if not msg_id:
                        msg_id = f"msg_{index}"
                    elif len(msg_id) > 64:
                        msg_id = f"msg_{short_hash(msg_id)}"
                    item: dict[str, Any] = {
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "output_text",
                                "text": sanitize_surrogates(block.text),
                                "annotations": [],
                            }
                        ],
                        "status": "completed",
                        "id": msg_id,
                    }
                    if parsed and parsed.get("phase"):
                        item["phase"] = parsed["phase"]
                    items.append(item)
                elif isinstance(block, ToolCall):
                    call_id, _, item_id = block.id.partition("|")
                    call: dict[str, Any] = {"type": "function_call"}
                    if item_id and not (different_model and item_id.startswith("fc_")):
                        call["id"] = item_id
                    call.update({"call_id": call_id, "name": block.name, "arguments": dumps(block.arguments)})
                    items.append(call)
        elif isinstance(message, ToolResultMessage):
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = [b for b in message.content if isinstance(b, ImageContent)]
            call_id = message.tool_call_id.split("|")[0]
            output: Any
            if images and "image" in model.input:
                output = []
                if text:
                    output.append({"type": "input_text", "text": sanitize_surrogates(text)})
                for image in images:
                    output.append(
                        {
                            "type": "input_image",
                            "detail": "auto",
                            "image_url": f"data:{image.mime_type};base64,{image.data}",
                        }
                    )
            else:
                output = sanitize_surrogates(text if text else "(see attached image)")
            items.append({"type": "function_call_output", "call_id": call_id, "output": output})
    return items


def convert_tools(tools: list[ToolSpec], *, strict: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
            "strict": strict or bool(getattr(t, "strict", False)),
        }
        for t in tools
    ]


def reasoning_params(
    model: Model, effort: str | None, summary: str | None, *, allow_off: bool = True
) -> dict[str, Any]:
    """``reasoning`` (and ``include``) for a reasoning model: the effort, or pi's "off" effort."""
    if not model.reasoning:
        return {}
    mapping = model.thinking_level_map or {}
    if effort or summary:
        mapped = mapping.get(effort) if effort else None
        return {
            "reasoning": {"effort": (mapped or effort) if effort else "medium", "summary": summary or "auto"},
            "include": ["reasoning.encrypted_content"],
        }
    if allow_off and not ("off" in mapping and mapping["off"] is None):
        return {"reasoning": {"effort": mapping.get("off") or "none"}}
    return {}


def reasoning_effort(model: Model, options: StreamOptions) -> str | None:
    """The requested thinking level clamped to the model; ``None`` when off."""
    if not options.reasoning:
        return None
    level = clamp_thinking_level(model, options.reasoning)
    return None if level == "off" else level


def build_params(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body pi sends to the OpenAI responses endpoint."""
    retention = resolve_cache_retention(options.cache_retention)
    compat = model.compat or {}
    params: dict[str, Any] = {
        "model": model.id,
        "input": convert_messages(model, context, OPENAI_TOOL_CALL_PROVIDERS),
        "stream": True,
    }
    if retention != "none" and options.session_id:
        params["prompt_cache_key"] = options.session_id
    if retention == "long" and compat.get("supportsLongCacheRetention", True):
        params["prompt_cache_retention"] = "24h"
    params["store"] = False
    max_tokens = base_max_tokens(model, options)
    if max_tokens:
        params["max_output_tokens"] = max_tokens
    if options.temperature is not None:
        params["temperature"] = options.temperature
    service_tier = options.extra.get("service_tier")
    if service_tier is not None:
        params["service_tier"] = service_tier
    if context.tools:
        params["tools"] = convert_tools(context.tools)
    params.update(
        reasoning_params(
            model,
            reasoning_effort(model, options),
            options.extra.get("reasoning_summary"),
            allow_off=model.provider != "github-copilot",
        )
    )
    return params


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def openai_error_message(status: int | None, text: str) -> str:
    """How the OpenAI SDK words an HTTP error: ``<status> <error.message>``."""
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    return sdk_error_message(status, error, None if data is not None else text)


# ---------------------------------------------------------------------------
# Stream processing
# ---------------------------------------------------------------------------


def _service_tier_multiplier(model: Model, tier: str | None) -> float:
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model.id == "gpt-5.5" else 2.0
    return 1.0


class ResponsesProcessor(StreamProcessor[dict[str, Any]]):
    """Feeds responses API events (parsed JSON) into a builder, emitting pi's events."""

    def __init__(
        self,
        builder: MessageBuilder,
        *,
        service_tier: str | None = None,
        apply_service_tier: bool = False,
    ) -> None:
        super().__init__(builder)
        self.service_tier = service_tier
        self.apply_service_tier = apply_service_tier
        self.item: dict[str, Any] | None = None
        self.kind: str | None = None  # "thinking" | "text" | "toolCall" while a block is open

    def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        b = self.builder
        message = b.message
        if kind == "response.created":
            response = event.get("response") or {}
            if response.get("id"):
                message.response_id = response["id"]
        elif kind == "response.output_item.added":
            item = event.get("item") or {}
            item_type = item.get("type")
            if item_type == "reasoning":
                self.item, self.kind = item, "thinking"
                self.emit(b.thinking_start()[1])
            elif item_type == "message":
                self.item, self.kind = item, "text"
                self.emit(b.text_start()[1])
            elif item_type == "function_call":
                self.item, self.kind = item, "toolCall"
                index, start = b.toolcall_start(
                    f"{item.get('call_id')}|{item.get('id')}", item.get("name") or ""
                )
                block = message.content[index]
                assert isinstance(block, StreamingToolCall)
                block.append_json(item.get("arguments") or "")
                self.emit(start)
        elif kind == "response.reasoning_summary_part.added":
            if self.item is not None and self.item.get("type") == "reasoning":
                self.item.setdefault("summary", [])
                if self.item["summary"] is None:
                    self.item["summary"] = []
                self.item["summary"].append(dict(event.get("part") or {"type": "summary_text", "text": ""}))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_summary_part.done"):
            if self.item is not None and self.item.get("type") == "reasoning" and self.kind == "thinking":
                summary = self.item.get("summary") or []
                if summary:  # the text itself comes whole with the item's "done" event
                    delta = event.get("delta") or "" if kind.endswith("delta") else "\n\n"
                    self.emit(b.thinking_delta(self.index, delta))
        elif kind == "response.reasoning_text.delta":
            if self.item is not None and self.item.get("type") == "reasoning" and self.kind == "thinking":
                self.emit(b.thinking_delta(self.index, event.get("delta") or ""))
        elif kind == "response.content_part.added":
            if self.item is not None and self.item.get("type") == "message":
                part = event.get("part") or {}
                if part.get("type") in ("output_text", "refusal"):
                    if not isinstance(self.item.get("content"), list):
                        self.item["content"] = []
                    self.item["content"].append(dict(part))
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            if self.item is not None and self.item.get("type") == "message" and self.kind == "text":
                parts = self.item.get("content") or []
                if not parts:
                    return
                wanted = "output_text" if kind == "response.output_text.delta" else "refusal"
                if parts[-1].get("type") == wanted:  # the text comes whole with "done"
                    self.emit(b.text_delta(self.index, event.get("delta") or ""))
        elif kind == "response.function_call_arguments.delta":
            if self.item is not None and self.item.get("type") == "function_call" and self.kind == "toolCall":
                self.emit(b.toolcall_delta(self.index, event.get("delta") or ""))
        elif kind == "response.function_call_arguments.done":
            if self.item is not None and self.item.get("type") == "function_call" and self.kind == "toolCall":
                arguments = event.get("arguments") or ""
                previous = b.partial_json(self.index)
                if arguments.startswith(previous):
                    if len(arguments) > len(previous):
                        self.emit(b.toolcall_delta(self.index, arguments[len(previous) :]))
                else:
                    block = message.content[self.index]
                    if isinstance(block, StreamingToolCall):
                        block.replace_json(arguments)
        elif kind == "response.output_item.done":
            self._item_done(event.get("item") or {})
        elif kind == "response.completed":
            self._completed(event.get("response") or {})
        elif kind == "error":
            raise ProviderError(f"Error Code {event.get('code')}: {event.get('message')}")
        elif kind == "response.failed":
            response = event.get("response") or {}
            error = response.get("error")
            details = response.get("incomplete_details")
            if error:
                raise ProviderError(
                    f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
                )
            if details and details.get("reason"):
                raise ProviderError(f"incomplete: {details['reason']}")
            raise ProviderError("Unknown error (no error details in response)")

    def _item_done(self, item: dict[str, Any]) -> None:
        b = self.builder
        item_type = item.get("type")
        if item_type == "reasoning" and self.kind == "thinking":
            block = b.message.content[self.index]
            assert isinstance(block, ThinkingContent)
            summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
            content = "\n\n".join(c.get("text", "") for c in item.get("content") or [])
            block.thinking = summary or content or block.thinking
            self.emit(b.thinking_end(self.index, signature=dumps(item)))
            self.kind = None
        elif item_type == "message" and self.kind == "text":
            block = b.message.content[self.index]
            assert isinstance(block, TextContent)
            block.text = "".join(
                (c.get("text") if c.get("type") == "output_text" else c.get("refusal")) or ""
                for c in item.get("content") or []
            )
            self.emit(
                b.text_end(
                    self.index, signature=encode_text_signature(item.get("id") or "", item.get("phase"))
                )
            )
            self.kind = None
        elif item_type == "function_call":
            streamed = b.partial_json(self.index) if self.kind == "toolCall" else ""
            if streamed:
                arguments = parse_partial_json(streamed) or {}
            else:
                arguments = parse_partial_json(item.get("arguments") or "{}") or {}
            if self.kind != "toolCall":
                b.toolcall_start(f"{item.get('call_id')}|{item.get('id')}", item.get("name") or "")
            self.kind = None
            self.emit(b.toolcall_end(self.index, arguments=arguments))

    def _completed(self, response: dict[str, Any]) -> None:
        b = self.builder
        message = b.message
        if response.get("id"):
            message.response_id = response["id"]
        usage = response.get("usage")
        if usage:
            cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
            b.set_usage(
                input=(usage.get("input_tokens") or 0) - cached,
                output=usage.get("output_tokens") or 0,
                cache_read=cached,
                cache_write=0,
                reasoning=(usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
            )
            message.usage.total_tokens = usage.get("total_tokens") or 0
        else:
            b.set_usage()
        if self.apply_service_tier:
            multiplier = _service_tier_multiplier(b.model, response.get("service_tier") or self.service_tier)
            if multiplier != 1:
                cost = message.usage.cost
                cost.input *= multiplier
                cost.output *= multiplier
                cost.cache_read *= multiplier
                cost.cache_write *= multiplier
                cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
        status, incomplete = response.get("status"), (response.get("incomplete_details") or {}).get("reason")
        if status is not None:
            message.raw_stop_reason = f"{status}.{incomplete}" if isinstance(incomplete, str) else str(status)
        message.stop_reason = map_stop_reason(response.get("status"))
        if message.stop_reason == "error":
            message.error_message = UNKNOWN_ERROR
        if message.stop_reason == "stop" and any(isinstance(c, ToolCall) for c in message.content):
            message.stop_reason = "toolUse"


def map_stop_reason(status: str | None) -> Any:
    if not status:
        return "stop"
    return {
        "completed": "stop",
        "incomplete": "length",
        "failed": "error",
        "cancelled": "error",
        "in_progress": "stop",
        "queued": "stop",
    }.get(status, "stop")


async def stream_events(response: StreamedResponse) -> AsyncIterator[dict[str, Any]]:
    """A responses SSE body's events, read as the OpenAI SDK reads it."""
    async for name, data in iter_sse_bytes(response.aiter_bytes()):
        if data.startswith(b"[DONE]"):
            break
        if name is not None and name.startswith("thread."):
            continue
        event = parse_event_json(data)
        if not isinstance(event, dict):
            continue
        if event.get("error") and event.get("type") != "error":
            raise ProviderError(sdk_error_message(None, event["error"], None))
        yield event


def decode(
    response: StreamedResponse,
    builder: MessageBuilder,
    guard: AbortGuard,
    *,
    service_tier: str | None = None,
    apply_service_tier: bool = False,
) -> AsyncIterator[list[StreamEvent]]:
    """A responses SSE body as events, a list per event."""
    processor = ResponsesProcessor(builder, service_tier=service_tier, apply_service_tier=apply_service_tier)
    return processor.process(stream_events(response))


# ---------------------------------------------------------------------------
# The stream function
# ---------------------------------------------------------------------------


def request_headers(model: Model, options: StreamOptions, own: dict[str, str]) -> dict[str, str]:
    """Model headers, then the API's own, then the request's (which win)."""
    headers: dict[str, str] = {"content-type": "application/json", "accept": "application/json"}
    headers.update(model.headers or {})
    headers.update(own)
    headers.update(options.headers or {})
    return headers


def build_request(model: Model, context: Context, options: StreamOptions) -> RequestSpec:
    if not options.api_key:
        raise ProviderError(f"No API key for provider: {model.provider}")
    own: dict[str, str] = {"authorization": f"Bearer {options.api_key}"}
    if resolve_cache_retention(options.cache_retention) != "none" and options.session_id:
        if (model.compat or {}).get("sendSessionIdHeader", True):
            own["session_id"] = options.session_id
        own["x-client-request-id"] = options.session_id
    return RequestSpec(
        url=model.base_url.rstrip("/") + "/responses",
        headers=request_headers(model, options, own),
        body=build_params(model, context, options),
    )


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from the OpenAI responses API."""
    tiered = functools.partial(
        decode, service_tier=options.extra.get("service_tier"), apply_service_tier=True
    )
    return stream_message(model, context, options, build_request, tiered, format_error=openai_error_message)
