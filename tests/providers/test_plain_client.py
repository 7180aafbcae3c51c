"""A provider's plain-http request without httpx: the same request on the wire as through httpx,
bodies decoded as httpx decodes them, redirects, pi's wording of network failures, and a
``pi -p`` turn that never imports httpx."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest
from support.llm_server import LLMServer

from piko.data.streaming import StreamOptions
from piko.plugins.providers import http_client
from piko.plugins.providers.http_client import RequestSpec
from piko.plugins.providers.http_client import send_with_retries
from piko.plugins.providers.plain_client import USER_AGENT
from piko.plugins.providers.plain_client import PlainResponse
from piko.plugins.providers.plain_client import plain_target
from piko.plugins.providers.provider_errors import ProviderError

Answer = Callable[[bytes, list[tuple[bytes, bytes]]], bytes]  # request line, headers -> raw response


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(key, raising=False)


async def _serve(
    answer: Answer, seen: list[tuple[bytes, list[tuple[bytes, bytes]], bytes]]
) -> tuple[asyncio.Server, str]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            headers: list[tuple[bytes, bytes]] = []
            while (header := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = header.partition(b":")
                headers.append((name.strip(), value.strip()))
            size = next((int(v) for n, v in headers if n.lower() == b"content-length"), 0)
            body = await reader.readexactly(size)
            seen.append((line, headers, body))
            writer.write(answer(line, headers))
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def _ok(body: bytes, *headers: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\n"
        + b"".join(h + b"\r\n" for h in headers)
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


def _run(
    answer: Answer, client_code: Callable[[str], Awaitable[object]]
) -> tuple[object, list[tuple[bytes, list[tuple[bytes, bytes]], bytes]]]:
    seen: list[tuple[bytes, list[tuple[bytes, bytes]], bytes]] = []

    async def main() -> object:
        server, base = await _serve(answer, seen)
        try:
            return await client_code(base)
        finally:
            server.close()

    return asyncio.run(main()), seen


def _spec(url: str, **headers: str) -> RequestSpec:
    return RequestSpec(url=url, headers={"content-type": "application/json", **headers}, body={"model": "m"})


def test_the_direct_request_is_the_request_httpx_sends() -> None:
    async def both(base: str) -> object:
        direct = await send_with_retries(
            _spec(base + "/v1/chat?x=1", authorization="Bearer k"), StreamOptions()
        )
        assert isinstance(direct, PlainResponse)
        assert await direct.aread() == b"{}"
        client = http_client.get_client()
        via_httpx = await client.post(
            base + "/v1/chat?x=1", headers={"content-type": "application/json", "authorization": "Bearer k"},
            content=b'{"model":"m"}',
        )  # fmt: skip
        assert via_httpx.content == b"{}"
        return None

    _result, seen = _run(lambda line, headers: _ok(b"{}"), both)
    (direct_line, direct_headers, direct_body), (httpx_line, httpx_headers, httpx_body) = seen
    assert direct_line == httpx_line == b"POST /v1/chat?x=1 HTTP/1.1\r\n"
    assert direct_body == httpx_body == b'{"model":"m"}'
    assert [(n.lower(), v) for n, v in direct_headers] == [(n.lower(), v) for n, v in httpx_headers]
    assert (b"User-Agent", USER_AGENT.encode()) in direct_headers


def test_gzip_and_raw_deflate_bodies_arrive_decoded() -> None:
    text = b'{"answer": "' + b"x" * 5000 + b'"}'
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    deflated = raw_deflate.compress(text) + raw_deflate.flush()

    def answer(line: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
        if b"/gzip" in line:
            return _ok(gzip.compress(text), b"Content-Encoding: gzip")
        return _ok(deflated, b"Content-Encoding: deflate")

    async def both(base: str) -> object:
        bodies = []
        for path in ("/gzip", "/deflate"):
            response = await send_with_retries(_spec(base + path), StreamOptions())
            bodies.append(b"".join([piece async for piece in response.aiter_bytes()]))
        return bodies

    bodies, _seen = _run(answer, both)
    assert bodies == [text, text]


def test_a_given_host_header_is_sent_once() -> None:
    async def signed(base: str) -> object:
        response = await send_with_retries(_spec(base + "/x", Host="signed.example"), StreamOptions())
        return await response.aread()

    _body, seen = _run(lambda line, headers: _ok(b"ok"), signed)
    hosts = [value for name, value in seen[0][1] if name.lower() == b"host"]
    assert hosts == [b"signed.example"]


def test_a_redirect_is_followed_by_httpx_from_the_original_request() -> None:
    def answer(line: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
        if b"/old" in line:
            return b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n"
        return _ok(b"moved")

    async def follow(base: str) -> object:
        response = await send_with_retries(_spec(base + "/old"), StreamOptions())
        return type(response).__name__, await response.aread()

    result, seen = _run(answer, follow)
    assert result == ("Response", b"moved")  # httpx's response, from the redirected request
    assert [line for line, _headers, _body in seen] == [
        b"POST /old HTTP/1.1\r\n", b"POST /old HTTP/1.1\r\n", b"POST /new HTTP/1.1\r\n",
    ]  # fmt: skip
    assert {body for _line, _headers, body in seen} == {b'{"model":"m"}'}


def test_an_error_answer_is_worded_from_its_body() -> None:
    async def fail(base: str) -> object:
        with pytest.raises(ProviderError) as caught:
            await send_with_retries(
                _spec(base + "/x"),
                StreamOptions(extra={"max_retries": 0}),
                format_error=lambda s, t: f"{s}: {t}",
            )
        return str(caught.value)

    message, seen = _run(lambda line, headers: b"HTTP/1.1 400 Bad\r\nContent-Length: 4\r\n\r\nnope", fail)
    assert message == "400: nope"
    assert len(seen) == 1


def test_network_failures_are_worded_as_pi_words_them() -> None:
    async def refused() -> str:
        probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = probe.sockets[0].getsockname()[1]
        probe.close()
        await probe.wait_closed()
        with pytest.raises(ProviderError) as caught:
            await send_with_retries(
                _spec(f"http://127.0.0.1:{port}/x"), StreamOptions(extra={"max_retries": 0})
            )
        return str(caught.value)

    async def stalled(base: str) -> object:
        with pytest.raises(ProviderError) as caught:
            await send_with_retries(
                _spec(base + "/x"), StreamOptions(timeout_s=0.2, extra={"max_retries": 0})
            )
        return str(caught.value)

    assert asyncio.run(refused()) == "Connection error."
    never = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await never.wait()

    async def main() -> object:
        server = await asyncio.start_server(hold, "127.0.0.1", 0)
        try:
            return await stalled(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
        finally:
            server.close()

    assert asyncio.run(main()) == "Request timed out."


def test_urls_the_direct_path_leaves_to_httpx() -> None:
    assert plain_target("https://api.example/v1") is None
    assert plain_target("http://user:secret@127.0.0.1:8080/v1") is None
    assert plain_target("http://bücher.example/v1") is None
    target = plain_target("http://LocalHost:80/v1/chat?a=1#frag")
    assert target is not None
    assert (target.host, target.port, target.target, target.host_header) == (
        "localhost",
        80,
        b"/v1/chat?a=1",
        b"localhost",
    )


def test_a_print_turn_against_a_local_server_never_imports_httpx(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    with LLMServer([{"blocks": [{"text": "Hi there"}]}]) as server:
        models = {"providers": {"mock": {"baseUrl": server.base_url + "/v1", "api": "openai-completions",
                                         "apiKey": "mock-key", "models": [{"id": "mock-1"}]}}}  # fmt: skip
        (agent / "models.json").write_text(json.dumps(models))
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "piko", "--no-session", "-p", "--provider", "mock",
             "--model", "mock-1", "say hi"],
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)}, capture_output=True, text=True,
            timeout=90, cwd=tmp_path, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hi there"
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "h11" in imported  # the request went through the plain-http path
    assert not {name for name in imported if name.split(".")[0] == "httpx"}


def test_the_plain_response_reads_as_httpx_s_streaming_api() -> None:
    body = "one\r\ntwo\nthré".encode() + b"e\n" + b'{"last": [1, 2]}'

    def answer(line: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
        return _ok(body, b"X-Twice: a", b"x-twice: b")

    async def read(base: str) -> object:
        lines = await send_with_retries(_spec(base + "/lines"), StreamOptions())
        got_lines = [line async for line in lines.aiter_lines()]
        whole = await send_with_retries(_spec(base + "/whole"), StreamOptions())
        assert isinstance(whole, PlainResponse)
        with pytest.raises(RuntimeError, match="aread"):
            _ = whole.content
        content = await whole.aread()
        again = b"".join([piece async for piece in whole.aiter_bytes()])
        return (
            got_lines,
            content,
            again,
            whole.text,
            whole.headers["X-TWICE"],
            dict(whole.headers),
            whole.is_closed,
        )

    (got_lines, content, again, text, twice, headers, closed), _seen = _run(answer, read)
    assert got_lines == ["one", "two", "thrée", '{"last": [1, 2]}']
    assert content == again == body
    assert text == body.decode()
    assert twice == "a, b" and headers["x-twice"] == "a, b"
    assert closed is True


def test_text_is_decoded_in_the_content_type_charset_as_httpx_does() -> None:
    word = "café"

    def answer(line: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
        if b"/latin" in line:
            return _ok(word.encode("latin-1") + b"\n", b"Content-Type: text/plain; charset=ISO-8859-1")
        return _ok(word.encode() + b"\n", b"Content-Type: text/plain; charset=no-such-codec")

    async def read(base: str) -> object:
        found = []
        for path in ("/latin", "/unknown"):
            streamed = await send_with_retries(_spec(base + path), StreamOptions())
            lines = [line async for line in streamed.aiter_lines()]
            response = await send_with_retries(_spec(base + path), StreamOptions())
            assert isinstance(response, PlainResponse)
            await response.aread()
            via_httpx = await http_client.get_client().post(base + path, content=b"{}")
            found.append((response.encoding, lines, response.text, via_httpx.encoding, via_httpx.text))
        return found

    (latin, unknown), _seen = _run(answer, read)
    assert latin == ("iso-8859-1", [word], word + "\n", "iso-8859-1", word + "\n")
    assert unknown == ("utf-8", [word], word + "\n", "utf-8", word + "\n")


def test_header_values_go_as_one_byte_a_character_on_both_paths_as_pi_sends_them() -> None:
    def answer(line: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
        if b"/old" in line:  # the plain path's answer, then httpx's from the original request
            return b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n"
        return _ok(b"{}")

    async def both(base: str) -> object:
        response = await send_with_retries(_spec(base + "/old", **{"x-team": "équipe"}), StreamOptions())
        assert type(response).__name__ == "Response"
        with pytest.raises(ProviderError) as refused:
            await send_with_retries(_spec(base + "/v1", **{"x-price": "5 €"}), StreamOptions())
        return str(refused.value)

    message, seen = _run(answer, both)
    assert [line for line, _headers, _body in seen] == [
        b"POST /old HTTP/1.1\r\n", b"POST /old HTTP/1.1\r\n", b"POST /new HTTP/1.1\r\n",
    ]  # fmt: skip
    sent = [dict((n.lower(), v) for n, v in headers)[b"x-team"] for _line, headers, _body in seen]
    assert sent == [b"\xe9quipe"] * 3
    assert message == (
        "Header \"x-price\" cannot be sent: character '€' at index 2 is not a single byte "
        "(HTTP header values are Latin-1)"
    )  # and the refused request never left
