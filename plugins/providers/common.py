"""Helpers shared by provider APIs: message transforms, thinking budgets, JSON repair, errors, HTTP.

Message side (pure functions, no I/O): :func:`transform_messages` (pi's cross-provider replay
rules), :func:`sanitize_surrogates`, thinking-level clamping and budgets, partial JSON parsing.
Transport side: one shared ``httpx.AsyncClient`` per event loop, :func:`send_with_retries` (the
OpenAI/Anthropic SDKs' retry rules), error wording as the SDKs word it, :class:`AbortGuard`
(stops a stream at once on abort without per-chunk cost) and :func:`run_stream`, the loop that
turns a request plus a decoder into stream events ending in exactly one ``done`` or ``error``.
httpx is imported inside the functions that need it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from piko.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from piko.streaming import StreamEvent, StreamOptions

if TYPE_CHECKING:
    import httpx

    from piko.abort import AbortSignal
    from piko.plugins.providers.builder import MessageBuilder

__all__ = [
    "ABORTED_BEFORE_REQUEST",
    "ABORTED_MESSAGE",
    "AbortGuard",
    "ProviderError",
    "RequestSpec",
    "adjust_max_tokens_for_thinking",
    "anthropic_http_error",
    "base_max_tokens",
    "clamp_thinking_level",
    "copilot_dynamic_headers",
    "fast_json_loads",
    "get_client",
    "has_copilot_vision_input",
    "iter_sse_batches",
    "iter_sse_bytes",
    "js_json",
    "network_error_message",
    "openai_http_error",
    "parse_json_with_repair",
    "parse_streaming_json",
    "repair_json",
    "resolve_base_url",
    "resolve_cache_retention",
    "retry_after_seconds",
    "run_stream",
    "sanitize_surrogates",
    "sdk_error_message",
    "send_with_retries",
    "supported_thinking_levels",
    "transform_messages",
]

ABORTED_MESSAGE = "Request was aborted"  # pi's wording once the response has started
ABORTED_BEFORE_REQUEST = "Request was aborted."  # the SDKs' wording before it has
DEFAULT_TIMEOUT_S = 600.0  # the SDKs' default request timeout (10 minutes)
DEFAULT_MAX_RETRIES = 2  # the SDKs' default
DEFAULT_MAX_RETRY_DELAY_MS = 60_000  # pi's retry.provider.maxRetryDelayMs default

# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (they make request bodies invalid); keep paired ones."""
    if not _SURROGATE.search(text):
        return text
    # join valid high+low pairs into one code point, then drop what is left unpaired
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub("", joined)


def js_json(value: Any) -> str:
    """JSON as JavaScript's ``JSON.stringify`` writes it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------
# Cross-provider replay (pi's transformMessages)
# ---------------------------------------------------------------------------

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"


def _replace_images(content: list[Any], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_placeholder:
                result.append(TextContent(text=placeholder))
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = isinstance(block, TextContent) and block.text == placeholder
    return result


def _downgrade_images(messages: Iterable[Message], model: Model) -> list[Message]:
    if "image" in model.input:
        return list(messages)
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, UserMessage) and isinstance(msg.content, list):
            msg = attrs.evolve(msg, content=_replace_images(msg.content, NON_VISION_USER_IMAGE_PLACEHOLDER))
        elif isinstance(msg, ToolResultMessage):
            msg = attrs.evolve(msg, content=_replace_images(msg.content, NON_VISION_TOOL_IMAGE_PLACEHOLDER))
        out.append(msg)
    return out


def transform_messages(
    messages: Iterable[Message],
    model: Model,
    normalize_tool_call_id: Callable[[str, Model, AssistantMessage], str] | None = None,
) -> list[Message]:
    """History made acceptable to ``model``, whichever provider produced it (pi's rules).

    Images become placeholders for text-only models; thinking from another model becomes text
    (redacted thinking is dropped); tool call ids are normalised by ``normalize_tool_call_id``
    and tool results follow; errored or aborted assistant turns are skipped; tool calls left
    without a result get a synthetic ``No result provided`` error result.
    """
    id_map: dict[str, str] = {}
    transformed: list[Message] = []
    for msg in _downgrade_images(messages, model):
        if isinstance(msg, ToolResultMessage):
            mapped = id_map.get(msg.tool_call_id)
            if mapped and mapped != msg.tool_call_id:
                msg = attrs.evolve(msg, tool_call_id=mapped)
            transformed.append(msg)
            continue
        if not isinstance(msg, AssistantMessage):
            transformed.append(msg)
            continue
        same_model = msg.provider == model.provider and msg.api == model.api and msg.model == model.id
        content: list[Any] = []
        for block in msg.content:
            if isinstance(block, ThinkingContent):
                if block.redacted:
                    if same_model:
                        content.append(block)
                    continue
                if same_model and block.thinking_signature:
                    content.append(block)
                    continue
                if not block.thinking or not block.thinking.strip():
                    continue
                content.append(block if same_model else TextContent(text=block.thinking))
            elif isinstance(block, TextContent):
                content.append(block if same_model else TextContent(text=block.text))
            elif isinstance(block, ToolCall):
                call = block
                if not same_model and call.thought_signature:
                    call = attrs.evolve(call, thought_signature=None)
                if not same_model and normalize_tool_call_id is not None:
                    new_id = normalize_tool_call_id(call.id, model, msg)
                    if new_id != call.id:
                        id_map[call.id] = new_id
                        call = attrs.evolve(call, id=new_id)
                content.append(call)
            else:
                content.append(block)
        transformed.append(attrs.evolve(msg, content=content))

    result: list[Message] = []
    pending: list[ToolCall] = []
    seen_results: set[str] = set()

    def flush_orphans() -> None:
        nonlocal pending, seen_results
        for call in pending:
            if call.id not in seen_results:
                result.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                        timestamp=int(time.time() * 1000),
                    )
                )
        pending = []
        seen_results = set()

    for msg in transformed:
        if isinstance(msg, AssistantMessage):
            flush_orphans()
            if msg.stop_reason in ("error", "aborted"):
                continue
            calls = [b for b in msg.content if isinstance(b, ToolCall)]
            if calls:
                pending = calls
                seen_results = set()
            result.append(msg)
        elif isinstance(msg, ToolResultMessage):
            seen_results.add(msg.tool_call_id)
            result.append(msg)
        elif isinstance(msg, UserMessage):
            flush_orphans()
            result.append(msg)
        else:
            result.append(msg)
    flush_orphans()
    return result


# ---------------------------------------------------------------------------
# Options: cache retention, max tokens, thinking levels and budgets
# ---------------------------------------------------------------------------

_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_OUTPUT_TOKENS = 1024


def resolve_cache_retention(value: str | None) -> str:
    """``none``/``short``/``long``; unset means ``short`` unless ``PI_CACHE_RETENTION=long``."""
    if value:
        return value
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


def base_max_tokens(model: Model, options: StreamOptions) -> int | None:
    """The requested output limit: the option, else the model's (at most 32000)."""
    if options.max_tokens:
        return int(options.max_tokens)
    return min(model.max_tokens, 32000) if model.max_tokens > 0 else None


def supported_thinking_levels(model: Model) -> list[str]:
    """Levels a model accepts (``off`` only for non-reasoning models; ``xhigh`` only when mapped)."""
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    levels = []
    for level in _LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level == "xhigh" and level not in level_map:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """The nearest supported level: the next higher one, else the next lower one."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in _LEVELS:
        return available[0] if available else "off"
    index = _LEVELS.index(level)
    for candidate in _LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def adjust_max_tokens_for_thinking(
    base: int, model_max: int, level: str, budgets: Mapping[str, int] | None = None
) -> tuple[int, int]:
    """``(max_tokens, thinking_budget)`` for budget-based thinking (``xhigh`` counts as ``high``)."""
    merged = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    key = "high" if level == "xhigh" else level
    budget = int(merged.get(key, DEFAULT_THINKING_BUDGETS["high"]))
    max_tokens = min(base + budget, model_max)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_OUTPUT_TOKENS)
    return max_tokens, budget


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def repair_json(text: str) -> str:
    """Escape raw control characters inside strings and double backslashes of invalid escapes."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
        elif ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else None
            if nxt is None:
                out.append("\\\\")
            elif nxt == "u" and _HEX4.fullmatch(text, i + 2, i + 6):
                out.append(text[i : i + 6])
                i += 5
            elif nxt in _VALID_ESCAPES and nxt != "u":
                out.append("\\" + nxt)
                i += 1
            else:
                out.append("\\\\")
        elif ord(ch) < 0x20:
            out.append(_CONTROL_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def parse_json_with_repair(text: str) -> Any:
    """``json.loads``, retried once on the repaired text."""
    try:
        return fast_json_loads(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired != text:
            return json.loads(repaired)
        raise


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Arguments from possibly incomplete JSON: always an object (``{}`` when nothing parses)."""
    from piko.plugins.providers.builder import parse_partial_json

    if not text or not text.strip():
        return {}
    try:
        value = parse_json_with_repair(text)
        return value if isinstance(value, dict) else {}
    except ValueError:
        pass
    parsed = parse_partial_json(text)
    if parsed is None:
        parsed = parse_partial_json(repair_json(text))
    return parsed if isinstance(parsed, dict) else {}


try:  # orjson is a dependency; stay correct without it
    import orjson as _orjson

    _orjson_loads: Callable[[Any], Any] | None = _orjson.loads
except ImportError:  # pragma: no cover
    _orjson_loads = None


def fast_json_loads(data: str | bytes) -> Any:
    """Parse JSON with orjson, falling back to the stdlib (lone surrogates, odd numbers)."""
    if _orjson_loads is not None:
        try:
            return _orjson_loads(data)
        except ValueError:
            pass
    return json.loads(data)


# ---------------------------------------------------------------------------
# Server-sent events, straight from bytes
# ---------------------------------------------------------------------------


def _parse_block(block: bytes) -> tuple[str | None, bytes] | None:
    """One event block (the lines between two blank lines): ``(event, data)`` or ``None``."""
    event: str | None = None
    data: list[bytes] | None = None
    for line in block.split(b"\n"):
        if not line or line[0] == 58:  # empty, or a ':' comment
            continue
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            if data is None:
                data = [value]
            else:
                data.append(value)
        elif name == b"event":
            event = value.decode("utf-8", "replace")
    if data is None:
        return None
    return event, data[0] if len(data) == 1 else b"\n".join(data)


async def iter_sse_batches(chunks: AsyncIterator[bytes]) -> AsyncIterator[list[tuple[str | None, bytes]]]:
    """``(event, data)`` pairs from the raw byte chunks of an SSE body (``response.aiter_bytes()``),
    as one list per network chunk (iterating a list is much cheaper than an async generator).

    The rules of :func:`piko.plugins.providers.sse.iter_sse` (CR, LF and CRLF line ends, joined
    ``data`` lines, comments, one leading space dropped, dispatch at a blank line or at the end),
    without decoding to text first: ``data`` stays bytes, which ``orjson`` parses directly.
    """
    pending = b""
    skip_lf = False
    async for chunk in chunks:
        if skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        skip_lf = False
        if b"\r" in chunk:
            skip_lf = chunk.endswith(b"\r")  # the LF of a CRLF may open the next chunk
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if pending:
            chunk = pending + chunk
        blocks = chunk.split(b"\n\n")
        pending = blocks.pop()
        batch: list[tuple[str | None, bytes]] = []
        for block in blocks:
            # the common case: one "data: ..." line
            if block.startswith(b"data: ") and b"\n" not in block:
                batch.append((None, block[6:]))
            elif block:
                item = _parse_block(block)
                if item is not None:
                    batch.append(item)
        if batch:
            yield batch
    if pending:
        item = _parse_block(pending)
        if item is not None:
            yield [item]


async def iter_sse_bytes(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[str | None, bytes]]:
    """``(event, data)`` pairs one by one (see :func:`iter_sse_batches`)."""
    async for batch in iter_sse_batches(chunks):
        for item in batch:
            yield item


# ---------------------------------------------------------------------------
# Provider-specific request details shared by several APIs
# ---------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Z_][A-Z0-9_]*)\}")


def resolve_base_url(model: Model) -> str:
    """The model's base URL with ``{ENV_VAR}`` placeholders (Cloudflare) filled from the environment."""
    url = model.base_url
    if "{" not in url:
        return url

    def substitute(match: re.Match[str]) -> str:
        value = os.environ.get(match.group(1))
        if not value:
            raise ProviderError(f"{match.group(1)} is required for provider {model.provider} but is not set.")
        return value

    return _PLACEHOLDER.sub(substitute, url)


def has_copilot_vision_input(messages: Iterable[Message]) -> bool:
    """Whether a user message or tool result carries an image (GitHub Copilot's vision header)."""
    for msg in messages:
        if isinstance(msg, UserMessage | ToolResultMessage) and isinstance(msg.content, list):
            if any(isinstance(b, ImageContent) for b in msg.content):
                return True
    return False


def copilot_dynamic_headers(messages: list[Message]) -> dict[str, str]:
    """GitHub Copilot's per-request headers: initiator, intent, vision."""
    last = messages[-1] if messages else None
    headers = {
        "X-Initiator": "agent" if last is not None and not isinstance(last, UserMessage) else "user",
        "Openai-Intent": "conversation-edits",
    }
    if has_copilot_vision_input(messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class ProviderError(Exception):
    """A failure whose message is what pi shows (``500 The server had an error ...``)."""


def sdk_error_message(status: int | None, error: Any, fallback: str | None) -> str:
    """The OpenAI/Anthropic SDKs' ``APIError`` message: ``"<status> <message>"``."""
    if isinstance(error, dict) and error.get("message"):
        message = error["message"]
        msg: str | None = message if isinstance(message, str) else js_json(message)
    elif error:
        msg = js_json(error)
    else:
        msg = fallback
    if status and msg:
        return f"{status} {msg}"
    if status:
        return f"{status} status code (no body)"
    if msg:
        return msg
    return "(no status code or body)"


def _parse_error_body(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def openai_http_error(status: int, text: str) -> str:
    """An HTTP error as the OpenAI SDK words it (its body's ``error`` object), plus OpenRouter's
    ``error.metadata.raw`` on its own line, as pi adds it."""
    body = _parse_error_body(text)
    error = body.get("error") if isinstance(body, dict) else None
    message = sdk_error_message(status, error, None if body is not None else text)
    raw = (
        error.get("metadata", {}).get("raw")
        if isinstance(error, dict) and isinstance(error.get("metadata"), dict)
        else None
    )
    if raw:
        message += f"\n{raw}"
    return message


def anthropic_http_error(status: int, text: str) -> str:
    """An HTTP error as the Anthropic SDK words it (the whole JSON body, compact)."""
    body = _parse_error_body(text)
    return sdk_error_message(status, body, None if body is not None else text)


def network_error_message(exc: BaseException, *, streaming: bool) -> str:
    """A network failure worded as pi shows it: ``Connection error.``, ``Request timed out.``, or
    ``terminated`` when a started response is cut."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "Request timed out."
    if streaming:
        return "terminated"
    return "Connection error."


# ---------------------------------------------------------------------------
# HTTP: shared client, retries
# ---------------------------------------------------------------------------

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


class _TransportOnFirstUse:
    """An ``httpx.AsyncHTTPTransport`` made when its first request is sent.

    Making a TLS transport loads the certificate store (about 20 ms), and httpx's transports
    import httpcore and anyio. A client talking only to a plain-``http`` local server (Ollama,
    llama.cpp, the test servers) needs neither: the ``https`` transport waits for an ``https``
    request.
    """

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.transport: Any = None

    async def handle_async_request(self, request: Any) -> Any:
        if self.transport is None:
            import httpx

            self.transport = httpx.AsyncHTTPTransport(**self.options)
        return await self.transport.handle_async_request(request)

    async def __aenter__(self) -> _TransportOnFirstUse:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self.transport is not None:
            await self.transport.aclose()


def _plain_http_mount() -> dict[str, Any]:
    """:class:`~piko.plugins.providers.plain_http.PlainHTTPTransport` for ``http://`` URLs, unless
    a proxy variable routes them elsewhere (a redirect to ``https`` goes through the verifying one)."""
    if any(key.lower() in ("http_proxy", "all_proxy") for key in os.environ):
        return {}  # httpx's proxy mounts must keep handling http:// requests
    from piko.plugins.providers.plain_http import PlainHTTPTransport

    return {"http://": PlainHTTPTransport()}


def get_client() -> httpx.AsyncClient:
    """The HTTP client of the running event loop (connection pooling across requests)."""
    import httpx

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        client = httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT_S,
            follow_redirects=True,
            transport=_TransportOnFirstUse(limits=limits),  # type: ignore[arg-type]
            mounts=_plain_http_mount(),
        )
        _clients[loop] = client
    return client


def request_timeout(options: StreamOptions) -> httpx.Timeout:
    """``timeout_s`` for connecting and for every read (a stalled body times out too)."""
    import httpx

    seconds = options.timeout_s if options.timeout_s is not None else DEFAULT_TIMEOUT_S
    return httpx.Timeout(seconds)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), in seconds."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        import email.utils

        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _should_retry(status: int, headers: Mapping[str, str]) -> bool:
    hint = headers.get("x-should-retry")
    if hint == "true":
        return True
    if hint == "false":
        return False
    return status in (408, 409, 429) or status >= 500


def _backoff_s(retries_done: int, max_retries: int) -> float:
    return float(min(0.5 * 2.0**retries_done, 8.0) * (1 - random.random() * 0.25))


def _int_option(options: StreamOptions, key: str, default: int) -> int:
    value = options.extra.get(key)
    return int(value) if isinstance(value, int | float) and value >= 0 else default


async def send_with_retries(
    spec: RequestSpec,
    options: StreamOptions,
    *,
    format_error: Callable[[int, str], str],
    guard: AbortGuard | None = None,
) -> httpx.Response:
    """POST ``spec`` and return the open streaming response of a 2xx answer.

    Retries as the SDKs do (``options.extra["max_retries"]``, default 2): on 408, 409, 429, 5xx
    and network failures, waiting ``retry-after(-ms)`` or 0.5 s doubling to 8 s with jitter. A
    server asking for longer than ``max_retry_delay_ms`` (default 60 s) is not retried. The last
    failure raises :class:`ProviderError` worded by ``format_error(status, body_text)``.
    """
    import httpx

    client = get_client()
    max_retries = _int_option(options, "max_retries", DEFAULT_MAX_RETRIES)
    max_delay_s = _int_option(options, "max_retry_delay_ms", DEFAULT_MAX_RETRY_DELAY_MS) / 1000
    timeout = request_timeout(options)
    content = spec.body if isinstance(spec.body, bytes) else js_json(spec.body).encode()
    retries = 0
    while True:
        request = client.build_request(
            "POST", spec.url, headers=spec.headers, content=content, timeout=timeout
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as exc:
            if retries < max_retries:
                await asyncio.sleep(_backoff_s(retries, max_retries))
                retries += 1
                continue
            raise ProviderError(network_error_message(exc, streaming=False)) from exc
        if response.status_code < 400:
            return response
        try:
            raw = await response.aread()
        except httpx.TransportError:
            raw = b""
        finally:
            await response.aclose()
        if retries < max_retries and _should_retry(response.status_code, response.headers):
            wait = retry_after_seconds(response.headers)
            if wait is None or wait < 0:
                wait = _backoff_s(retries, max_retries)
            if wait <= max_delay_s:
                await asyncio.sleep(wait)
                retries += 1
                continue
        raise ProviderError(format_error(response.status_code, raw.decode("utf-8", "replace")))


# ---------------------------------------------------------------------------
# Abort
# ---------------------------------------------------------------------------


class AbortGuard:
    """Turns an abort into a cancellation of the awaiting stream, with no per-chunk cost.

    While *armed* (the stream awaits the network) an abort cancels the task running the stream;
    :meth:`consume` then tells that cancellation apart from one of somebody else. While disarmed
    (the consumer holds an event) an abort only marks the signal, checked before the next read.
    """

    __slots__ = ("armed", "fired", "loop", "remove", "signal", "task", "thread")

    def __init__(self, signal: AbortSignal | None) -> None:
        self.signal = signal
        self.armed = False
        self.fired = False
        self.task: asyncio.Task[Any] | None = None
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.remove = signal.add_listener(self._on_abort) if signal is not None else None

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def arm(self) -> None:
        if self.signal is not None:
            self.task = asyncio.current_task()
            self.armed = True

    def disarm(self) -> None:
        self.armed = False

    def _on_abort(self) -> None:
        if threading.get_ident() != self.thread:
            self.loop.call_soon_threadsafe(self._on_abort)
            return
        task = self.task
        if self.armed and not self.fired and task is not None and not task.done():
            self.fired = True
            task.cancel()

    def consume(self) -> bool:
        """In ``except CancelledError``: whether the cancellation was this guard's own."""
        self.armed = False
        if not self.fired:
            return False
        self.fired = False
        task = asyncio.current_task()
        return task is None or task.uncancel() == 0

    def close(self) -> None:
        self.armed = False
        if self.remove is not None:
            self.remove()
            self.remove = None


# ---------------------------------------------------------------------------
# The stream loop
# ---------------------------------------------------------------------------


@attrs.define(kw_only=True)
class RequestSpec:
    """One provider request: URL, headers and JSON payload (``on_payload`` may replace it)."""

    url: str
    headers: dict[str, str]
    body: Any


_SCRATCH_KEYS = ("partialArgs", "streamIndex", "partialJson", "index")


def strip_scratch(message: AssistantMessage) -> None:
    """Drop the streaming scratch fields pi keeps on blocks while streaming (``partialArgs``...)."""
    for block in message.content:
        extra = block.extra
        if extra:
            for key in _SCRATCH_KEYS:
                extra.pop(key, None)


Decoder = Callable[["httpx.Response", "MessageBuilder", AbortGuard], AsyncIterator[list[StreamEvent]]]


async def run_stream(
    builder: MessageBuilder,
    options: StreamOptions,
    prepare: Callable[[], RequestSpec | Awaitable[RequestSpec]],
    decode: Decoder,
    *,
    format_error: Callable[[int, str], str],
) -> AsyncIterator[StreamEvent]:
    """``start``, the decoder's events, then ``done`` — or one ``error`` event, never an exception.

    ``prepare()`` builds the request (its exceptions become the error message); the payload
    goes through ``options.on_payload``; ``options.on_response`` sees status and headers of the
    answer. ``decode(response, builder, guard)`` yields lists of events (one list per network
    chunk: cheaper than one async step per event) and leaves the stop reason in
    ``builder.message.stop_reason``; it raises :class:`ProviderError` for provider-reported
    failures. An abort stops everything at once with reason ``aborted``.
    """
    import httpx

    model = builder.model
    guard = AbortGuard(options.signal)
    started = False
    try:
        if guard.aborted:
            raise ProviderError(ABORTED_BEFORE_REQUEST)
        spec = prepare()
        if not isinstance(spec, RequestSpec):
            spec = await spec
        if options.on_payload is not None:
            replaced = await options.on_payload(spec.body, model)
            if replaced is not None:
                spec = attrs.evolve(spec, body=replaced)
        if guard.aborted:
            raise ProviderError(ABORTED_BEFORE_REQUEST)
        guard.arm()
        response = await send_with_retries(spec, options, format_error=format_error, guard=guard)
        guard.disarm()
        try:
            if options.on_response is not None:
                await options.on_response(response.status_code, dict(response.headers), model)
            started = True
            yield builder.start()
            if guard.aborted:
                raise ProviderError(ABORTED_MESSAGE)
            guard.arm()
            signal = options.signal
            async with contextlib.aclosing(decode(response, builder, guard)) as batches:  # type: ignore[type-var]
                if signal is None:
                    async for batch in batches:
                        for event in batch:
                            yield event
                else:
                    current_task = asyncio.current_task
                    async for batch in batches:
                        guard.armed = False
                        for event in batch:
                            yield event
                            if signal.aborted:
                                raise ProviderError(ABORTED_MESSAGE)
                        guard.task = current_task()
                        guard.armed = True
            guard.disarm()
        finally:
            guard.disarm()
            await response.aclose()
        if guard.aborted:
            raise ProviderError(ABORTED_MESSAGE)
        reason = builder.message.stop_reason
        if reason == "aborted":
            raise ProviderError(ABORTED_MESSAGE)
        if reason == "error":
            raise ProviderError(builder.message.error_message or "Provider returned an error stop reason")
        yield builder.done(reason)
    except asyncio.CancelledError:
        if not guard.consume():
            raise
        strip_scratch(builder.message)
        yield builder.error(ABORTED_MESSAGE if started else ABORTED_BEFORE_REQUEST, aborted=True)
    except ProviderError as exc:
        guard.disarm()
        strip_scratch(builder.message)
        yield builder.error(str(exc), aborted=guard.aborted)
    except httpx.TransportError as exc:
        guard.disarm()
        strip_scratch(builder.message)
        yield builder.error(network_error_message(exc, streaming=started), aborted=guard.aborted)
    except Exception as exc:  # a provider must end with an error event, whatever went wrong
        guard.disarm()
        strip_scratch(builder.message)
        yield builder.error(str(exc) or type(exc).__name__, aborted=guard.aborted)
    finally:
        guard.close()
