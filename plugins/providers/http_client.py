"""The HTTP side of providers: one shared ``httpx.AsyncClient`` per event loop (plain ``http``
through piko's own transport, ``https`` through httpx's, made on first use), request timeouts,
``retry-after`` and :func:`send_with_retries`, the OpenAI and Anthropic SDKs' retry rules.
A provider's request to a plain-``http`` server goes through :mod:`.plain_client` without
httpx; httpx is imported inside the functions that need it."""

from __future__ import annotations

import asyncio
import os
import random
import time
import weakref
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

import attrs

from piko.data.streaming import StreamOptions
from piko.lib.jsonio import dumpb
from piko.lib.records import Record
from piko.plugins.providers.plain_client import USER_AGENT
from piko.plugins.providers.plain_client import plain_target
from piko.plugins.providers.plain_client import post
from piko.plugins.providers.plain_http import transport_errors
from piko.plugins.providers.provider_errors import ProviderError
from piko.plugins.providers.provider_errors import network_error_message

if TYPE_CHECKING:
    import httpx


DEFAULT_TIMEOUT_S = 600.0  # the SDKs' default request timeout (10 minutes)
DEFAULT_MAX_RETRIES = 2  # the SDKs' default
DEFAULT_MAX_RETRY_DELAY_MS = 60_000  # pi's retry.provider.maxRetryDelayMs default


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


def _proxy_configured() -> bool:
    """Whether a proxy variable (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, any case) is set."""
    return any(
        key.lower() in ("http_proxy", "https_proxy", "all_proxy") and value
        for key, value in os.environ.items()
    )


def _plain_http_mount() -> dict[str, Any]:
    """:class:`~piko.plugins.providers.plain_transport.PlainHTTPTransport` for ``http://`` URLs (a
    redirect to ``https`` goes through the verifying one); not used when a proxy is configured."""
    from piko.plugins.providers.plain_transport import PlainHTTPTransport

    return {"http://": PlainHTTPTransport()}


_HEADERS = {"User-Agent": USER_AGENT}


class StreamedResponse(Protocol):
    """What :func:`send_with_retries` returns and a provider's decoder reads: an
    ``httpx.Response`` or a :class:`~.plain_client.PlainResponse`."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aread(self) -> bytes: ...

    async def aclose(self) -> None: ...


def get_client() -> httpx.AsyncClient:
    """The HTTP client of the running event loop (connection pooling across requests)."""
    import httpx

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        if (
            _proxy_configured()
        ):  # httpx honours the proxy variables (and NO_PROXY) only with its own transport
            client = httpx.AsyncClient(
                timeout=DEFAULT_TIMEOUT_S, follow_redirects=True, limits=limits, headers=_HEADERS
            )
        else:
            client = httpx.AsyncClient(
                timeout=DEFAULT_TIMEOUT_S,
                follow_redirects=True,
                headers=_HEADERS,
                transport=_TransportOnFirstUse(limits=limits),  # type: ignore[arg-type]
                mounts=_plain_http_mount(),
            )
        _clients[loop] = client
    return client


def timeout_seconds(options: StreamOptions) -> float:
    """``timeout_s``, or the SDKs' default: the limit for connecting and for every read."""
    return options.timeout_s if options.timeout_s is not None else DEFAULT_TIMEOUT_S


def request_timeout(options: StreamOptions) -> httpx.Timeout:
    """``timeout_s`` for connecting and for every read (a stalled body times out too)."""
    import httpx

    return httpx.Timeout(timeout_seconds(options))


def header_bytes(headers: Mapping[str, str]) -> dict[bytes, bytes]:
    """Headers as sent: names in ASCII, values one byte a character, as pi's ``fetch`` sends them
    (a character past U+00FF in a value cannot be sent, and the error says which header it is).
    httpx alone would refuse any character past ASCII with a bare ``UnicodeEncodeError``."""
    sent: dict[bytes, bytes] = {}
    for name, value in headers.items():
        if not name.isascii():
            raise ProviderError(f'Header name "{name}" cannot be sent: header names are ASCII')
        try:
            sent[name.encode("ascii")] = value.encode("latin-1")
        except UnicodeEncodeError as exc:
            raise ProviderError(
                f'Header "{name}" cannot be sent: character {value[exc.start]!r} at index {exc.start} '
                "is not a single byte (HTTP header values are Latin-1)"
            ) from None
    return sent


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


def _sdk_delay_s(retries_done: int, headers: Mapping[str, str]) -> float:
    """``retry-after(-ms)`` when the server gives one, else 0.5 s doubling to 8 s, less up to a quarter."""
    hint = retry_after_seconds(headers)
    if hint is not None and hint >= 0:
        return hint
    return float(min(0.5 * 2.0**retries_done, 8.0) * (1 - random.random() * 0.25))


def _int_option(options: StreamOptions, key: str, default: int) -> int:
    value = options.extra.get(key)
    return int(value) if isinstance(value, int | float) and value >= 0 else default


class RetryRules(Record, kw_only=False, frozen=True):
    """How a vendor SDK retries a request.

    ``delay_s(retries_done, headers)`` is the wait before the next try (``headers`` empty after
    a network failure). ``configurable``: ``options.extra["max_retries"]`` and
    ``["max_retry_delay_ms"]`` apply, as pi passes them to the OpenAI and Anthropic SDKs.
    """

    max_retries: int
    should_retry: Callable[[int, Mapping[str, str]], bool]
    delay_s: Callable[[int, Mapping[str, str]], float]
    success_below: int = 400
    configurable: bool = True


# The OpenAI and Anthropic SDKs: 2 retries on 408, 409, 429, 5xx and network failures.
SDK_RETRIES = RetryRules(DEFAULT_MAX_RETRIES, _should_retry, _sdk_delay_s)


@attrs.define(kw_only=True)
class RequestSpec:
    """One provider request: URL, headers and JSON payload (``on_payload`` may replace it)."""

    url: str
    headers: dict[str, str]
    body: Any


_proxied_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, httpx.AsyncClient]] = (
    weakref.WeakKeyDictionary()
)


def _goes_direct(provider: str | None, url: str) -> bool:
    """Whether ``provider``'s request to ``url`` goes through :mod:`.plain_client`: a plain-``http``
    URL with no proxy to go through (neither the process's variables nor the provider's own)."""
    if not url.startswith("http://") or _proxy_configured():
        return False
    from piko.plugins.providers.proxy_env import scoped_proxy

    return scoped_proxy(provider, url) is None


def client_for(provider: str | None, url: str) -> httpx.AsyncClient:
    """The client for ``provider``'s request to ``url``: :func:`get_client`, unless the provider's
    ``auth.json`` ``env`` map names proxy variables (:mod:`.proxy_env`); then one that goes
    through that proxy, or straight to the server when its ``NO_PROXY`` says so, whatever the
    process's variables say."""
    from piko.plugins.providers.proxy_env import scoped_proxy

    proxy = scoped_proxy(provider, url)
    if proxy is None:
        return get_client()
    import httpx

    clients = _proxied_clients.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(proxy)
    if client is None or client.is_closed:
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        client = clients[proxy] = httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT_S, follow_redirects=True, limits=limits, trust_env=False,
            proxy=proxy or None, headers=_HEADERS,
        )  # fmt: skip
    return client


async def send_with_retries(
    spec: RequestSpec,
    options: StreamOptions,
    *,
    format_error: Callable[[int, str], str] | None = None,
    describe_error: Callable[[int, Mapping[str, str], bytes], str] | None = None,
    rules: RetryRules = SDK_RETRIES,
    provider: str | None = None,
) -> StreamedResponse:
    """POST ``spec`` and return the open streaming response of a successful answer (through
    ``provider``'s own proxy when its ``auth.json`` ``env`` map names one: :func:`client_for`).
    A plain-``http`` URL with no proxy is sent by :mod:`.plain_client` (a
    :class:`~.plain_client.PlainResponse`, httpx's streaming API); a redirect it gets is followed
    by httpx's client, from the original request.

    Retries by ``rules`` (by default the SDKs': ``retry-after(-ms)`` or 0.5 s doubling to 8 s
    with jitter). A server asking for longer than ``max_retry_delay_ms`` (default 60 s) is not
    retried. The last failure raises :class:`ProviderError` worded by
    ``format_error(status, body_text)``, or by ``describe_error(status, headers, body)`` for an
    API whose wording needs the headers (Bedrock's error type).
    """
    target = plain_target(spec.url) if _goes_direct(provider, spec.url) else None
    wire_headers = header_bytes(spec.headers)
    if rules.configurable:
        max_retries = _int_option(options, "max_retries", rules.max_retries)
        max_delay_s = _int_option(options, "max_retry_delay_ms", DEFAULT_MAX_RETRY_DELAY_MS) / 1000
    else:
        max_retries, max_delay_s = rules.max_retries, DEFAULT_MAX_RETRY_DELAY_MS / 1000
    seconds = timeout_seconds(options)
    content = spec.body if isinstance(spec.body, bytes) else dumpb(spec.body)
    retries = 0
    while True:
        response: StreamedResponse
        try:
            if target is not None:
                response = await post(target, wire_headers, content, seconds)
                if response.is_redirect:  # httpx's client follows redirects, to https too
                    await response.aclose()
                    target = None
            if target is None:
                client = client_for(provider, spec.url)
                request = client.build_request(
                    "POST", spec.url, headers=wire_headers, content=content, timeout=request_timeout(options)
                )
                response = await client.send(request, stream=True)
        except transport_errors() as exc:
            if retries < max_retries:
                await asyncio.sleep(rules.delay_s(retries, {}))
                retries += 1
                continue
            raise ProviderError(network_error_message(exc, streaming=False)) from exc
        if response.status_code < rules.success_below:
            return response
        try:
            raw = await response.aread()
        except transport_errors():
            raw = b""
        finally:
            await response.aclose()
        if retries < max_retries and rules.should_retry(response.status_code, response.headers):
            wait = rules.delay_s(retries, response.headers)
            if wait <= max_delay_s:
                await asyncio.sleep(wait)
                retries += 1
                continue
        if describe_error is not None:
            raise ProviderError(describe_error(response.status_code, response.headers, raw))
        text = raw.decode("utf-8", "replace")
        raise ProviderError(format_error(response.status_code, text) if format_error else text)
