"""The ``openai-completions`` API: OpenAI chat completions (and compatible servers) over SSE.

Builds the request body exactly as pi does (``compat`` flags from models.json or detected from
the provider and base URL), sends it, and decodes the chunk stream into stream events: text,
reasoning (``reasoning_content``/``reasoning``/``reasoning_text``) as thinking, tool call
deltas, usage with cached tokens, finish reasons mapped as pi maps them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
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
from piko.data.stream_blocks import StreamingTextContent
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.data.streaming import ToolSpec
from piko.lib.jsonio import dumps
from piko.plugins.providers.billed_cost import billed_cost
from piko.plugins.providers.billed_cost import is_openrouter
from piko.plugins.providers.builder import MessageBuilder
from piko.plugins.providers.common import AbortGuard
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import announced
from piko.plugins.providers.common import base_max_tokens
from piko.plugins.providers.common import clamp_thinking_level
from piko.plugins.providers.common import copilot_dynamic_headers
from piko.plugins.providers.common import fast_json_loads
from piko.plugins.providers.common import iter_sse_batches
from piko.plugins.providers.common import openai_http_error
from piko.plugins.providers.common import parse_event_json
from piko.plugins.providers.common import parse_streaming_json
from piko.plugins.providers.common import resolve_base_url
from piko.plugins.providers.common import resolve_cache_retention
from piko.plugins.providers.common import sanitize_surrogates
from piko.plugins.providers.common import sdk_error_message
from piko.plugins.providers.common import stream_message
from piko.plugins.providers.common import transform_messages

if TYPE_CHECKING:
    from piko.plugins.providers.http_client import StreamedResponse

API = "openai-completions"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_CONTINUATION = "I have processed the tool results."

# ---------------------------------------------------------------------------
# Compatibility flags
# ---------------------------------------------------------------------------


def detect_compat(model: Model) -> dict[str, Any]:
    """pi's compat defaults for a provider / base URL."""
    provider = model.provider
    url = model.base_url
    is_zai = provider == "zai" or "api.z.ai" in url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    is_grok = provider == "xai" or "api.x.ai" in url
    is_deepseek = provider == "deepseek" or "deepseek.com" in url
    non_standard = (
        provider == "cerebras"
        or "cerebras.ai" in url
        or is_grok
        or "chutes.ai" in url
        or "deepseek.com" in url
        or is_zai
        or is_moonshot
        or provider == "opencode"
        or "opencode.ai" in url
        or is_cf_workers
        or is_cf_gateway
    )
    use_max_tokens = "chutes.ai" in url or is_moonshot or is_cf_gateway
    if is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif provider == "openrouter" or "openrouter.ai" in url:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": not non_standard,
        "supportsReasoningEffort": not (is_grok or is_zai or is_moonshot or is_cf_gateway),
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking_format,
        "openRouterRouting": {},
        "vercelGatewayRouting": {},
        "zaiToolStream": False,
        "supportsStrictMode": not (is_moonshot or is_cf_gateway),
        "cacheControlFormat": "anthropic"
        if provider == "openrouter" and model.id.startswith("anthropic/")
        else None,
        "sendSessionAffinityHeaders": False,
        "supportsLongCacheRetention": not (is_cf_workers or is_cf_gateway),
    }


def get_compat(model: Model) -> dict[str, Any]:
    """Detected flags, overridden by the model's ``compat`` (models.json) where it sets them."""
    compat = detect_compat(model)
    for key, value in (model.compat or {}).items():
        if value is not None:
            compat[key] = value
    if model.compat is not None and model.compat.get("openRouterRouting") is None:
        compat["openRouterRouting"] = {}
    return compat


# ---------------------------------------------------------------------------
# Request body
# ---------------------------------------------------------------------------


def _normalize_tool_call_id(model: Model) -> Any:
    def normalize(call_id: str, _model: Model, _source: AssistantMessage) -> str:
        if "|" in call_id:
            head = call_id.split("|", 1)[0]
            return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in head)[:40]
        if model.provider == "openai":
            return call_id[:40]
        return call_id

    return normalize


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def convert_messages(model: Model, context: Context, compat: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``messages`` array: system/developer prompt, then the transformed history."""
    out: list[dict[str, Any]] = []
    messages = transform_messages(context.messages, model, _normalize_tool_call_id(model))
    if context.system_prompt:
        role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
        out.append({"role": role, "content": sanitize_surrogates(context.system_prompt)})
    last_role: str | None = None
    i = 0
    while i < len(messages):
        msg: Message = messages[i]
        if (
            compat["requiresAssistantAfterToolResult"]
            and last_role == "toolResult"
            and isinstance(msg, UserMessage)
        ):
            out.append({"role": "assistant", "content": _CONTINUATION})
        if isinstance(msg, UserMessage):
            if isinstance(msg.content, str):
                out.append({"role": "user", "content": sanitize_surrogates(msg.content)})
            else:
                parts: list[dict[str, Any]] = []
                for block in msg.content:
                    if isinstance(block, TextContent):
                        parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                    elif isinstance(block, ImageContent):
                        parts.append(_image_part(block))
                if not parts:
                    i += 1
                    continue
                out.append({"role": "user", "content": parts})
        elif isinstance(msg, AssistantMessage):
            converted = _convert_assistant(model, msg, compat)
            if converted is None:
                i += 1
                continue
            out.append(converted)
        elif isinstance(msg, ToolResultMessage):
            images: list[dict[str, Any]] = []
            j = i
            while j < len(messages) and isinstance(messages[j], ToolResultMessage):
                result = messages[j]
                assert isinstance(result, ToolResultMessage)
                text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
                has_images = any(isinstance(b, ImageContent) for b in result.content)
                tool_msg: dict[str, Any] = {
                    "role": "tool",
                    "content": sanitize_surrogates(text if text else "(see attached image)"),
                    "tool_call_id": result.tool_call_id,
                }
                if compat["requiresToolResultName"] and result.tool_name:
                    tool_msg["name"] = result.tool_name
                out.append(tool_msg)
                if has_images and "image" in model.input:
                    images.extend(_image_part(b) for b in result.content if isinstance(b, ImageContent))
                j += 1
            i = j
            if images:
                if compat["requiresAssistantAfterToolResult"]:
                    out.append({"role": "assistant", "content": _CONTINUATION})
                out.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = msg.ROLE
        i += 1
    return out


def _convert_assistant(model: Model, msg: AssistantMessage, compat: dict[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "" if compat["requiresAssistantAfterToolResult"] else None,
    }
    text_parts = [
        {"type": "text", "text": sanitize_surrogates(b.text)}
        for b in msg.content
        if isinstance(b, TextContent) and b.text.strip()
    ]
    text = "".join(p["text"] for p in text_parts)
    thinking = [b for b in msg.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    if thinking:
        if compat["requiresThinkingAsText"]:
            joined = "\n\n".join(sanitize_surrogates(b.thinking) for b in thinking)
            out["content"] = [{"type": "text", "text": joined}, *text_parts]
        else:
            if text:
                out["content"] = text
            signature = thinking[0].thinking_signature
            if signature:
                out[signature] = "\n".join(b.thinking for b in thinking)
    elif text:
        out["content"] = text
    calls = [b for b in msg.content if isinstance(b, ToolCall)]
    if calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": dumps(c.arguments)}}
            for c in calls
        ]
        details = []
        for c in calls:
            if c.thought_signature:
                try:
                    detail = fast_json_loads(c.thought_signature)
                except ValueError:
                    continue
                if detail:
                    details.append(detail)
        if details:
            out["reasoning_details"] = details
    if (
        compat["requiresReasoningContentOnAssistantMessages"]
        and model.reasoning
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    content = out["content"]
    if not content and not out.get("tool_calls"):
        return None
    return out


def convert_tools(tools: list[ToolSpec], compat: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
        if compat["supportsStrictMode"] is not False:
            function["strict"] = bool(getattr(tool, "strict", False))
        out.append({"type": "function", "function": function})
    return out


def _has_tool_history(messages: list[Message]) -> bool:
    for msg in messages:
        if isinstance(msg, ToolResultMessage):
            return True
        if isinstance(msg, AssistantMessage) and any(isinstance(b, ToolCall) for b in msg.content):
            return True
    return False


def _add_cache_control(message: dict[str, Any], cache_control: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": cache_control}]
        return True
    if not isinstance(content, list):
        return False
    for part in reversed(content):
        if isinstance(part, dict) and part.get("type") == "text":
            part["cache_control"] = cache_control
            return True
    return False


def _apply_anthropic_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, cache_control: dict[str, Any]
) -> None:
    for message in messages:
        if message["role"] in ("system", "developer"):
            _add_cache_control(message, cache_control)
            break
    if tools:
        tools[-1]["cache_control"] = cache_control
    for message in reversed(messages):
        if message["role"] in ("user", "assistant") and _add_cache_control(message, cache_control):
            break


def reasoning_effort(model: Model, options: StreamOptions) -> str | None:
    """The clamped thinking level, ``None`` for off."""
    if not options.reasoning:
        return None
    level = clamp_thinking_level(model, options.reasoning)
    return None if level == "off" else level


def build_params(
    model: Model, context: Context, options: StreamOptions, compat: dict[str, Any]
) -> dict[str, Any]:
    """The request body, keys in pi's order."""
    retention = resolve_cache_retention(options.cache_retention)
    messages = convert_messages(model, context, compat)
    cache_control: dict[str, Any] | None = None
    if compat.get("cacheControlFormat") == "anthropic" and retention != "none":
        cache_control = {"type": "ephemeral"}
        if retention == "long" and compat["supportsLongCacheRetention"]:
            cache_control["ttl"] = "1h"
    params: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
    long_cache = retention == "long" and compat["supportsLongCacheRetention"]
    if (("api.openai.com" in model.base_url and retention != "none") or long_cache) and options.session_id:
        params["prompt_cache_key"] = options.session_id
    if long_cache:
        params["prompt_cache_retention"] = "24h"
    if compat["supportsUsageInStreaming"] is not False:
        params["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        params["store"] = False
    max_tokens = base_max_tokens(model, options)
    if max_tokens:
        params["max_tokens" if compat["maxTokensField"] == "max_tokens" else "max_completion_tokens"] = (
            max_tokens
        )
    if options.temperature is not None:
        params["temperature"] = options.temperature
    if context.tools:
        params["tools"] = convert_tools(context.tools, compat)
        if compat["zaiToolStream"]:
            params["tool_stream"] = True
    elif _has_tool_history(context.messages):
        params["tools"] = []
    if cache_control is not None:
        _apply_anthropic_cache_control(messages, params.get("tools"), cache_control)
    tool_choice = options.extra.get("tool_choice")
    if tool_choice:
        params["tool_choice"] = tool_choice
    service_tier = options.extra.get("service_tier")  # an extension's pi.set_service_tier("openai", ...)
    if service_tier is not None:
        params["service_tier"] = service_tier
    effort = reasoning_effort(model, options)
    level_map = model.thinking_level_map or {}
    fmt = compat["thinkingFormat"]
    if fmt in ("zai", "qwen") and model.reasoning:
        params["enable_thinking"] = bool(effort)
    elif fmt == "qwen-chat-template" and model.reasoning:
        params["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "deepseek" and model.reasoning:
        params["thinking"] = {"type": "enabled" if effort else "disabled"}
        if effort:
            params["reasoning_effort"] = level_map.get(effort) or effort
    elif fmt == "openrouter" and model.reasoning:
        if effort:
            params["reasoning"] = {"effort": level_map.get(effort) or effort}
        elif not ("off" in level_map and level_map["off"] is None):
            params["reasoning"] = {"effort": level_map.get("off") or "none"}
    elif effort and model.reasoning and compat["supportsReasoningEffort"]:
        params["reasoning_effort"] = level_map.get(effort) or effort
    elif not effort and model.reasoning and compat["supportsReasoningEffort"]:
        off = level_map.get("off")
        if isinstance(off, str):
            params["reasoning_effort"] = off
    if "openrouter.ai" in model.base_url and (model.compat or {}).get("openRouterRouting"):
        params["provider"] = model.compat["openRouterRouting"]  # type: ignore[index]
    if "ai-gateway.vercel.sh" in model.base_url and (model.compat or {}).get("vercelGatewayRouting"):
        routing = model.compat["vercelGatewayRouting"]  # type: ignore[index]
        if routing.get("only") or routing.get("order"):
            gateway = {k: routing[k] for k in ("only", "order") if routing.get(k)}
            params["providerOptions"] = {"gateway": gateway}
    return params


def build_headers(
    model: Model, context: Context, options: StreamOptions, compat: dict[str, Any]
) -> dict[str, str]:
    """Request headers: auth, then model headers, dynamic ones, and the options' (which win)."""
    api_key = options.api_key or ""
    headers: dict[str, str] = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Authorization": f"Bearer {api_key}",
    }
    headers.update(model.headers or {})
    if model.provider == "github-copilot":
        headers.update(copilot_dynamic_headers(context.messages))
    retention = resolve_cache_retention(options.cache_retention)
    session_id = None if retention == "none" else options.session_id
    if session_id and compat["sendSessionAffinityHeaders"]:
        headers.update(
            {"session_id": session_id, "x-client-request-id": session_id, "x-session-affinity": session_id}
        )
    headers.update(options.headers or {})
    if model.provider == "cloudflare-ai-gateway":
        if "Authorization" not in (model.headers or {}) and "Authorization" not in (options.headers or {}):
            headers.pop("Authorization", None)
        headers["cf-aig-authorization"] = f"Bearer {api_key}"
    return headers


def build_request(model: Model, context: Context, options: StreamOptions) -> RequestSpec:
    """URL, headers and body of one request."""
    if not options.api_key:
        raise ProviderError(f"No API key for provider: {model.provider}")
    compat = get_compat(model)
    base = resolve_base_url(model).rstrip("/")
    return RequestSpec(
        url=f"{base}/chat/completions",
        headers=build_headers(model, context, options, compat),
        body=build_params(model, context, options, compat),
    )


# ---------------------------------------------------------------------------
# Response stream
# ---------------------------------------------------------------------------


def map_stop_reason(reason: str | None) -> tuple[str, str | None]:
    """``(stop_reason, error_message)`` for a ``finish_reason``."""
    if reason is None or reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def set_usage(builder: MessageBuilder, raw: dict[str, Any]) -> None:
    """pi's usage normalisation: ``input`` excludes cache reads and writes; ``reasoning`` is part
    of ``completion_tokens``; OpenRouter's billed cost replaces the estimate (pi 1.6)."""
    prompt = raw.get("prompt_tokens") or 0
    details = raw.get("prompt_tokens_details") or {}
    reported_cached = details.get("cached_tokens")
    if reported_cached is None:
        reported_cached = raw.get("prompt_cache_hit_tokens") or 0
    cache_write = details.get("cache_write_tokens") or 0
    cache_read = max(0, reported_cached - cache_write) if cache_write > 0 else reported_cached
    builder.set_usage(
        input=max(0, prompt - cache_read - cache_write),
        output=raw.get("completion_tokens") or 0,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=(raw.get("completion_tokens_details") or {}).get("reasoning_tokens")
        or raw.get("reasoning_tokens")
        or 0,
    )
    if is_openrouter(builder.model):
        billed = billed_cost(raw)
        if billed is not None:
            builder.set_billed_cost(billed)


_STRING_BODY = re.compile(rb'(?:[^"\\]|\\.)*')  # a JSON string's characters, up to its closing quote


class ChunkDecoder:
    """Turns chat-completion chunks into events; blocks are closed at the end, in content order.

    Text-only chunks that repeat the bytes of an earlier one around the text (same id, model,
    layout) are recognised without parsing JSON: ``fast_prefix`` + text + ``fast_suffix``.
    Argument-only chunks of a tool call are recognised the same way (``tool_prefix`` + the
    arguments' JSON string + ``tool_suffix``); only the string itself is decoded, and a string
    that does not decode whole (an unescaped quote would end it early) takes the full parse.
    A 1 MB ``write`` call arrives as about 85,000 such chunks.
    """

    def __init__(self, builder: MessageBuilder) -> None:
        self.b = builder
        self.message = builder.message
        self.content = builder.message.content
        self.model_id = builder.model.id
        self.text_block: StreamingTextContent | None = None
        self.text_index = -1
        self.thinking_index = -1
        self.by_stream_index: dict[int, int] = {}
        self.by_id: dict[str, int] = {}
        self.done = False
        self.fast_prefix: bytes | None = None
        self.fast_suffix = b""
        self.tool_prefix: bytes | None = None
        self.tool_suffix = b""
        self.tool_index = -1  # the content index the learned argument chunks belong to

    def text(self, text: str, out: list[StreamEvent]) -> None:
        block = self.text_block
        if block is None:
            self.text_index, event = self.b.text_start()
            started = self.content[self.text_index]
            assert isinstance(started, StreamingTextContent)
            self.text_block = block = started
            out.append(event)
        block.append(text)
        out.append(
            StreamEvent(type="text_delta", content_index=self.text_index, delta=text, partial=self.message)
        )

    def feed_bytes(self, data: bytes, out: list[StreamEvent]) -> None:
        """One SSE ``data`` payload."""
        if self.done:
            return
        prefix = self.fast_prefix
        if prefix is not None and data.startswith(prefix) and data.endswith(self.fast_suffix):
            end = len(data) - len(self.fast_suffix)
            if end >= len(prefix):
                raw = data[len(prefix) : end]
                if b'"' not in raw and b"\\" not in raw:
                    if raw:
                        self.text(raw.decode("utf-8"), out)
                    return
        tool_prefix = self.tool_prefix
        if tool_prefix is not None and data.startswith(tool_prefix) and data.endswith(self.tool_suffix):
            end = len(data) - len(self.tool_suffix)
            if end >= len(tool_prefix):
                try:
                    fragment = fast_json_loads(b'"' + data[len(tool_prefix) : end] + b'"')
                except ValueError:
                    fragment = None
                if isinstance(fragment, str):
                    if fragment:
                        out.append(self.b.toolcall_delta(self.tool_index, fragment))
                    return
        if data.startswith(b"[DONE]"):
            self.done = True
            return
        chunk = parse_event_json(data, "chunk")
        if isinstance(chunk, dict):
            self.feed(chunk, out)
            if prefix is None and b'"content":"' in data:
                self._learn(chunk, data)
            elif b'"arguments":"' in data:
                self._learn_tool(chunk, data)

    def _lone_delta(self, chunk: dict[str, Any]) -> dict[str, Any] | None:
        """The delta of a chunk of this response holding one choice with a one-field delta and
        nothing else (no usage, error or finish reason); ``None`` for any other chunk."""
        choices = chunk.get("choices")
        if chunk.get("usage") or chunk.get("error") or not isinstance(choices, list) or len(choices) != 1:
            return None
        choice = choices[0]
        if not isinstance(choice, dict) or choice.get("finish_reason") is not None or choice.get("usage"):
            return None
        delta = choice.get("delta")
        if not isinstance(delta, dict) or len(delta) != 1 or chunk.get("id") != self.message.response_id:
            return None
        return delta

    def _learn(self, chunk: dict[str, Any], data: bytes) -> None:
        """Remember the bytes around the text of a plain text chunk (see the class docstring)."""
        delta = self._lone_delta(chunk)
        if (
            delta is None
            or not isinstance(delta.get("content"), str)
            or b"\\" in data
            or data.count(b'"content":"') != 1
        ):
            return
        text = delta["content"].encode()
        start = data.index(b'"content":"') + 11
        if (
            data[start : start + len(text)] == text
            and data[start + len(text) : start + len(text) + 1] == b'"'
        ):
            self.fast_prefix = data[:start]
            self.fast_suffix = data[start + len(text) :]

    def _learn_tool(self, chunk: dict[str, Any], data: bytes) -> None:
        """Remember the bytes around the arguments of an argument-only tool call chunk."""
        delta = self._lone_delta(chunk)
        calls = delta.get("tool_calls") if delta is not None else None
        if (
            not isinstance(calls, list)
            or len(calls) != 1
            or not isinstance(calls[0], dict)
            or set(calls[0]) != {"index", "function"}
            or not isinstance(calls[0]["index"], int)
            or not isinstance(calls[0]["function"], dict)
            or set(calls[0]["function"]) != {"arguments"}
            or not isinstance(calls[0]["function"]["arguments"], str)
            or data.count(b'"arguments":"') != 1
        ):
            return
        index = self.by_stream_index.get(calls[0]["index"], -1)
        if index < 0:
            return
        start = data.index(b'"arguments":"') + 13
        end = _STRING_BODY.match(data, start).end()  # type: ignore[union-attr]  # always matches
        try:
            if fast_json_loads(b'"' + data[start:end] + b'"') != calls[0]["function"]["arguments"]:
                return
        except ValueError:
            return
        self.tool_prefix = data[:start]
        self.tool_suffix = data[end:]
        self.tool_index = index

    def feed(self, chunk: dict[str, Any], out: list[StreamEvent]) -> None:
        """One parsed chunk."""
        b = self.b
        message = self.message
        content = self.content
        error = chunk.get("error")
        if error:
            raise ProviderError(sdk_error_message(None, error, None))
        if message.response_id is None and chunk.get("id"):
            message.response_id = chunk["id"]
        chunk_model = chunk.get("model")
        if (
            chunk_model != self.model_id
            and message.response_model is None
            and isinstance(chunk_model, str)
            and chunk_model
        ):
            message.response_model = chunk_model
        usage = chunk.get("usage")
        if usage:
            set_usage(b, usage)
        choices = chunk.get("choices")
        if not choices or not isinstance(choices, list):
            return
        choice = choices[0]
        if not usage and choice.get("usage"):
            set_usage(b, choice["usage"])
        finish = choice.get("finish_reason")
        if finish:
            message.raw_stop_reason = str(finish)
            reason, error_message = map_stop_reason(finish)
            message.stop_reason = reason  # type: ignore[assignment]
            if error_message:
                message.error_message = error_message
        delta = choice.get("delta")
        if not delta:
            return
        text = delta.get("content")
        if text:
            self.text(text, out)
        for field in REASONING_FIELDS:
            value = delta.get(field)
            if isinstance(value, str) and value:
                if self.thinking_index < 0:
                    self.thinking_index, event = b.thinking_start()
                    block = content[self.thinking_index]
                    assert isinstance(block, ThinkingContent)
                    block.thinking_signature = field
                    out.append(event)
                out.append(b.thinking_delta(self.thinking_index, value))
                break
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            for call in tool_calls:
                self._tool_call(call, out)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            for detail in details:
                if not (isinstance(detail, dict) and detail.get("type") == "reasoning.encrypted"):
                    continue
                if detail.get("id") and detail.get("data"):
                    for block in content:
                        if isinstance(block, ToolCall) and block.id == detail["id"]:
                            block.thought_signature = dumps(detail)
                            break

    def _tool_call(self, call: dict[str, Any], out: list[StreamEvent]) -> None:
        b = self.b
        stream_index = call.get("index")
        if not isinstance(stream_index, int):
            stream_index = None
        call_id = call.get("id")
        function = call.get("function") or {}
        index = self.by_stream_index.get(stream_index, -1) if stream_index is not None else -1
        if index < 0 and call_id:
            index = self.by_id.get(call_id, -1)
        if index < 0:
            index, event = b.toolcall_start(call_id or "", function.get("name") or "")
            tool = self.content[index]
            if stream_index is not None:
                tool.extra["streamIndex"] = stream_index
                self.by_stream_index[stream_index] = index
            if call_id:
                self.by_id[call_id] = index
            out.append(event)
        tool = self.content[index]
        assert isinstance(tool, ToolCall)
        if stream_index is not None and "streamIndex" not in tool.extra:
            tool.extra["streamIndex"] = stream_index
            self.by_stream_index[stream_index] = index
        if call_id:
            if not tool.id:
                tool.id = call_id
            self.by_id[call_id] = index
        if not tool.name and function.get("name"):
            tool.name = function["name"]
        arguments = function.get("arguments")
        if arguments:
            out.append(b.toolcall_delta(index, arguments))
        else:
            out.append(b.toolcall_delta(index, ""))

    def finish(self, out: list[StreamEvent]) -> None:
        """Close every block, in content order."""
        b = self.b
        for index, block in enumerate(self.content):
            if isinstance(block, TextContent):
                out.append(b.text_end(index))
            elif isinstance(block, ThinkingContent):
                out.append(b.thinking_end(index))
            elif isinstance(block, ToolCall):
                block.extra.pop("streamIndex", None)
                out.append(b.toolcall_end(index, parse_streaming_json(b.partial_json(index))))


async def decode(
    response: StreamedResponse, b: MessageBuilder, guard: AbortGuard
) -> AsyncIterator[list[StreamEvent]]:
    """The response's events, a list per SSE event.

    Each list is handed on before the next SSE event is applied to the message: whoever listens
    sees the message exactly as of that event, however the network cut the body (pi's
    snapshots can run a delta or two ahead when events arrive together).
    """
    decoder = ChunkDecoder(b)
    feed = decoder.feed_bytes
    async for batch in iter_sse_batches(response.aiter_bytes()):
        for event_name, data in batch:
            if event_name is not None and event_name.startswith("thread."):
                continue
            for events in announced(feed, data):
                yield events
    out: list[StreamEvent] = []
    decoder.finish(out)
    yield out


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from an OpenAI chat-completions endpoint."""
    return stream_message(model, context, options, build_request, decode, format_error=openai_http_error)
