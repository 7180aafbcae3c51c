"""The ``bedrock-converse-stream`` API: Amazon Bedrock's ConverseStream over plain HTTP.

The request is signed with our own SigV4 (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/
``AWS_SESSION_TOKEN``, or a named ``AWS_PROFILE``'s keys) or carries a bearer token (the key, or
``AWS_BEARER_TOKEN_BEDROCK``); every variable is read from the provider's auth.json ``env`` map
first. The answer is an AWS
event-stream decoded by :mod:`piko.plugins.providers.aws_eventstream`. Region and endpoint
follow pi: ``AWS_REGION``/``AWS_DEFAULT_REGION``, else the region of a standard Bedrock base
URL, else ``us-east-1``; a custom base URL (a proxy, a VPC endpoint) is used as it is.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import AsyncIterator
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from urllib.parse import quote
from urllib.parse import urlsplit

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
from piko.lib.provider_env import provider_env
from piko.lib.provider_env import provider_getenv
from piko.plugins.providers.builder import MessageBuilder
from piko.plugins.providers.common import AbortGuard
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import adjust_max_tokens_for_thinking
from piko.plugins.providers.common import base_max_tokens
from piko.plugins.providers.common import layer_headers
from piko.plugins.providers.common import parse_event_json
from piko.plugins.providers.common import resolve_cache_retention
from piko.plugins.providers.common import retry_after_seconds
from piko.plugins.providers.common import run_stream
from piko.plugins.providers.common import sanitize_surrogates
from piko.plugins.providers.common import transform_messages
from piko.plugins.providers.env_auth import AUTHENTICATED
from piko.plugins.providers.http_client import RetryRules
from piko.plugins.providers.stream_processor import StreamProcessor

if TYPE_CHECKING:
    from piko.plugins.providers.http_client import StreamedResponse

SERVICE = "bedrock"
DEFAULT_REGION = "us-east-1"
SDK_MAX_ATTEMPTS = 3  # the AWS SDK's standard retry mode

ERROR_PREFIXES = {
    "InternalServerException": "Internal server error",
    "ModelStreamErrorException": "Model stream error",
    "ValidationException": "Validation error",
    "ThrottlingException": "Throttling error",
    "ServiceUnavailableException": "Service unavailable",
}
THROTTLING_CODES = frozenset(
    {
        "ThrottlingException", "TooManyRequestsException", "ThrottledException", "RequestLimitExceeded",
        "RequestThrottled", "RequestThrottledException", "SlowDown", "ProvisionedThroughputExceededException",
        "TransactionInProgressException", "BandwidthLimitExceeded", "LimitExceededException", "EC2ThrottledException",
    }
)  # fmt: skip
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384, "max": 16384}
IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}


UNKNOWN_ERROR = "An unknown error occurred"


# ---------------------------------------------------------------------------
# Model families
# ---------------------------------------------------------------------------


def _candidates(model: Model) -> list[str]:
    values = [model.id, model.name] if model.name else [model.id]
    out: list[str] = []
    for value in values:
        lower = value.lower()
        out += [lower, re.sub(r"[\s_.:]+", "-", lower)]
    return out


def is_claude(model: Model) -> bool:
    model_id = model.id.lower()
    name = (model.name or "").lower()
    return (
        "anthropic.claude" in model_id
        or "anthropic/claude" in model_id
        or "anthropic.claude" in name
        or "anthropic/claude" in name
        or "claude" in name
    )


def supports_adaptive_thinking(model: Model) -> bool:
    return any(s in c for c in _candidates(model) for s in ("opus-4-6", "opus-4-7", "sonnet-4-6"))


def supports_prompt_caching(model: Model) -> bool:
    candidates = _candidates(model)
    if not any("claude" in c for c in candidates):
        return provider_getenv(model.provider, "AWS_BEDROCK_FORCE_CACHE") == "1"
    return any("-4-" in c or "claude-3-7-sonnet" in c or "claude-3-5-haiku" in c for c in candidates)


def _effort(model: Model, level: str) -> str:
    from piko.plugins.providers.anthropic_messages.wire import effort_for_level

    if level == "xhigh" and any("opus-4-7" in c for c in _candidates(model)):
        return "xhigh"
    return effort_for_level(model, level)  # the Claude models' own mapping


# ---------------------------------------------------------------------------
# Request
# ---------------------------------------------------------------------------


def _cache_point(retention: str) -> dict[str, Any]:
    point: dict[str, Any] = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def _image(block: ImageContent) -> dict[str, Any]:
    fmt = IMAGE_FORMATS.get(block.mime_type)
    if fmt is None:
        raise ProviderError(f"Unknown image type: {block.mime_type}")
    return {"image": {"source": {"bytes": block.data}, "format": fmt}}


def _normalize_tool_call_id(call_id: str, _model: Model, _source: AssistantMessage) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    content = [
        _image(b) if isinstance(b, ImageContent) else {"text": sanitize_surrogates(b.text)}
        for b in message.content
    ]
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id,
            "content": content,
            "status": "error" if message.is_error else "success",
        }
    }


def convert_messages(context: Context, model: Model, retention: str) -> list[dict[str, Any]]:
    messages = transform_messages(context.messages, model, _normalize_tool_call_id)
    signatures = is_claude(model)
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                content: list[dict[str, Any]] = [{"text": sanitize_surrogates(message.content)}]
            else:
                content = [
                    _image(b) if isinstance(b, ImageContent) else {"text": sanitize_surrogates(b.text)}
                    for b in message.content
                ]
            out.append({"role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            for block in message.content:
                if isinstance(block, TextContent):
                    if block.text.strip():
                        blocks.append({"text": sanitize_surrogates(block.text)})
                elif isinstance(block, ToolCall):
                    blocks.append(
                        {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}}
                    )
                elif isinstance(block, ThinkingContent):
                    if not block.thinking.strip():
                        continue
                    text = sanitize_surrogates(block.thinking)
                    if not signatures:
                        blocks.append({"reasoningContent": {"reasoningText": {"text": text}}})
                    elif block.thinking_signature and block.thinking_signature.strip():
                        blocks.append(
                            {
                                "reasoningContent": {
                                    "reasoningText": {"text": text, "signature": block.thinking_signature}
                                }
                            }
                        )
                    else:
                        blocks.append({"text": text})
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            # consecutive tool results travel in one user message
            if out and out[-1]["role"] == "user" and out[-1].get("_tool_results"):
                out[-1]["content"].append(_tool_result(message))
            else:
                out.append({"role": "user", "content": [_tool_result(message)], "_tool_results": True})
    for entry in out:
        entry.pop("_tool_results", None)
    if retention != "none" and supports_prompt_caching(model) and out and out[-1]["role"] == "user":
        out[-1]["content"].append(_cache_point(retention))
    return out


def convert_tool_config(tools: list[ToolSpec], tool_choice: Any) -> dict[str, Any] | None:
    if not tools or tool_choice == "none":
        return None
    config: dict[str, Any] = {
        "tools": [
            {
                "toolSpec": {
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": {"json": t.parameters},
                }
            }
            for t in tools
        ]
    }
    if tool_choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif tool_choice == "any":
        config["toolChoice"] = {"any": {}}
    elif isinstance(tool_choice, dict) and tool_choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": tool_choice.get("name")}}
    return config


def configured_region(options: StreamOptions, provider: str | None = None) -> str | None:
    """The region asked for: the ``region`` option, else ``AWS_REGION``/``AWS_DEFAULT_REGION``
    (``provider``'s auth.json ``env`` map first)."""
    return (
        options.extra.get("region")
        or provider_getenv(provider, "AWS_REGION")
        or provider_getenv(provider, "AWS_DEFAULT_REGION")
        or None
    )


def standard_endpoint_region(base_url: str) -> str | None:
    if not base_url:
        return None
    host = (urlsplit(base_url).hostname or "").lower()
    match = re.match(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$", host)
    return match.group(1) if match else None


def resolve_endpoint(model: Model, options: StreamOptions) -> tuple[str, str]:
    """``(endpoint, region)``: pi keeps a custom base URL; a standard one only without a region."""
    region = configured_region(options, model.provider)
    has_profile = bool(os.environ.get("AWS_PROFILE"))  # pi: only an ambient profile leaves the region to it
    endpoint_region = standard_endpoint_region(model.base_url)
    explicit = not endpoint_region or (not region and not has_profile)
    if not region:
        region = endpoint_region if (endpoint_region and explicit) else DEFAULT_REGION
    if explicit and model.base_url:
        endpoint = model.base_url.rstrip("/")
    else:
        suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
        endpoint = f"https://bedrock-runtime.{region}{suffix}"
    return endpoint, region


def additional_fields(
    model: Model, options: StreamOptions, level: str | None, budgets: dict[str, int]
) -> dict[str, Any] | None:
    if not level or not model.reasoning or not is_claude(model):
        return None
    region = configured_region(options, model.provider) or ""
    gov = region.lower().startswith("us-gov-") or model.id.lower().startswith(("us-gov.", "arn:aws-us-gov:"))
    display = None if gov else (options.extra.get("thinking_display") or "summarized")
    result: dict[str, Any]
    if supports_adaptive_thinking(model):
        thinking: dict[str, Any] = {"type": "adaptive"}
        if display is not None:
            thinking["display"] = display
        return {"thinking": thinking, "output_config": {"effort": _effort(model, level)}}
    key = "high" if level in ("xhigh", "max") else level
    budget = budgets.get(key)
    if budget is None:
        budget = THINKING_BUDGETS.get(level, 16384)
    thinking = {"type": "enabled", "budget_tokens": budget}
    if display is not None:
        thinking["display"] = display
    result = {"thinking": thinking}
    if options.extra.get("interleaved_thinking", True):
        result["anthropic_beta"] = ["interleaved-thinking-2025-05-14"]
    return result


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The ConverseStream input pi builds; ``modelId`` is sent in the URL, the rest as the body."""
    retention = resolve_cache_retention(options.cache_retention)
    max_tokens = base_max_tokens(model, options)
    level = options.reasoning
    budgets = dict(options.thinking_budgets or {})
    if level and is_claude(model) and not supports_adaptive_thinking(model):
        max_tokens, budget = adjust_max_tokens_for_thinking(max_tokens or 0, model.max_tokens, level, budgets)
        budgets["high" if level in ("xhigh", "max") else level] = budget
    body: dict[str, Any] = {"modelId": model.id, "messages": convert_messages(context, model, retention)}
    if context.system_prompt:
        system: list[dict[str, Any]] = [{"text": sanitize_surrogates(context.system_prompt)}]
        if retention != "none" and supports_prompt_caching(model):
            system.append(_cache_point(retention))
        body["system"] = system
    inference: dict[str, Any] = {}
    if max_tokens is not None:
        inference["maxTokens"] = max_tokens
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    tool_config = convert_tool_config(context.tools, options.extra.get("tool_choice"))
    if tool_config is not None:
        body["toolConfig"] = tool_config
    fields = additional_fields(model, options, level, budgets)
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    if options.extra.get("request_metadata") is not None:
        body["requestMetadata"] = options.extra["request_metadata"]
    return body


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def _sanitize_code(raw: Any) -> str:
    value = str(raw)
    if "," in value:
        value = value.split(",")[0]
    if ":" in value:
        value = value.split(":")[0]
    if "#" in value:
        value = value.split("#")[1]
    return value


def error_code(headers: Mapping[str, str], data: Any) -> str | None:
    """The error's type, from ``x-amzn-errortype`` or the body's ``code``/``__type``."""
    header = headers.get("x-amzn-errortype")
    if header:
        return _sanitize_code(header)
    if isinstance(data, dict):
        for key, value in data.items():
            if key.lower() == "code" and value is not None:
                return _sanitize_code(value)
        if data.get("__type") is not None:
            return _sanitize_code(data["__type"])
    return None


def format_error(name: str, message: str) -> str:
    """pi's wording: a readable prefix for the retry-relevant exception types."""
    return f"{ERROR_PREFIXES.get(name, name)}: {message}"


def http_error_message(status: int, headers: Mapping[str, str], body: bytes) -> str:
    try:
        data = json.loads(body.decode("utf-8", "replace")) if body.strip() else {}
    except ValueError:
        data = {}
    code = error_code(headers, data)
    name = None
    if isinstance(data, dict):
        name = data.get("code") or data.get("Code")
    name = name or code or str(status)
    message = (data.get("message") or data.get("Message")) if isinstance(data, dict) else None
    return format_error(str(name), str(message or "UnknownError"))


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """The AWS SDK's standard mode retries throttling and transient server errors."""
    return error_code(headers, None) in THROTTLING_CODES or status in (429, 500, 502, 503, 504)


def retry_delay(retries_done: int, headers: Mapping[str, str]) -> float:
    """Full-jitter exponential backoff (0.1 s base, 0.5 s when throttled, at most 20 s)."""
    hint = retry_after_seconds(headers)
    if hint is not None and hint >= 0:
        return hint
    base = 0.5 if error_code(headers, None) in THROTTLING_CODES else 0.1
    return float(random.random() * min(20.0, base * 2**retries_done))


# ---------------------------------------------------------------------------
# Stream processing
# ---------------------------------------------------------------------------


_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


def map_stop_reason(reason: str | None) -> Any:
    return _STOP_REASONS.get(reason or "", "error")


ConverseEvent = tuple[str, dict[str, Any]]
"""A ConverseStream event: its type (``contentBlockDelta``...) and its payload."""


class ConverseProcessor(StreamProcessor[ConverseEvent]):
    """Feeds ConverseStream events into a builder, by Bedrock's content block index."""

    def __init__(self, builder: MessageBuilder) -> None:
        super().__init__(builder)
        self.open: dict[int, int] = {}  # Bedrock block index -> our content index

    def handle(self, chunk: ConverseEvent) -> None:
        event_type, data = chunk
        b = self.builder
        message = b.message
        if event_type == "messageStart":
            if data.get("role") != "assistant":
                raise ProviderError("Unexpected assistant message start but got user message start instead")
        elif event_type == "contentBlockStart":
            tool = (data.get("start") or {}).get("toolUse")
            if tool:
                index, start = b.toolcall_start(tool.get("toolUseId") or "", tool.get("name") or "")
                self.open[data.get("contentBlockIndex", 0)] = index
                self.emit(start)
        elif event_type == "contentBlockDelta":
            self._delta(data.get("contentBlockIndex", 0), data.get("delta") or {})
        elif event_type == "contentBlockStop":
            closing = self.open.pop(data.get("contentBlockIndex", 0), None)
            if closing is None:
                return
            index = closing
            block = message.content[index]
            if isinstance(block, TextContent):
                self.emit(b.text_end(index))
            elif isinstance(block, ThinkingContent):
                self.emit(b.thinking_end(index))
            elif isinstance(block, ToolCall):
                self.emit(b.toolcall_end(index))
        elif event_type == "messageStop":
            if data.get("stopReason") is not None:
                message.raw_stop_reason = str(data["stopReason"])
            message.stop_reason = map_stop_reason(data.get("stopReason"))
            if message.stop_reason == "error":
                message.error_message = UNKNOWN_ERROR
        elif event_type == "metadata":
            usage = data.get("usage")
            if usage:
                b.set_usage(
                    input=usage.get("inputTokens") or 0,
                    output=usage.get("outputTokens") or 0,
                    cache_read=usage.get("cacheReadInputTokens") or 0,
                    cache_write=usage.get("cacheWriteInputTokens") or 0,
                )
                message.usage.total_tokens = usage.get("totalTokens") or (
                    message.usage.input + message.usage.output
                )

    def _delta(self, block_index: int, delta: dict[str, Any]) -> None:
        b = self.builder
        index = self.open.get(block_index)
        block = b.message.content[index] if index is not None else None
        if "text" in delta and delta["text"] is not None:
            if index is None:
                index, start = b.text_start()
                self.open[block_index] = index
                self.emit(start)
                block = b.message.content[index]
            if isinstance(block, TextContent):
                self.emit(b.text_delta(index, delta["text"]))
        elif delta.get("toolUse") and isinstance(block, ToolCall) and index is not None:
            self.emit(b.toolcall_delta(index, delta["toolUse"].get("input") or ""))
        elif delta.get("reasoningContent"):
            reasoning = delta["reasoningContent"]
            if index is None:
                index, start = b.thinking_start()
                b.thinking_signature(index, "")
                self.open[block_index] = index
                self.emit(start)
                block = b.message.content[index]
            if isinstance(block, ThinkingContent):
                if reasoning.get("text"):
                    self.emit(b.thinking_delta(index, reasoning["text"]))
                if reasoning.get("signature"):
                    b.thinking_signature(index, reasoning["signature"], append=True)


def stream_exception(message_type: str, headers: Mapping[str, Any], payload: bytes) -> ProviderError:
    """An ``exception`` or ``error`` frame as the error pi reports."""
    if message_type == "error":
        return ProviderError(str(headers.get(":error-message") or "UnknownError"))
    kind = str(headers.get(":exception-type") or "UnknownError")
    name = kind[:1].upper() + kind[1:]
    try:
        data = json.loads(payload.decode("utf-8", "replace")) if payload else {}
    except ValueError:
        data = {}
    text = (data.get("message") or data.get("Message")) if isinstance(data, dict) else None
    return ProviderError(format_error(name, str(text or "UnknownError")))


async def stream_events(response: StreamedResponse) -> AsyncIterator[ConverseEvent]:
    """The event-stream frames' events; exception frames end the stream with pi's wording."""
    from piko.plugins.providers.aws_eventstream import EventStreamDecoder
    from piko.plugins.providers.aws_eventstream import EventStreamError

    decoder = EventStreamDecoder()
    try:
        async for chunk in response.aiter_bytes():
            for frame in decoder.feed(chunk):
                kind = frame.message_type
                if kind != "event":
                    raise stream_exception(kind, frame.headers, frame.payload)
                data = parse_event_json(frame.payload) if frame.payload else {}
                yield frame.event_type or "", data if isinstance(data, dict) else {}
        if decoder.pending:
            raise ProviderError("terminated")
    except EventStreamError as exc:
        raise ProviderError(str(exc)) from exc


def decode(
    response: StreamedResponse, builder: MessageBuilder, guard: AbortGuard | None = None
) -> AsyncIterator[list[StreamEvent]]:
    """ConverseStream events as events, a list per frame."""
    return ConverseProcessor(builder).process(stream_events(response))


# ---------------------------------------------------------------------------
# The stream function
# ---------------------------------------------------------------------------


def model_url(endpoint: str, model_id: str) -> str:
    return f"{endpoint}/model/{quote(model_id, safe='-_.~')}/converse-stream"


def prepare(model: Model, context: Context, options: StreamOptions) -> tuple[dict[str, Any], str, str]:
    """``(payload, endpoint, region)``; raises for a bad configuration or history."""
    endpoint, region = resolve_endpoint(model, options)
    return build_body(model, context, options), endpoint, region


def authorize(
    url: str,
    headers: dict[str, str],
    body: bytes,
    region: str,
    options: StreamOptions,
    provider: str | None = None,
) -> dict[str, str]:
    """Sign with SigV4, or add the bearer token; no credentials at all is an error.

    As pi 1.6: the bearer token is the ``bearer_token`` option, the key (an auth.json key of
    ``amazon-bedrock`` is a bearer token) or ``AWS_BEARER_TOKEN_BEDROCK``; then a profile set in
    ``provider``'s auth.json ``env`` map wins over access keys, which win over an ambient
    ``AWS_PROFILE``. Every variable is read from ``provider``'s ``env`` map first.
    """
    from piko.plugins.providers import aws_sigv4
    from piko.plugins.providers.aws_profiles import profile_keys

    def getenv(name: str) -> str | None:
        return provider_getenv(provider, name)

    if getenv("AWS_BEDROCK_SKIP_AUTH") == "1":
        credentials = aws_sigv4.Credentials(
            access_key_id="dummy-access-key", secret_access_key="dummy-secret-key"
        )
        return aws_sigv4.sign("POST", url, headers, body, credentials, region=region, service=SERVICE).headers
    key = options.api_key if options.api_key and options.api_key != AUTHENTICATED else None
    bearer = options.extra.get("bearer_token") or key or getenv("AWS_BEARER_TOKEN_BEDROCK")
    if bearer:
        return {**headers, "authorization": f"Bearer {bearer}"}
    scoped_profile = provider_env(provider).get("AWS_PROFILE")
    key_id, secret = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
    if key_id and secret and not scoped_profile:
        credentials = aws_sigv4.Credentials(
            access_key_id=key_id, secret_access_key=secret, session_token=getenv("AWS_SESSION_TOKEN") or None
        )
    else:
        found = profile_keys(scoped_profile or getenv("AWS_PROFILE") or "default", getenv)
        if found is None:
            raise ProviderError("Could not load credentials from any providers")
        credentials = aws_sigv4.Credentials(
            access_key_id=found.access_key_id,
            secret_access_key=found.secret_access_key,
            session_token=found.session_token,
        )
    return aws_sigv4.sign("POST", url, headers, body, credentials, region=region, service=SERVICE).headers


# The AWS SDK's standard retry mode: three attempts, full-jitter backoff, only 2xx succeeds.
AWS_RETRIES = RetryRules(
    SDK_MAX_ATTEMPTS - 1, should_retry, retry_delay, success_below=300, configurable=False
)


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from Bedrock's ConverseStream; never raises."""
    builder = MessageBuilder(model)
    builder.message.api = "bedrock-converse-stream"
    target: dict[str, str] = {}

    def prepare_request() -> RequestSpec:
        payload, endpoint, region = prepare(model, context, options)
        target.update(endpoint=endpoint, region=region)
        own = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}
        return RequestSpec(url="", headers=layer_headers(own, model, options), body=payload)

    def seal(spec: RequestSpec) -> RequestSpec:
        """Once ``on_payload`` had its say: the model id picks the URL, and the body is signed."""
        payload = spec.body
        model_id = payload.get("modelId") if isinstance(payload, dict) else None
        url = model_url(target["endpoint"], str(model_id or model.id))
        body = dumps(_without_model_id(payload)).encode("utf-8")
        return RequestSpec(
            url=url,
            headers=authorize(url, spec.headers, body, target["region"], options, model.provider),
            body=body,
        )

    return run_stream(
        builder,
        options,
        prepare_request,
        decode,
        describe_error=http_error_message,
        rules=AWS_RETRIES,
        seal=seal,
        unknown_error=UNKNOWN_ERROR,
    )


def _without_model_id(payload: Any) -> Any:
    if isinstance(payload, dict) and "modelId" in payload:
        return {k: v for k, v in payload.items() if k != "modelId"}
    return payload
