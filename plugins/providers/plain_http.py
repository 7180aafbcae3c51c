"""Plain-``http`` HTTP/1.1 without httpx: h11's framing over an asyncio socket loop, pooled.

Local model servers (Ollama, llama.cpp, vLLM, LM Studio, a company gateway inside its network)
and the test servers speak plain HTTP/1.1. Providers reach them through this module in two ways:
:mod:`.plain_client` sends a provider's request with it directly (httpx is then never imported),
and :mod:`.plain_transport` plugs it into the shared ``httpx.AsyncClient`` for ``http://`` URLs,
for code that holds that client. ``https`` keeps httpx's verifying transport, and a proxy
variable keeps httpx's routing.

h11 does all of HTTP/1.1: the request it writes, the response it reads (status line, headers,
``Content-Length``, chunked or close-delimited bodies, 1xx answers, HEAD, 204 and 304) and
whether the connection may carry another request (``Connection: close``, HTTP/1.0, bytes left
over after the answer). This module owns the rest: the socket (an :class:`asyncio.Protocol`, so
it knows whether bytes arrived while a connection sat idle, as a server's parting ``408`` does),
idle keep-alive connections pooled per origin (a reused one that turns out closed or reset
before a byte of the answer is retried once on a new one), the timeouts, and the errors, named
as httpx names its own (:class:`ConnectError`, :class:`ConnectTimeout`, :class:`ReadTimeout`,
:class:`WriteTimeout`, :class:`ReadError`, :class:`WriteError`, :class:`RemoteProtocolError`,
:class:`LocalProtocolError`) so that the transport maps each to httpx's class of that name.

Why an HTTP path of our own, measured on the development machine (``pi -p`` against a local
server, ``benchmarks/bench_print_roundtrip.py``, 30 runs taking turns, medians): with httpx's
own transport (httpcore over anyio over h11) a round trip took 163 ms, through httpx with this
module as its transport 124 ms; most of the difference is httpcore's and anyio's imports. httpx
itself costs 157 M instructions to import (callgrind, ``import asyncio, httpx`` against
``import asyncio``), which the direct path saves: a whole ``pi -p`` turn went from 752 M
instructions to 650 M. h11's import costs 40 M. On a server
writing one chunk per SSE event, 10,000 deltas (``benchmarks/bench_sse_decode.py``, best of 15)
take 80 ms through httpx's transport and 47 ms through this module: h11 spends about 3 µs on
each chunk, which is nothing beside a model's pace.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from typing import Any
from typing import NamedTuple
from typing import TypeVar

import h11

MAX_IDLE_PER_ORIGIN = 20
MAX_RESPONSE_HEAD = 100 * 1024  # status line and headers, as httpcore allows
READ_HIGH_WATER = 256 * 1024  # unread bytes held before the socket stops reading

T = TypeVar("T")


class TransportError(Exception):
    """A request that failed on its way: the connection, a timeout, or broken HTTP."""


class TimeoutException(TransportError):
    """A time limit passed."""


class ConnectTimeout(TimeoutException):
    """The connection was not made in time."""


class ReadTimeout(TimeoutException):
    """The answer stalled: nothing arrived within the read time limit."""


class WriteTimeout(TimeoutException):
    """The request could not be written in time."""


class NetworkError(TransportError):
    """The socket failed."""


class ConnectError(NetworkError):
    """The connection could not be made (refused, unreachable, unknown host)."""


class ReadError(NetworkError):
    """Reading the answer failed (the connection was reset, say)."""


class WriteError(NetworkError):
    """Writing the request failed."""


class ProtocolError(TransportError):
    """Bytes that are not HTTP/1.1."""


class RemoteProtocolError(ProtocolError):
    """The server broke HTTP/1.1 (or closed before a whole answer)."""


class LocalProtocolError(ProtocolError):
    """The request cannot be written as HTTP/1.1 (a header with a line break, say)."""


def transport_errors() -> tuple[type[Exception], ...]:
    """The exception classes of a failed request: this module's, and httpx's once something
    imported httpx (``except transport_errors():`` catches both without importing httpx)."""
    httpx = sys.modules.get("httpx")
    if httpx is None or not hasattr(httpx, "TransportError"):
        return (TransportError,)
    return (TransportError, httpx.TransportError)


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is a time limit passing, this module's or httpx's."""
    httpx = sys.modules.get("httpx")
    timeout = getattr(httpx, "TimeoutException", None) if httpx is not None else None
    return isinstance(exc, TimeoutException) or (timeout is not None and isinstance(exc, timeout))


class Timeouts(NamedTuple):
    """Seconds allowed to connect, for each read and for each write (``None``: no limit)."""

    connect: float | None
    read: float | None
    write: float | None


class Answer(NamedTuple):
    """The head of a response, and its body as it arrives (:class:`ResponseBody`)."""

    status_code: int
    reason: bytes
    http_version: bytes
    headers: list[tuple[bytes, bytes]]  # as they came: names in the server's case, in order
    body: ResponseBody


class _Socket(asyncio.Protocol):
    """One TCP connection's bytes: what arrived and is not read yet, its end, write flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.unread: list[bytes] = []
        self.unread_size = 0
        self.ended = False  # the peer closed its side, or the connection was lost
        self.error: Exception | None = None  # what the connection was lost to
        self._reading_paused = False
        self._writing_paused = False
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.unread.append(data)
        self.unread_size += len(data)
        if self.unread_size > READ_HIGH_WATER and not self._reading_paused and self.transport:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> None:
        self.ended = True
        self._wake()  # returning None: the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        self._wake()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def read(self) -> bytes:
        """Everything that arrived since the last read (waiting for some); ``b""`` at the end."""
        while not self.unread:
            if self.ended:
                if self.error is not None:
                    raise self.error
                return b""
            await self._wait()
        data = self.unread[0] if len(self.unread) == 1 else b"".join(self.unread)
        self.unread.clear()
        self.unread_size = 0
        if self._reading_paused and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()
        return data

    async def write(self, data: bytes) -> None:
        """Send ``data``, waiting while the socket's buffer is full."""
        if self.ended or self.transport is None or self.transport.is_closing():
            raise self.error or ConnectionResetError("connection closed")
        self.transport.write(data)
        while self._writing_paused and not self.ended:
            await self._wait()
        if self.error is not None:
            raise self.error

    def idle_and_open(self) -> bool:
        """Open, and nothing arrived while idle (a server's parting answer, or its closing)."""
        return (
            not self.ended
            and not self.unread
            and self.transport is not None
            and not self.transport.is_closing()
        )

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class _Connection:
    """A socket and h11's state of the HTTP/1.1 exchanges on it."""

    __slots__ = ("bytes_in", "http", "socket")

    def __init__(self, socket: _Socket) -> None:
        self.socket = socket
        self.http = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_RESPONSE_HEAD)
        self.bytes_in = 0  # of the current answer

    def event(self) -> Any:
        """h11's next event of the answer from what has been received (``h11.NEED_DATA``: read more)."""
        try:
            return self.http.next_event()
        except h11.RemoteProtocolError as exc:
            raise RemoteProtocolError(str(exc)) from exc

    async def receive(self, read_s: float | None) -> None:
        """Read what the socket has (waiting for it) and hand it to h11."""
        try:
            data = await _within(read_s, self.socket.read(), ReadTimeout)
        except OSError as exc:
            raise ReadError(str(exc) or type(exc).__name__) from exc
        if not data and self.http.their_state is h11.SEND_RESPONSE:  # closed before a whole head
            if not self.bytes_in:
                raise RemoteProtocolError("Server disconnected without sending a response.")
            partial = self.http.trailing_data[0]
            if not partial.startswith(b"HTTP/"):  # h11 would only say the peer closed
                raise RemoteProtocolError(f"not an HTTP/1.1 status line: {partial[:80]!r}")
        self.bytes_in += len(data)
        self.http.receive_data(data)

    async def next_event(self, read_s: float | None) -> Any:
        """h11's next event of the answer, reading as it needs."""
        while (event := self.event()) is h11.NEED_DATA:
            await self.receive(read_s)
        return event

    def reusable(self) -> bool:
        """Both sides done, nothing left over after the answer, and the socket still open."""
        http = self.http
        return (
            http.our_state is h11.DONE
            and http.their_state is h11.DONE
            and not http.trailing_data[0]
            and self.socket.idle_and_open()
        )

    def close(self) -> None:
        self.socket.close()


class _StaleConnection(Exception):
    """A kept-alive connection closed or reset before a byte of the answer: worth one new try."""


async def _within(seconds: float | None, awaitable: Awaitable[T], on_timeout: type[TimeoutException]) -> T:
    """``await awaitable``, raising ``on_timeout`` after ``seconds`` (``None``: no limit)."""
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await awaitable
    except TimeoutError:
        if not deadline.expired():
            raise  # the socket's own ETIMEDOUT, an OSError
        raise on_timeout(f"timed out after {seconds:g} s") from None


class PlainConnections:
    """HTTP/1.1 without TLS, with idle keep-alive connections pooled per origin (see the
    module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._closed = False

    async def request(
        self,
        method: bytes | str,
        origin: tuple[str, int],
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: list[bytes],
        timeouts: Timeouts,
    ) -> Answer:
        """Send one request to ``origin`` (host, port) and return the answer's head once it has
        arrived; its body is read from :attr:`Answer.body`. ``headers`` are sent as given (the
        caller writes ``Host`` and ``Content-Length``)."""
        connection = self._take_idle(origin)
        if connection is not None:
            try:
                return await self._exchange(
                    origin, connection, method, target, headers, body, timeouts, reused=True
                )
            except _StaleConnection:
                pass  # the server closed the kept-alive connection meanwhile: once more on a new one
        connection = await self._connect(origin, timeouts.connect)
        return await self._exchange(origin, connection, method, target, headers, body, timeouts, reused=False)

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    def _take_idle(self, origin: tuple[str, int]) -> _Connection | None:
        connections = self._idle.get(origin)
        while connections:
            connection = connections.pop()
            if connection.socket.idle_and_open():
                return connection
            connection.close()
        return None

    def _give_back(self, origin: tuple[str, int], connection: _Connection) -> None:
        connections = self._idle.setdefault(origin, [])
        if self._closed or not connection.reusable() or len(connections) >= MAX_IDLE_PER_ORIGIN:
            connection.close()
            return
        connection.http.start_next_cycle()
        connection.bytes_in = 0
        connections.append(connection)

    async def _connect(self, origin: tuple[str, int], connect_s: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _transport, socket = await _within(
                connect_s, loop.create_connection(_Socket, *origin), ConnectTimeout
            )
        except OSError as exc:
            raise ConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(socket)

    async def _exchange(
        self,
        origin: tuple[str, int],
        connection: _Connection,
        method: bytes | str,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: list[bytes],
        timeouts: Timeouts,
        reused: bool,
    ) -> Answer:
        http = connection.http
        try:
            events = [
                h11.Request(method=method, target=target or b"/", headers=headers),
                *(h11.Data(data=part) for part in body),
                h11.EndOfMessage(),
            ]
            data = b"".join(http.send(event) or b"" for event in events)
        except h11.LocalProtocolError as exc:
            connection.close()
            raise LocalProtocolError(str(exc)) from exc
        try:
            await _within(timeouts.write, connection.socket.write(data), WriteTimeout)
            event = await connection.next_event(timeouts.read)
            while isinstance(event, h11.InformationalResponse):  # 100 Continue and the like
                event = await connection.next_event(timeouts.read)
        except OSError as exc:  # reads raise this module's errors already: this is the write
            connection.close()
            if reused:
                raise _StaleConnection from exc
            raise WriteError(str(exc) or type(exc).__name__) from exc
        except (ReadError, RemoteProtocolError) as exc:
            connection.close()
            if reused and connection.bytes_in == 0:
                raise _StaleConnection from exc
            raise
        except BaseException:  # a timeout, or a cancellation (an abort) half-way through the exchange
            connection.close()
            raise
        assert isinstance(event, h11.Response)  # h11 answers a request with nothing else
        return Answer(
            event.status_code,
            event.reason,
            b"HTTP/" + event.http_version,
            event.headers.raw_items(),
            ResponseBody(self, origin, connection, timeouts.read),
        )


class ResponseBody:
    """A response body as it arrives (``async for piece in body``); the connection goes back to
    the pool once it is all read, and is closed by :meth:`aclose` before that."""

    def __init__(
        self, pool: PlainConnections, origin: tuple[str, int], connection: _Connection, read_s: float | None
    ) -> None:
        self.pool = pool
        self.origin = origin
        self.connection: _Connection | None = connection
        self.read_s = read_s

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """The body data, one piece per socket read however many chunks it holds: a server
        writing an SSE event per chunk costs a read and a piece per arrival, not one per chunk."""
        connection = self.connection
        if connection is None:
            return
        pieces: list[bytes] = []
        try:
            while True:
                event = connection.event()
                if event is h11.NEED_DATA:
                    if pieces:  # all that has arrived is parsed: hand it on before waiting
                        yield b"".join(pieces)
                        pieces = []
                    await connection.receive(self.read_s)
                elif isinstance(event, h11.Data):
                    pieces.append(event.data)
                else:  # h11.EndOfMessage, the only other event of a body
                    break
            if pieces:
                yield b"".join(pieces)
        except BaseException:
            connection.close()
            self.connection = None
            raise
        self.connection = None
        self.pool._give_back(self.origin, connection)

    async def aclose(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.close()  # closed before its body was read through: not reusable
