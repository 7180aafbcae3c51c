"""The ``google-generative-ai`` API: Gemini's ``streamGenerateContent?alt=sse``.

Parts marked ``thought`` stream as thinking; ``thoughtSignature`` values are kept on the text,
thinking and tool call blocks they came with and replayed to the same model; function calls
and responses map to tool calls and tool results; thinking is configured per level with
``thinkingLevel`` (Gemini 3, Gemma 4) or ``thinkingBudget`` (Gemini 2.5), as pi does.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from typing import Any
from urllib.parse import quote

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
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
from piko.plugins.providers.common import AbortGuard
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import base_max_tokens
from piko.plugins.providers.common import clamp_thinking_level
from piko.plugins.providers.common import fast_json_loads
from piko.plugins.providers.common import iter_sse_bytes
from piko.plugins.providers.common import layer_headers
from piko.plugins.providers.common import sanitize_surrogates
from piko.plugins.providers.common import stream_message
from piko.plugins.providers.common import transform_messages
from piko.plugins.providers.common import without_sdk_retries
from piko.plugins.providers.stream_loop import RequestBuilder
from piko.plugins.providers.stream_processor import StreamProcessor

if TYPE_CHECKING:
    from piko.plugins.providers.http_client import StreamedResponse

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
_BASE64_SIGNATURE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_tool_call_counter = itertools.count(1)


UNKNOWN_ERROR = "An unknown error occurred"


# ---------------------------------------------------------------------------
# Model families
# ---------------------------------------------------------------------------


def requires_tool_call_id(model_id: str) -> bool:
    """Models behind Google APIs that need explicit ids on function calls and responses."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def _gemini_major(model_id: str) -> int | None:
    match = re.match(r"^gemini(?:-live)?-(\d+)", model_id.lower())
    return int(match.group(1)) if match else None


def supports_multimodal_function_response(model_id: str) -> bool:
    major = _gemini_major(model_id)
    return major >= 3 if major is not None else True


def is_gemma4(model: Model) -> bool:
    return re.search(r"gemma-?4", model.id.lower()) is not None


def is_gemini3_pro(model: Model) -> bool:
    return re.search(r"gemini-3(?:\.\d+)?-pro", model.id.lower()) is not None


def is_gemini3_flash(model: Model) -> bool:
    return re.search(r"gemini-3(?:\.\d+)?-flash", model.id.lower()) is not None


def _valid_signature(signature: str | None) -> bool:
    return (
        bool(signature)
        and len(signature or "") % 4 == 0
        and _BASE64_SIGNATURE.match(signature or "") is not None
    )


# ---------------------------------------------------------------------------
# Request
# ---------------------------------------------------------------------------


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Gemini ``contents`` for the conversation."""

    def normalize(call_id: str, _model: Model, _source: AssistantMessage) -> str:
        if not requires_tool_call_id(model.id):
            return call_id
        return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]

    include_ids = requires_tool_call_id(model.id)
    contents: list[dict[str, Any]] = []
    for message in transform_messages(context.messages, model, normalize):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                contents.append({"role": "user", "parts": [{"text": sanitize_surrogates(message.content)}]})
                continue
            parts: list[dict[str, Any]] = []
            block: Any  # text, image and tool-call blocks share this name
            for block in message.content:
                if isinstance(block, TextContent):
                    parts.append({"text": sanitize_surrogates(block.text)})
                elif isinstance(block, ImageContent):
                    parts.append({"inlineData": {"mimeType": block.mime_type, "data": block.data}})
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif isinstance(message, AssistantMessage):
            same = message.provider == model.provider and message.model == model.id
            parts = []
            for block in message.content:
                if isinstance(block, TextContent):
                    if not block.text or not block.text.strip():
                        continue
                    part: dict[str, Any] = {"text": sanitize_surrogates(block.text)}
                    if same and _valid_signature(block.text_signature):
                        part["thoughtSignature"] = block.text_signature
                    parts.append(part)
                elif isinstance(block, ThinkingContent):
                    if not block.thinking or not block.thinking.strip():
                        continue
                    if same:
                        part = {"thought": True, "text": sanitize_surrogates(block.thinking)}
                        if _valid_signature(block.thinking_signature):
                            part["thoughtSignature"] = block.thinking_signature
                    else:
                        part = {"text": sanitize_surrogates(block.thinking)}
                    parts.append(part)
                elif isinstance(block, ToolCall):
                    call: dict[str, Any] = {"name": block.name, "args": block.arguments or {}}
                    if include_ids:
                        call["id"] = block.id
                    part = {"functionCall": call}
                    if same and _valid_signature(block.thought_signature):
                        part["thoughtSignature"] = block.thought_signature
                    parts.append(part)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif isinstance(message, ToolResultMessage):
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = (
                [b for b in message.content if isinstance(b, ImageContent)] if "image" in model.input else []
            )
            multimodal = supports_multimodal_function_response(model.id)
            value = sanitize_surrogates(text) if text else ("(see attached image)" if images else "")
            image_parts = [{"inlineData": {"mimeType": i.mime_type, "data": i.data}} for i in images]
            response: dict[str, Any] = {
                "name": message.tool_name,
                "response": {"error": value} if message.is_error else {"output": value},
            }
            if images and multimodal:
                response["parts"] = image_parts
            if include_ids:
                response["id"] = message.tool_call_id
            part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if last and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
            if images and not multimodal:
                contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *image_parts]})
    return contents


def convert_tools(tools: list[ToolSpec]) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    return [
        {
            "functionDeclarations": [
                {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
                for t in tools
            ]
        }
    ]


def _thinking_level(effort: str, model: Model) -> str | None:
    if is_gemini3_pro(model) and effort in ("minimal", "low", "medium", "high"):
        return "LOW" if effort in ("minimal", "low") else "HIGH"
    if is_gemma4(model) and effort in ("minimal", "low", "medium", "high"):
        return "MINIMAL" if effort in ("minimal", "low") else "HIGH"
    return {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}.get(effort)


ThinkingBudgets = dict[str, dict[str, int]]

# Gemini 2.5 thinking budgets per level, by the first model family found in the model id.
GEMINI_BUDGETS: ThinkingBudgets = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}


def _thinking_budget(
    model: Model, effort: str, custom: dict[str, int] | None, budgets: ThinkingBudgets
) -> int | None:
    if custom and custom.get(effort) is not None:
        return custom[effort]
    for family, levels in budgets.items():
        if family in model.id:
            return levels.get(effort)
    return -1


def thinking_config(
    model: Model, options: StreamOptions, *, budgets: ThinkingBudgets = GEMINI_BUDGETS
) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` for the requested level (None: send none).

    ``budgets``: the Gemini 2.5 budgets per level (Vertex AI's table has no Flash-Lite row).
    """
    if not model.reasoning:
        return None
    if not options.reasoning:
        if is_gemini3_pro(model):
            return {"thinkingLevel": "LOW"}
        if is_gemini3_flash(model) or is_gemma4(model):
            return {"thinkingLevel": "MINIMAL"}
        return {"thinkingBudget": 0}
    clamped = clamp_thinking_level(model, options.reasoning)
    effort = "high" if clamped == "off" else clamped
    config: dict[str, Any] = {"includeThoughts": True}
    if is_gemini3_pro(model) or is_gemini3_flash(model) or is_gemma4(model):
        level = _thinking_level(effort, model)
        if level is not None:
            config["thinkingLevel"] = level
        return config
    budget = _thinking_budget(model, effort, options.thinking_budgets, budgets)
    if budget is not None:
        config["thinkingBudget"] = budget
    return config


def build_body(
    model: Model, context: Context, options: StreamOptions, *, budgets: ThinkingBudgets = GEMINI_BUDGETS
) -> dict[str, Any]:
    """The REST body the Google GenAI SDK sends for pi's parameters (Gemini API and Vertex AI alike)."""
    body: dict[str, Any] = {"contents": convert_messages(model, context)}
    if context.system_prompt:
        body["systemInstruction"] = {
            "parts": [{"text": sanitize_surrogates(context.system_prompt)}],
            "role": "user",
        }
    tools = convert_tools(context.tools)
    if tools:
        body["tools"] = tools
    tool_choice = options.extra.get("tool_choice")
    if tools and tool_choice:
        mode = {"auto": "AUTO", "none": "NONE", "any": "ANY"}.get(str(tool_choice), "AUTO")
        body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    generation: dict[str, Any] = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    max_tokens = base_max_tokens(model, options)
    if max_tokens is not None:
        generation["maxOutputTokens"] = max_tokens
    config = thinking_config(model, options, budgets=budgets)
    if config is not None:
        generation["thinkingConfig"] = config
    if generation:
        body["generationConfig"] = generation
    return body


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def google_error_message(status: int, text: str) -> str:
    """The SDK's ``ApiError`` message: the JSON error body, compact (a non-JSON body is wrapped)."""
    try:
        return dumps(json.loads(text))
    except ValueError:
        return dumps({"error": {"message": text, "code": status, "status": _REASONS.get(status, "")}})


# ---------------------------------------------------------------------------
# Stream processing
# ---------------------------------------------------------------------------


def map_finish_reason(reason: str) -> Any:
    return {"STOP": "stop", "MAX_TOKENS": "length"}.get(reason, "error")


class GeminiProcessor(StreamProcessor[dict[str, Any]]):
    """Feeds ``GenerateContentResponse`` chunks into a builder."""

    def handle(self, chunk: dict[str, Any]) -> None:
        b = self.builder
        message = b.message
        if not message.response_id and chunk.get("responseId"):
            message.response_id = chunk["responseId"]
        candidates = chunk.get("candidates") or []
        candidate = candidates[0] if candidates else None
        parts = ((candidate or {}).get("content") or {}).get("parts") or []
        for part in parts:
            if "text" in part and part["text"] is not None:
                self.open_block("thinking" if part.get("thought") is True else "text")
                block = message.content[self.index]
                signature = part.get("thoughtSignature")
                if isinstance(block, ThinkingContent):
                    if isinstance(signature, str) and signature:
                        block.thinking_signature = signature
                    self.emit(b.thinking_delta(self.index, part["text"]))
                elif isinstance(block, TextContent):
                    if isinstance(signature, str) and signature:
                        block.text_signature = signature
                    self.emit(b.text_delta(self.index, part["text"]))
            if part.get("functionCall"):
                self.close_block()
                call = part["functionCall"]
                name = call.get("name") or ""
                provided = call.get("id")
                duplicate = any(isinstance(c, ToolCall) and c.id == provided for c in message.content)
                call_id = (
                    f"{name}_{int(time.time() * 1000)}_{next(_tool_call_counter)}"
                    if not provided or duplicate
                    else provided
                )
                arguments = call.get("args") or {}
                signature = part.get("thoughtSignature") or None
                index, start = b.toolcall_start(call_id, name, thought_signature=signature)
                self.emit(start)
                self.emit(b.toolcall_delta(index, dumps(arguments)))
                self.emit(b.toolcall_end(index, arguments=arguments))
        if candidate and candidate.get("finishReason"):
            message.raw_stop_reason = str(candidate["finishReason"])
            message.stop_reason = map_finish_reason(candidate["finishReason"])
            if message.stop_reason == "error":
                message.error_message = UNKNOWN_ERROR
            if any(isinstance(c, ToolCall) for c in message.content):
                message.stop_reason = "toolUse"
        usage = chunk.get("usageMetadata")
        if usage:
            cached = usage.get("cachedContentTokenCount") or 0
            b.set_usage(
                input=(usage.get("promptTokenCount") or 0) - cached,
                output=(usage.get("candidatesTokenCount") or 0) + (usage.get("thoughtsTokenCount") or 0),
                cache_read=cached,
                cache_write=0,
                reasoning=usage.get("thoughtsTokenCount") or 0,
            )
            message.usage.total_tokens = usage.get("totalTokenCount") or 0


# ---------------------------------------------------------------------------
# The stream function
# ---------------------------------------------------------------------------


def stream_url(model: Model) -> str:
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/models/{quote(model.id, safe='.-_~')}:streamGenerateContent?alt=sse"


def build_request(model: Model, context: Context, options: StreamOptions) -> RequestSpec:
    if not options.api_key:
        raise ProviderError(f"No API key for provider: {model.provider}")
    headers = layer_headers(
        {"content-type": "application/json", "x-goog-api-key": options.api_key}, model, options
    )
    return RequestSpec(url=stream_url(model), headers=headers, body=build_body(model, context, options))


async def stream_chunks(response: StreamedResponse) -> AsyncIterator[dict[str, Any]]:
    """Each SSE ``data:`` chunk, a ``GenerateContentResponse``; an error chunk ends the stream."""
    async for _name, data in iter_sse_bytes(response.aiter_bytes()):
        data = data.strip()
        if not data:
            continue
        try:
            chunk = fast_json_loads(data)
        except ValueError as exc:
            raise ProviderError(
                f"exception parsing stream chunk {data.decode('utf-8', 'replace')}. {exc}"
            ) from exc
        if not isinstance(chunk, dict):
            continue
        error = chunk.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int) and 400 <= error["code"] < 600:
            raise ProviderError(f"got status: {error.get('status')}. {dumps(chunk)}")
        yield chunk


def decode(
    response: StreamedResponse, builder: MessageBuilder, guard: AbortGuard
) -> AsyncIterator[list[StreamEvent]]:
    """Gemini's chunks as events, a list per chunk."""
    return GeminiProcessor(builder).process(stream_chunks(response))


def stream_gemini(
    model: Model, context: Context, options: StreamOptions, *, api: str, build_request: RequestBuilder
) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message (``api`` on it) from the request ``build_request`` makes to
    an endpoint answering as the Gemini API does; the SDK retries only when asked to."""
    options = without_sdk_retries(options)
    return stream_message(
        model, context, options, build_request, decode, api=api, format_error=google_error_message
    )


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from the Gemini API."""
    return stream_gemini(model, context, options, api="google-generative-ai", build_request=build_request)
