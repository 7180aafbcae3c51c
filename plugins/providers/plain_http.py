"""An httpx transport for plain-``http`` servers, HTTP/1.1 over asyncio streams.

Local model servers (Ollama, llama.cpp, vLLM, LM Studio, a company gateway inside its network)
and the test servers speak plain HTTP/1.1. httpx's own transport reaches them through httpcore,
anyio and h11, about 30 ms of imports before the first byte. This transport is plugged into the
shared ``httpx.AsyncClient`` for ``http://`` URLs only (``https`` keeps httpx's verifying
transport, and a proxy variable keeps httpx's routing), so providers still see httpx requests,
responses, timeouts and exceptions.

What it does: one request per connection at a time, idle keep-alive connections pooled per
origin (a reused connection that turns out closed is retried once on a new one), request bodies
sent as given (``Content-Length``) or chunked, response bodies framed by ``Transfer-Encoding:
chunked``, ``Content-Length`` or the connection's end. Content decoding (gzip and the rest) is
httpx's, on the response. Failures raise httpx's exceptions: ``ConnectError``, ``ConnectTimeout``,
``ReadTimeout``, ``WriteTimeout``, ``ReadError`` and ``RemoteProtocolError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx

MAX_IDLE_PER_ORIGIN = 20
MAX_HEADER_LINE = 64 * 1024
MAX_HEADERS = 200
READ_CHUNK = 64 * 1024

_NO_BODY_STATUSES = frozenset((204, 304))


class _Connection:
    """One TCP connection and whether it may carry another request."""

    __slots__ = ("reader", "reusable", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reusable = False

    def is_idle_and_open(self) -> bool:
        """Open, and nothing arrived while idle (a server's parting ``408`` would otherwise be
        read as the answer to the next request). StreamReader has no public way to ask what it
        holds; its ``_buffer`` has been there since Python 3.4, and without it we only lose the
        second check."""
        unread = getattr(self.reader, "_buffer", b"")
        return not self.reader.at_eof() and not self.writer.is_closing() and not unread

    def close(self) -> None:
        self.reusable = False
        if not self.writer.is_closing():
            self.writer.close()


def _timeouts(request: httpx.Request) -> tuple[float | None, float | None, float | None]:
    timeout = request.extensions.get("timeout") or {}
    return timeout.get("connect"), timeout.get("read"), timeout.get("write")


async def _within(
    seconds: float | None, awaitable: Any, on_timeout: type[httpx.TimeoutException], request: httpx.Request
) -> Any:
    """``await awaitable``, raising httpx's ``on_timeout`` after ``seconds`` (``None``: no limit)."""
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await awaitable
    except TimeoutError:
        if not deadline.expired():
            raise  # the socket's own ETIMEDOUT, an OSError
        raise on_timeout(f"timed out after {seconds:g} s", request=request) from None


class PlainHTTPTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 without TLS for ``http://`` URLs (see the module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"plain HTTP only, not {request.url.scheme!r}", request=request)
        origin = (request.url.host, request.url.port or 80)
        head, body_chunks = await self._request_bytes(request)
        connection = self._take_idle(origin)
        if connection is not None:
            try:
                return await self._exchange(connection, request, head, body_chunks)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                if not getattr(exc, "piko_before_response", False):
                    raise
                # the server closed the kept-alive connection meanwhile: once more on a new one
        connection = await self._connect(origin, request)
        return await self._exchange(connection, request, head, body_chunks)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    # -- connections ---------------------------------------------------------------------------

    def _take_idle(self, origin: tuple[str, int]) -> _Connection | None:
        connections = self._idle.get(origin)
        while connections:
            connection = connections.pop()
            if connection.is_idle_and_open():
                return connection
            connection.close()
        return None

    def _give_back(self, origin: tuple[str, int], connection: _Connection) -> None:
        connections = self._idle.setdefault(origin, [])
        if self._closed or not connection.reusable or len(connections) >= MAX_IDLE_PER_ORIGIN:
            connection.close()
        else:
            connections.append(connection)

    async def _connect(self, origin: tuple[str, int], request: httpx.Request) -> _Connection:
        connect_s, _read_s, _write_s = _timeouts(request)
        try:
            reader, writer = await _within(
                connect_s,
                asyncio.open_connection(*origin, limit=MAX_HEADER_LINE),
                httpx.ConnectTimeout,
                request,
            )
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        return _Connection(reader, writer)

    # -- one exchange --------------------------------------------------------------------------

    @staticmethod
    async def _request_bytes(request: httpx.Request) -> tuple[bytes, list[bytes]]:
        """The request line and headers, and the body as it goes on the wire."""
        target = request.url.raw_path or b"/"
        lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), target)]
        chunked = False
        for name, value in request.headers.raw:
            lower = name.lower()
            if lower == b"transfer-encoding" and value.lower() == b"chunked":
                chunked = True
            lines.append(name + b": " + value)
        head = b"\r\n".join(lines) + b"\r\n\r\n"
        body: list[bytes] = []
        async for part in request.stream:  # type: ignore[union-attr]
            if part:
                body.append(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
        if chunked:
            body.append(b"0\r\n\r\n")
        return head, body

    async def _exchange(
        self, connection: _Connection, request: httpx.Request, head: bytes, body: list[bytes]
    ) -> httpx.Response:
        origin = (request.url.host, request.url.port or 80)
        _connect_s, read_s, write_s = _timeouts(request)
        writer = connection.writer
        try:
            writer.write(head)
            for part in body:
                writer.write(part)
            await _within(write_s, writer.drain(), httpx.WriteTimeout, request)
        except OSError as exc:
            connection.close()
            error = httpx.WriteError(str(exc) or type(exc).__name__, request=request)
            error.piko_before_response = True  # type: ignore[attr-defined]
            raise error from exc
        except BaseException:  # a timeout or a cancellation (an abort) half-way through the request
            connection.close()
            raise
        try:
            status, reason, headers, keep_alive = await self._read_head(connection, request, read_s)
        except BaseException:
            connection.close()
            raise
        length: int | None = None
        chunked = False
        for name, value in headers:
            lower = name.lower()
            if lower == b"transfer-encoding":
                chunked = value.strip().lower().endswith(b"chunked")
            elif lower == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    connection.close()
                    raise httpx.RemoteProtocolError(
                        f"bad Content-Length {value!r}", request=request
                    ) from None
        if request.method == "HEAD" or status in _NO_BODY_STATUSES:
            length, chunked = 0, False
        elif chunked:
            length = None
        framed = chunked or length is not None
        connection.reusable = keep_alive and framed
        stream = _ResponseBody(self, origin, connection, request, read_s, length, chunked)
        return httpx.Response(
            status,
            headers=headers,
            stream=stream,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    async def _read_head(
        self, connection: _Connection, request: httpx.Request, read_s: float | None
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], bool]:
        """Status, reason, headers and keep-alive of the final (non-1xx) response."""
        first = True
        while True:
            try:
                line = await _read_line(connection, request, read_s)
            except httpx.ReadError as exc:  # reset before a byte of the answer: as good as closed
                if first:
                    exc.piko_before_response = True  # type: ignore[attr-defined]
                raise
            first = False
            if not line:
                error = httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                )
                error.piko_before_response = True  # type: ignore[attr-defined]
                raise error
            parts = line.rstrip(b"\r\n").split(b" ", 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                raise httpx.RemoteProtocolError(
                    f"not an HTTP/1.1 status line: {line[:80]!r}", request=request
                )
            version, status = parts[0], int(parts[1])
            reason = parts[2] if len(parts) > 2 else b""
            headers: list[tuple[bytes, bytes]] = []
            while True:
                line = await _read_line(connection, request, read_s)
                if line in (b"\r\n", b"\n"):
                    break
                if not line:
                    raise httpx.RemoteProtocolError(
                        "connection closed inside the response headers", request=request
                    )
                name, colon, value = line.partition(b":")
                if not colon or len(headers) >= MAX_HEADERS:
                    raise httpx.RemoteProtocolError(f"bad response header: {line[:80]!r}", request=request)
                headers.append((name.strip(), value.strip()))
            if 100 <= status < 200 and status != 101:
                continue  # informational: the real response follows
            connection_tokens = b",".join(v.lower() for n, v in headers if n.lower() == b"connection")
            if version == b"HTTP/1.0":
                keep_alive = b"keep-alive" in connection_tokens
            else:
                keep_alive = b"close" not in connection_tokens
            return status, reason, headers, keep_alive


async def _read_line(connection: _Connection, request: httpx.Request, read_s: float | None) -> bytes:
    try:
        return bytes(await _within(read_s, connection.reader.readline(), httpx.ReadTimeout, request))
    except ValueError as exc:  # longer than the reader's limit
        raise httpx.RemoteProtocolError("response header line too long", request=request) from exc
    except OSError as exc:
        raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc


class _ResponseBody(httpx.AsyncByteStream):
    """A response body as it arrives; the connection goes back to the pool once it is all read."""

    def __init__(
        self,
        transport: PlainHTTPTransport,
        origin: tuple[str, int],
        connection: _Connection,
        request: httpx.Request,
        read_s: float | None,
        length: int | None,
        chunked: bool,
    ) -> None:
        self.transport = transport
        self.origin = origin
        self.connection: _Connection | None = connection
        self.request = request
        self.read_s = read_s
        self.length = length
        self.chunked = chunked

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self.connection
        if connection is None:
            return
        try:
            if self.chunked:
                async for part in self._chunks(connection):
                    yield part
            elif self.length is not None:
                remaining = self.length
                while remaining > 0:
                    part = await self._read(connection, min(remaining, READ_CHUNK))
                    if not part:
                        raise httpx.RemoteProtocolError(
                            "peer closed connection without sending complete message body "
                            f"(received {self.length - remaining} bytes, expected {self.length})",
                            request=self.request,
                        )
                    remaining -= len(part)
                    yield part
            else:
                while part := await self._read(connection, READ_CHUNK):
                    yield part
        except BaseException:
            connection.close()
            self.connection = None
            raise
        self._finish(connection)

    async def _chunks(self, connection: _Connection) -> AsyncIterator[bytes]:
        """The data of a chunked body: every chunk complete in what has arrived, joined.

        One socket read per arrival (one timer), however many chunks it holds: a server writing
        an SSE event per chunk costs a read per event, not three.
        """
        decoder = _ChunkedDecoder(self.request)
        while True:
            data = await self._read(connection, READ_CHUNK)
            if not data:
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body (incomplete chunked read)",
                    request=self.request,
                )
            body = decoder.feed(data)
            if body:
                yield body
            if decoder.finished:
                if decoder.leftover:
                    connection.reusable = False  # bytes nobody asked for: do not reuse
                return

    async def _read(self, connection: _Connection, size: int) -> bytes:
        try:
            return bytes(
                await _within(self.read_s, connection.reader.read(size), httpx.ReadTimeout, self.request)
            )
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=self.request) from exc

    def _finish(self, connection: _Connection) -> None:
        self.connection = None
        self.transport._give_back(self.origin, connection)

    async def aclose(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.close()  # closed before its body was read through: not reusable


class _ChunkedDecoder:
    """``Transfer-Encoding: chunked`` framing, fed the bytes as they arrive."""

    def __init__(self, request: httpx.Request) -> None:
        self.request = request
        self.pending = b""  # bytes not parsed yet
        self.remaining = 0  # data bytes left in the current chunk
        self.after_data = False  # the CRLF closing a chunk's data is due
        self.in_trailers = False
        self.finished = False
        self.leftover = False

    def feed(self, data: bytes) -> bytes:
        """The body data that ``data`` completes (possibly empty)."""
        buffer = self.pending + data if self.pending else data
        position, end = 0, len(buffer)
        pieces: list[bytes] = []
        while not self.finished:
            if self.remaining:
                take = min(self.remaining, end - position)
                if take:
                    pieces.append(buffer[position : position + take])
                    position += take
                    self.remaining -= take
                if self.remaining:
                    break
                self.after_data = True
            if self.after_data:
                if end - position < 2:
                    break
                if buffer[position : position + 2] != b"\r\n":
                    raise httpx.RemoteProtocolError("chunk not followed by CRLF", request=self.request)
                position += 2
                self.after_data = False
            newline = buffer.find(b"\n", position)
            if newline < 0:
                if end - position > MAX_HEADER_LINE:
                    raise httpx.RemoteProtocolError("chunk size line too long", request=self.request)
                break
            line = buffer[position:newline].rstrip(b"\r")
            position = newline + 1
            if self.in_trailers:
                self.finished = not line  # an empty line ends the trailers, and the body
                continue
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise httpx.RemoteProtocolError(
                    f"bad chunk size line: {line[:80]!r}", request=self.request
                ) from None
            if size == 0:
                self.in_trailers = True
            else:
                self.remaining = size
        self.pending = buffer[position:]
        self.leftover = self.finished and bool(self.pending)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
