"""The plain-http transport against raw servers on 127.0.0.1: framing, keep-alive, errors, timeouts."""

from __future__ import annotations

import asyncio
import gzip
import socket
from collections.abc import Awaitable
from collections.abc import Callable

import httpx
import pytest

from piko.plugins.providers.plain_transport import PlainHTTPTransport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, dict[bytes, bytes], bytes]:
    """Request line, headers (lower-case names) and body (Content-Length or chunked)."""
    line = await reader.readline()
    headers: dict[bytes, bytes] = {}
    while (header := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = header.partition(b":")
        headers[name.strip().lower()] = value.strip()
    body = b""
    if b"content-length" in headers:
        body = await reader.readexactly(int(headers[b"content-length"]))
    elif headers.get(b"transfer-encoding") == b"chunked":
        while size := int((await reader.readline()).strip(), 16):
            body += await reader.readexactly(size)
            await reader.readline()
        await reader.readline()
    return line, headers, body


async def _with_server(handler: Handler, client_code: Callable[[str], Awaitable[object]]) -> object:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await client_code(f"http://127.0.0.1:{port}")
    finally:
        server.close()


def _client(**options: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(mounts={"http://": PlainHTTPTransport()}, **options)  # type: ignore[arg-type]


async def _get(base: str) -> object:
    async with _client() as client:
        return await client.get(base)


def test_content_length_body_and_request_body_and_headers() -> None:
    seen: list[tuple[bytes, dict[bytes, bytes], bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        writer.write(b"HTTP/1.1 201 Created\r\nContent-Length: 5\r\nX-Thing: yes\r\n\r\nhello")
        await writer.drain()
        writer.close()

    async def run(base: str) -> object:
        async with _client() as client:
            response = await client.post(
                base + "/v1/chat?x=1", content=b'{"a":1}', headers={"Authorization": "Bearer k"}
            )
            return response.status_code, response.reason_phrase, response.headers["x-thing"], response.text

    assert asyncio.run(_with_server(handler, run)) == (201, "Created", "yes", "hello")
    line, headers, body = seen[0]
    assert line == b"POST /v1/chat?x=1 HTTP/1.1\r\n"
    assert headers[b"authorization"] == b"Bearer k"
    assert headers[b"host"].startswith(b"127.0.0.1:")
    assert body == b'{"a":1}'


def test_chunked_response_streams_piece_by_piece() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n"
        )
        for event in (b"data: one\n\n", b"data: two\n\n"):
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\nX-Trailer: t\r\n\r\n")
        await writer.drain()
        await reader.read()  # keep the connection open until the client leaves

    async def run(base: str) -> object:
        async with _client() as client, client.stream("GET", base) as response:
            return [line async for line in response.aiter_lines() if line]

    assert asyncio.run(_with_server(handler, run)) == ["data: one", "data: two"]


def test_chunked_request_body_for_a_streamed_upload() -> None:
    bodies: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _line, headers, body = await _read_request(reader)
        bodies.append(headers.get(b"transfer-encoding", b"") + b"|" + body)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def parts():  # type: ignore[no-untyped-def]
        yield b"abc"
        yield b"defg"

    async def run(base: str) -> object:
        async with _client() as client:
            return (await client.post(base, content=parts())).status_code

    assert asyncio.run(_with_server(handler, run)) == 200
    assert bodies == [b"chunked|abcdefg"]


def test_body_ending_with_the_connection_and_gzip_decoded_by_httpx() -> None:
    payload = gzip.compress(b"squeezed " * 100)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + payload)
        await writer.drain()
        writer.close()

    async def run(base: str) -> object:
        async with _client() as client:
            return (await client.get(base)).text

    assert asyncio.run(_with_server(handler, run)) == "squeezed " * 100


def test_keep_alive_reuses_one_connection_and_survives_a_server_closing_it() -> None:
    connections: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        served = 0
        while True:
            line, _headers, _body = await _read_request(reader)
            if not line:
                break
            served += 1
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
            if served == 2:  # a server dropping idle keep-alive connections
                writer.close()
                break

    async def run(base: str) -> object:
        async with _client() as client:
            texts = []
            for _ in range(3):
                texts.append((await client.get(base)).text)
                await asyncio.sleep(0.02)
            return texts

    assert asyncio.run(_with_server(handler, run)) == ["ok", "ok", "ok"]
    assert len(connections) == 2  # requests 1 and 2 shared a connection; 3 needed a new one


def test_informational_responses_are_skipped_and_204_has_no_body() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()
        await reader.read()

    async def run(base: str) -> object:
        async with _client() as client:
            response = await client.get(base)
            return response.status_code, response.content

    assert asyncio.run(_with_server(handler, run)) == (204, b"")


def test_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the request: nobody listens

    async def run() -> None:
        async with _client() as client:
            await client.get(f"http://127.0.0.1:{port}/")

    with pytest.raises(httpx.ConnectError):
        asyncio.run(run())


def test_a_stalled_body_is_a_read_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        await writer.drain()
        await asyncio.sleep(5)

    async def run(base: str) -> object:
        async with _client(timeout=httpx.Timeout(0.2)) as client, client.stream("GET", base) as response:
            return [part async for part in response.aiter_raw()]

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(_with_server(handler, run))


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", "complete message body", id="cut-body"
        ),
        pytest.param(b"SSH-2.0-OpenSSH_9.6\r\n", "status line", id="garbage-instead-of-a-status-line"),
    ],
)
def test_a_broken_answer_is_a_remote_protocol_error(answer: bytes, message: str) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(answer)
        await writer.drain()
        writer.close()

    with pytest.raises(httpx.RemoteProtocolError, match=message):
        asyncio.run(_with_server(handler, _get))


def test_a_body_left_unread_closes_its_connection_instead_of_pooling_it() -> None:
    connections: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        while (await _read_request(reader))[0]:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789")
            await writer.drain()

    async def run(base: str) -> object:
        async with _client() as client:
            async with client.stream("GET", base):
                pass  # closed without reading the body
            return (await client.get(base)).text

    assert asyncio.run(_with_server(handler, run)) == "0123456789"
    assert len(connections) == 2


CHUNKED = b"5;name=x\r\nhello\r\n1\r\n \r\nb\r\ndata: one\n\n\r\n0\r\nTrailer: t\r\n\r\n"
CHUNKED_HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def _chunked_answer_then_ok(body: bytes, size: int, connections: list[int]) -> Handler:
    """A server answering the first request with ``body`` as chunked framing written ``size``
    bytes at a time, and every later request on the same connection with ``ok``."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        first = len(connections) == 1
        while (await _read_request(reader))[0]:
            if first:
                writer.write(CHUNKED_HEAD)
                for start in range(0, len(body), size):
                    writer.write(body[start : start + size])
                    await writer.drain()
                    await asyncio.sleep(0.001)  # each piece its own arrival
                first = False
            else:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()

    return handler


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(CHUNKED)])
def test_chunked_framing_survives_any_split_of_the_bytes(size: int) -> None:
    connections: list[int] = []

    async def run(base: str) -> object:
        async with _client() as client:
            body = (await client.get(base)).content
            return body, (await client.get(base)).text

    handler = _chunked_answer_then_ok(CHUNKED, size, connections)
    assert asyncio.run(_with_server(handler, run)) == (b"hello data: one\n\n", "ok")
    assert connections == [1]  # the body ended where its framing said: the connection was reused


@pytest.mark.parametrize(
    ("body", "message"),
    [(b"zz\r\n", "chunk header"), (b"2\r\nabXY", "chunk footer")],
)
def test_chunked_framing_errors(body: bytes, message: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        asyncio.run(_with_server(_chunked_answer_then_ok(body, len(body), []), _get))


def test_bytes_after_a_chunked_body_retire_its_connection() -> None:
    connections: list[int] = []

    async def run(base: str) -> object:
        async with _client() as client:
            body = (await client.get(base)).content
            return body, (await client.get(base)).text

    handler = _chunked_answer_then_ok(b"0\r\n\r\nextra", 64, connections)
    assert asyncio.run(_with_server(handler, run)) == (b"", "ok")
    assert len(connections) == 2  # bytes nobody asked for: a new connection for the next request


def test_bytes_arriving_on_an_idle_connection_retire_it() -> None:
    connections: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
        await writer.drain()
        await asyncio.sleep(0.05)
        # a parting answer nobody asked for, the connection left open
        writer.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        if (await _read_request(reader))[0]:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
            await writer.drain()
        await reader.read()

    async def run(base: str) -> object:
        async with _client() as client:
            first = (await client.get(base)).text
            await asyncio.sleep(0.2)
            return first, (await client.get(base)).text

    assert asyncio.run(_with_server(handler, run)) == ("first", "first")
    assert len(connections) == 2


def test_a_kept_alive_connection_reset_by_the_server_is_retried_once_on_a_new_one() -> None:
    import struct

    served: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(0)
        first_connection = len(served) == 1
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none")
        await writer.drain()
        if first_connection and (await _read_request(reader))[0]:
            # the next request on this connection: reset it without a word (RST)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        await reader.read()

    async def run(base: str) -> object:
        async with _client() as client:
            return (await client.get(base)).text, (await client.get(base)).text

    assert asyncio.run(_with_server(handler, run)) == ("one", "one")
    assert len(served) == 2


def test_large_bodies_both_ways_arrive_whole_past_a_slow_reader() -> None:
    upload = bytes(range(256)) * (6 * 4096)  # 6 MiB, more than either side's socket buffers hold
    download = upload[::-1]
    received: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.2)  # a slow reader: the client's writes wait for room
        received.append((await _read_request(reader))[2])
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for start in range(0, len(download), 65536):
            part = download[start : start + 65536]
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def run(base: str) -> object:
        async with _client() as client, client.stream("POST", base, content=upload) as response:
            await asyncio.sleep(0.2)  # a slow consumer: the client stops reading meanwhile
            return b"".join([part async for part in response.aiter_raw()])

    assert asyncio.run(_with_server(handler, run)) == download
    assert received == [upload]


def test_a_cancelled_stream_closes_its_connection_and_the_next_request_gets_a_new_one() -> None:
    connections: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        while line := (await _read_request(reader))[0]:
            if line.startswith(b"GET /stall"):
                writer.write(CHUNKED_HEAD + b"5\r\nfirst\r\n")
                await writer.drain()
                await reader.read()
                return
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async def run(base: str) -> object:
        async with _client() as client:
            first = asyncio.get_running_loop().create_future()

            async def stream() -> None:
                async with client.stream("GET", base + "/stall") as response:
                    async for part in response.aiter_raw():
                        first.set_result(part)

            task = asyncio.create_task(stream())
            part = await first
            task.cancel()  # an abort while the body streams
            with pytest.raises(asyncio.CancelledError):
                await task
            return part, (await client.get(base)).text

    assert asyncio.run(_with_server(handler, run)) == (b"first", "ok")
    assert len(connections) == 2


def test_concurrent_requests_each_get_a_connection_and_both_are_kept() -> None:
    connections: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        while (await _read_request(reader))[0]:
            await asyncio.sleep(0.05)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async def run(base: str) -> object:
        async with _client() as client:
            texts = []
            for _ in range(3):
                answers = await asyncio.gather(client.get(base), client.get(base))
                texts.extend(answer.text for answer in answers)
            return texts

    assert asyncio.run(_with_server(handler, run)) == ["ok"] * 6
    assert len(connections) == 2
