"""An httpx transport over :mod:`.plain_http`: the shared ``httpx.AsyncClient`` sends its
``http://`` requests through piko's plain HTTP/1.1 pool, and its callers see httpx's requests,
responses, timeouts and exceptions (each of :mod:`.plain_http`'s errors becomes httpx's class of
the same name). Content decoding (gzip and the rest) is httpx's, on the response."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from piko.plugins.providers.plain_http import Answer
from piko.plugins.providers.plain_http import PlainConnections
from piko.plugins.providers.plain_http import ResponseBody
from piko.plugins.providers.plain_http import Timeouts
from piko.plugins.providers.plain_http import TransportError


def _httpx_error(exc: TransportError, request: httpx.Request) -> httpx.TransportError:
    """httpx's exception of the same name as ``exc``, for ``request``."""
    kind = getattr(httpx, type(exc).__name__, httpx.TransportError)
    return kind(str(exc), request=request)  # type: ignore[no-any-return]


class PlainHTTPTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 without TLS for ``http://`` URLs, with its own pool of kept-alive connections."""

    def __init__(self) -> None:
        self._pool = PlainConnections()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"plain HTTP only, not {request.url.scheme!r}", request=request)
        timeout = request.extensions.get("timeout") or {}
        timeouts = Timeouts(timeout.get("connect"), timeout.get("read"), timeout.get("write"))
        body = [part async for part in request.stream if part]  # type: ignore[union-attr]
        try:
            answer: Answer = await self._pool.request(
                request.method,
                (request.url.host, request.url.port or 80),
                request.url.raw_path,
                request.headers.raw,
                body,
                timeouts,
            )
        except TransportError as exc:
            raise _httpx_error(exc, request) from exc
        return httpx.Response(
            answer.status_code,
            headers=answer.headers,
            stream=_Stream(answer.body, request),
            extensions={"http_version": answer.http_version, "reason_phrase": answer.reason},
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _Stream(httpx.AsyncByteStream):
    """A response body as httpx reads it, with :mod:`.plain_http`'s errors as httpx's."""

    def __init__(self, body: ResponseBody, request: httpx.Request) -> None:
        self.body = body
        self.request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in self.body:
                yield piece
        except TransportError as exc:
            raise _httpx_error(exc, self.request) from exc

    async def aclose(self) -> None:
        await self.body.aclose()
