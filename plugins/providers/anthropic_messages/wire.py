"""The ``anthropic-messages`` API: Anthropic's Messages endpoint over SSE.

Builds the request body as pi does (thinking budgets or adaptive thinking, ``cache_control`` per
cache retention, signed and redacted thinking replayed, OAuth tokens sent as Claude Code sends
them, a gateway's ``ANTHROPIC_AUTH_TOKEN`` as a bearer without ``x-api-key``) and decodes the event stream: text, thinking with signatures, ``tool_use`` input streamed
as ``input_json_delta``, usage with cache reads and writes, stop reasons, ``error`` events.
"""

from __future__ import annotations

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
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.data.streaming import ToolSpec
from piko.lib.provider_env import provider_getenv
from piko.lib.redaction import register_secret
from piko.plugins.providers.billed_cost import billed_cost
from piko.plugins.providers.billed_cost import is_openrouter
from piko.plugins.providers.builder import MessageBuilder
from piko.plugins.providers.common import ABORTED_MESSAGE
from piko.plugins.providers.common import AbortGuard
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import adjust_max_tokens_for_thinking
from piko.plugins.providers.common import announced
from piko.plugins.providers.common import anthropic_http_error
from piko.plugins.providers.common import base_max_tokens
from piko.plugins.providers.common import copilot_dynamic_headers
from piko.plugins.providers.common import iter_sse_batches
from piko.plugins.providers.common import parse_json_with_repair
from piko.plugins.providers.common import parse_streaming_json
from piko.plugins.providers.common import resolve_base_url
from piko.plugins.providers.common import resolve_cache_retention
from piko.plugins.providers.common import run_stream
from piko.plugins.providers.common import sanitize_surrogates
from piko.plugins.providers.common import transform_messages
from piko.plugins.providers.env_auth import ANTHROPIC_AUTH_TOKEN
from piko.plugins.providers.env_auth import AUTHENTICATED

if TYPE_CHECKING:
    from piko.plugins.providers.http_client import StreamedResponse

API = "anthropic-messages"
ANTHROPIC_VERSION = "2023-06-01"
CLAUDE_CODE_VERSION = "2.1.75"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
REDACTED_THINKING_TEXT = "[Reasoning redacted]"

# Claude Code's tool names; with an OAuth token pi sends tools under these spellings.
CLAUDE_CODE_TOOLS = (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode",
    "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch",
)  # fmt: skip
_CC_LOOKUP = {name.lower(): name for name in CLAUDE_CODE_TOOLS}
_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


def to_claude_code_name(name: str) -> str:
    return _CC_LOOKUP.get(name.lower(), name)


def from_claude_code_name(name: str, tools: list[ToolSpec]) -> str:
    lower = name.lower()
    for tool in tools:
        if tool.name.lower() == lower:
            return tool.name
    return name


def is_oauth_token(api_key: str) -> bool:
    """Claude subscription tokens (``sk-ant-oat...``) authenticate as Claude Code does."""
    return "sk-ant-oat" in api_key


def supports_adaptive_thinking(model_id: str) -> bool:
    """Opus 4.6/4.7 and Sonnet 4.6 decide themselves how much to think."""
    return any(
        tag in model_id
        for tag in ("opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6")
    )


def effort_for_level(model: Model, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


def _compat(model: Model) -> dict[str, bool]:
    compat = model.compat or {}
    return {
        "supportsEagerToolInputStreaming": compat.get("supportsEagerToolInputStreaming", True) is not False,
        "supportsLongCacheRetention": compat.get("supportsLongCacheRetention", True) is not False,
    }


def cache_control_for(model: Model, retention: str | None) -> dict[str, Any] | None:
    """``{"type": "ephemeral"}`` (``ttl: 1h`` for long retention), or ``None`` for ``none``."""
    value = resolve_cache_retention(retention)
    if value == "none":
        return None
    control: dict[str, Any] = {"type": "ephemeral"}
    if value == "long" and _compat(model)["supportsLongCacheRetention"]:
        control["ttl"] = "1h"
    return control


# ---------------------------------------------------------------------------
# Thinking options (pi's streamSimpleAnthropic)
# ---------------------------------------------------------------------------


def thinking_options(model: Model, options: StreamOptions) -> dict[str, Any]:
    """``max_tokens`` and the thinking settings for the request's thinking level."""
    base = base_max_tokens(model, options)
    level = options.reasoning if options.reasoning and options.reasoning != "off" else None
    if level is None:
        return {"max_tokens": base, "thinking_enabled": False}
    if supports_adaptive_thinking(model.id):
        return {"max_tokens": base, "thinking_enabled": True, "effort": effort_for_level(model, level)}
    max_tokens, budget = adjust_max_tokens_for_thinking(
        base or 0, model.max_tokens, level, options.thinking_budgets
    )
    return {"max_tokens": max_tokens, "thinking_enabled": True, "budget": budget}


# ---------------------------------------------------------------------------
# Request body
# ---------------------------------------------------------------------------


def _normalize_tool_call_id(call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in call_id)[:64]


def _image_block(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _tool_result_content(content: list[Any]) -> str | list[dict[str, Any]]:
    if not any(isinstance(b, ImageContent) for b in content):
        return sanitize_surrogates("\n".join(b.text for b in content if isinstance(b, TextContent)))
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ImageContent):
            blocks.append(_image_block(block))
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def convert_messages(
    model: Model, context: Context, oauth: bool, cache_control: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """The ``messages`` array, consecutive tool results merged into one user message."""
    out: list[dict[str, Any]] = []
    messages = transform_messages(context.messages, model, _normalize_tool_call_id)
    i = 0
    while i < len(messages):
        msg = messages[i]
        i += 1
        if isinstance(msg, UserMessage):
            if isinstance(msg.content, str):
                if msg.content.strip():
                    out.append({"role": "user", "content": sanitize_surrogates(msg.content)})
                continue
            blocks: list[dict[str, Any]] = []
            for item in msg.content:
                if isinstance(item, TextContent):
                    if item.text.strip():
                        blocks.append({"type": "text", "text": sanitize_surrogates(item.text)})
                elif isinstance(item, ImageContent):
                    blocks.append(_image_block(item))
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif isinstance(msg, AssistantMessage):
            blocks = []
            block: Any  # text, image and tool-call blocks share this name
            for block in msg.content:
                if isinstance(block, TextContent):
                    if block.text.strip():
                        blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
                elif isinstance(block, ThinkingContent):
                    if block.redacted:
                        blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
                    elif not block.thinking.strip():
                        continue
                    elif not block.thinking_signature or not block.thinking_signature.strip():
                        blocks.append({"type": "text", "text": sanitize_surrogates(block.thinking)})
                    else:
                        blocks.append(
                            {
                                "type": "thinking",
                                "thinking": sanitize_surrogates(block.thinking),
                                "signature": block.thinking_signature,
                            }
                        )
                elif isinstance(block, ToolCall):
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": block.id,
                            "name": to_claude_code_name(block.name) if oauth else block.name,
                            "input": block.arguments if block.arguments is not None else {},
                        }
                    )
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(msg, ToolResultMessage):
            results = [msg]
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                nxt = messages[i]
                assert isinstance(nxt, ToolResultMessage)
                results.append(nxt)
                i += 1
            out.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": r.tool_call_id,
                            "content": _tool_result_content(r.content),
                            "is_error": r.is_error,
                        }
                        for r in results
                    ],
                }
            )
    if cache_control is not None and out and out[-1]["role"] == "user":
        last = out[-1]
        if isinstance(last["content"], list):
            block = last["content"][-1] if last["content"] else None
            if block is not None and block.get("type") in ("text", "image", "tool_result"):
                block["cache_control"] = cache_control
        elif isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"], "cache_control": cache_control}]
    return out


def convert_tools(
    tools: list[ToolSpec], oauth: bool, eager_streaming: bool, cache_control: dict[str, Any] | None
) -> list[dict[str, Any]]:
    out = []
    for index, tool in enumerate(tools):
        schema = tool.parameters or {}
        entry: dict[str, Any] = {
            "name": to_claude_code_name(tool.name) if oauth else tool.name,
            "description": tool.description,
        }
        if eager_streaming:
            entry["eager_input_streaming"] = True
        entry["input_schema"] = {
            "type": "object",
            "properties": schema.get("properties") or {},
            "required": schema.get("required") or [],
        }
        if cache_control is not None and index == len(tools) - 1:
            entry["cache_control"] = cache_control
        out.append(entry)
    return out


def build_params(model: Model, context: Context, options: StreamOptions, oauth: bool) -> dict[str, Any]:
    """The request body, keys in pi's order."""
    cache_control = cache_control_for(model, options.cache_retention)
    thinking = thinking_options(model, options)
    max_tokens = thinking["max_tokens"] or model.max_tokens // 3
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(model, context, oauth, cache_control),
        "max_tokens": max_tokens,
        "stream": True,
    }
    control = {"cache_control": cache_control} if cache_control is not None else {}
    if oauth:
        system = [{"type": "text", "text": CLAUDE_CODE_IDENTITY, **control}]
        if context.system_prompt:
            system.append({"type": "text", "text": sanitize_surrogates(context.system_prompt), **control})
        params["system"] = system
    elif context.system_prompt:
        params["system"] = [{"type": "text", "text": sanitize_surrogates(context.system_prompt), **control}]
    if options.temperature is not None and not thinking["thinking_enabled"]:
        params["temperature"] = options.temperature
    if context.tools:
        eager = _compat(model)["supportsEagerToolInputStreaming"]
        params["tools"] = convert_tools(context.tools, oauth, eager, cache_control)
    if model.reasoning:
        if thinking["thinking_enabled"]:
            display = options.extra.get("thinking_display") or "summarized"
            if supports_adaptive_thinking(model.id):
                params["thinking"] = {"type": "adaptive", "display": display}
                if thinking.get("effort"):
                    params["output_config"] = {"effort": thinking["effort"]}
            else:
                params["thinking"] = {
                    "type": "enabled",
                    "budget_tokens": thinking.get("budget") or 1024,
                    "display": display,
                }
        else:
            params["thinking"] = {"type": "disabled"}
    metadata = options.extra.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        params["metadata"] = {"user_id": metadata["user_id"]}
    tool_choice = options.extra.get("tool_choice")
    if tool_choice:
        params["tool_choice"] = {"type": tool_choice} if isinstance(tool_choice, str) else tool_choice
    return params


_AUTH_HEADERS = frozenset({"authorization", "x-api-key", "cf-aig-authorization"})


def credentials(options: StreamOptions, provider: str | None = None) -> tuple[str, str]:
    """``(api_key, bearer_token)`` of a request.

    The environment lookup answers ``<authenticated>`` for ``ANTHROPIC_AUTH_TOKEN`` (a gateway's
    token): it is sent as ``Authorization: Bearer`` and never as ``x-api-key``, as pi 1.6 does.
    """
    api_key = options.api_key or ""
    if api_key != AUTHENTICATED:
        return api_key, ""
    token = provider_getenv(provider, ANTHROPIC_AUTH_TOKEN) or ""
    register_secret(token)
    return "", token


def has_auth_header(*header_sets: dict[str, str] | None) -> bool:
    """Whether configured headers authenticate the request themselves (pi's ``hasRequestAuth``)."""
    return any(name.lower() in _AUTH_HEADERS for headers in header_sets for name in headers or {})


def build_headers(model: Model, context: Context, options: StreamOptions) -> tuple[dict[str, str], bool]:
    """Request headers and whether the key is a Claude Code OAuth token."""
    api_key, bearer = credentials(options, model.provider)
    betas = []
    if context.tools and not _compat(model)["supportsEagerToolInputStreaming"]:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if options.extra.get("interleaved_thinking", True) and not supports_adaptive_thinking(model.id):
        betas.append(INTERLEAVED_THINKING_BETA)
    headers: dict[str, str] = {
        "Content-Type": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
        "accept": "application/json",
        "anthropic-dangerous-direct-browser-access": "true",
    }
    oauth = False
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    elif not api_key:
        pass  # the configured headers authenticate (checked by build_request)
    elif model.provider == "cloudflare-ai-gateway":
        headers["cf-aig-authorization"] = f"Bearer {api_key}"
    elif model.provider == "github-copilot":
        headers["Authorization"] = f"Bearer {api_key}"
    elif is_oauth_token(api_key):
        oauth = True
        headers["Authorization"] = f"Bearer {api_key}"
        betas = [*OAUTH_BETAS, *betas]
        headers["user-agent"] = f"claude-cli/{CLAUDE_CODE_VERSION}"
        headers["x-app"] = "cli"
    else:
        headers["X-Api-Key"] = api_key
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    headers.update(model.headers or {})
    if model.provider == "github-copilot":
        headers.update(copilot_dynamic_headers(context.messages))
    headers.update(options.headers or {})
    return headers, oauth


def build_request(model: Model, context: Context, options: StreamOptions) -> tuple[RequestSpec, bool]:
    if not any(credentials(options, model.provider)) and not has_auth_header(model.headers, options.headers):
        raise ProviderError(f"No API key for provider: {model.provider}")
    headers, oauth = build_headers(model, context, options)
    base = resolve_base_url(model).rstrip("/")
    spec = RequestSpec(
        url=f"{base}/v1/messages", headers=headers, body=build_params(model, context, options, oauth)
    )
    return spec, oauth


# ---------------------------------------------------------------------------
# Response stream
# ---------------------------------------------------------------------------


def map_stop_reason(reason: str) -> str:
    """pi's mapping; an unknown reason is an error."""
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop"
    if reason == "max_tokens":
        return "length"
    if reason == "tool_use":
        return "toolUse"
    if reason in ("refusal", "sensitive"):
        return "error"
    raise ProviderError(f"Unhandled stop reason: {reason}")


class EventDecoder:
    """Anthropic stream events -> stream events, blocks matched by their wire ``index``."""

    def __init__(self, builder: MessageBuilder, tools: list[ToolSpec], oauth: bool) -> None:
        self.b = builder
        self.message = builder.message
        self.tools = tools
        self.oauth = oauth
        self.by_wire_index: dict[int, int] = {}
        self.saw_start = False
        self.saw_stop = False

    def feed(self, event: dict[str, Any], out: list[StreamEvent]) -> None:
        kind = event.get("type")
        if kind == "content_block_delta":
            self._delta(event, out)
        elif kind == "content_block_start":
            self._start_block(event, out)
        elif kind == "content_block_stop":
            self._stop_block(event, out)
        elif kind == "message_start":
            self.saw_start = True
            message = event.get("message") or {}
            self.message.response_id = message.get("id")
            usage = message.get("usage") or {}
            self.b.set_usage(
                input=usage.get("input_tokens") or 0,
                output=usage.get("output_tokens") or 0,
                cache_read=usage.get("cache_read_input_tokens") or 0,
                cache_write=usage.get("cache_creation_input_tokens") or 0,
            )
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason"):
                self.message.raw_stop_reason = str(delta["stop_reason"])
                self.message.stop_reason = map_stop_reason(delta["stop_reason"])  # type: ignore[assignment]
            usage = event.get("usage") or {}
            self.b.set_usage(
                input=usage.get("input_tokens"),
                output=usage.get("output_tokens"),
                cache_read=usage.get("cache_read_input_tokens"),
                cache_write=usage.get("cache_creation_input_tokens"),
                # a part of output_tokens, where the API says (pi 1.6)
                reasoning=(usage.get("output_tokens_details") or {}).get("thinking_tokens"),
            )
            if usage and is_openrouter(self.b.model):
                billed = billed_cost(usage)
                if billed is not None:
                    self.b.set_billed_cost(billed)
        elif kind == "message_stop":
            self.saw_stop = True

    def _start_block(self, event: dict[str, Any], out: list[StreamEvent]) -> None:
        block = event.get("content_block") or {}
        kind = block.get("type")
        wire_index = event.get("index")
        b = self.b
        if kind == "text":
            index, started = b.text_start()
        elif kind == "thinking":
            index, started = b.thinking_start()
            b.thinking_signature(index, "")
        elif kind == "redacted_thinking":
            index, started = b.thinking_start(redacted=True)
            thinking = self.message.content[index]
            assert isinstance(thinking, ThinkingContent)
            thinking.thinking = REDACTED_THINKING_TEXT
            thinking.thinking_signature = block.get("data")
        elif kind == "tool_use":
            name = block.get("name") or ""
            if self.oauth:
                name = from_claude_code_name(name, self.tools)
            index, started = b.toolcall_start(block.get("id") or "", name)
            call = self.message.content[index]
            assert isinstance(call, ToolCall)
            initial = block.get("input")
            call.arguments = initial if isinstance(initial, dict) else {}
        else:
            return
        self.message.content[index].extra["index"] = wire_index
        if isinstance(wire_index, int):
            self.by_wire_index[wire_index] = index
        out.append(started)

    def _delta(self, event: dict[str, Any], out: list[StreamEvent]) -> None:
        index = self.by_wire_index.get(event.get("index"), -1)  # type: ignore[arg-type]
        if index < 0:
            return
        block = self.message.content[index]
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(block, TextContent):
            out.append(self.b.text_delta(index, delta.get("text") or ""))
        elif kind == "thinking_delta" and isinstance(block, ThinkingContent):
            out.append(self.b.thinking_delta(index, delta.get("thinking") or ""))
        elif kind == "input_json_delta" and isinstance(block, ToolCall):
            out.append(self.b.toolcall_delta(index, delta.get("partial_json") or ""))
        elif kind == "signature_delta" and isinstance(block, ThinkingContent):
            self.b.thinking_signature(index, delta.get("signature") or "", append=True)

    def _stop_block(self, event: dict[str, Any], out: list[StreamEvent]) -> None:
        wire_index = event.get("index")
        index = self.by_wire_index.pop(wire_index, -1) if isinstance(wire_index, int) else -1
        if index < 0:
            return
        block = self.message.content[index]
        block.extra.pop("index", None)
        if isinstance(block, TextContent):
            out.append(self.b.text_end(index))
        elif isinstance(block, ThinkingContent):
            out.append(self.b.thinking_end(index))
        elif isinstance(block, ToolCall):
            out.append(self.b.toolcall_end(index, parse_streaming_json(self.b.partial_json(index))))


def make_decoder(context: Context, oauth: bool) -> Any:
    async def decode(
        response: StreamedResponse, b: MessageBuilder, guard: AbortGuard
    ) -> AsyncIterator[list[StreamEvent]]:
        decoder = EventDecoder(b, context.tools, oauth)
        # a list per SSE event, handed on before the next is applied: listeners see the message
        # exactly as of each event, however the network cut the body
        async for batch in iter_sse_batches(response.aiter_bytes()):
            for name, data in batch:
                if name == "error":
                    raise ProviderError(data.decode("utf-8", "replace"))
                if name not in _MESSAGE_EVENTS:
                    continue
                try:
                    event = parse_json_with_repair(data.decode("utf-8", "replace"))
                except ValueError as exc:
                    text = data.decode("utf-8", "replace")
                    raise ProviderError(
                        f"Could not parse Anthropic SSE event {name}: {exc}; data={text}"
                    ) from exc
                if isinstance(event, dict):
                    for events in announced(decoder.feed, event):
                        yield events
        if decoder.saw_start and not decoder.saw_stop:
            raise ProviderError("Anthropic stream ended before message_stop")
        if guard.aborted:
            raise ProviderError(ABORTED_MESSAGE)
        if b.message.stop_reason in ("error", "aborted"):
            raise ProviderError("An unknown error occurred")

    return decode


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from the Anthropic Messages API."""
    oauth_flag: list[bool] = [False]

    def prepare() -> RequestSpec:
        spec, oauth = build_request(model, context, options)
        oauth_flag[0] = oauth
        return spec

    def decode(
        response: StreamedResponse, b: MessageBuilder, guard: AbortGuard
    ) -> AsyncIterator[list[StreamEvent]]:
        return make_decoder(context, oauth_flag[0])(response, b, guard)  # type: ignore[no-any-return]

    return run_stream(MessageBuilder(model), options, prepare, decode, format_error=anthropic_http_error)
