"""The shared HTTP client: plain-http requests skip the TLS set-up, https still verifies certificates."""

from __future__ import annotations

import asyncio
import http.server
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.http_servers import QuietHandler
from support.http_servers import serving
from support.http_servers import serving_tls

from piko.plugins.providers import common
from piko.plugins.providers import http_client


class _Hello(QuietHandler):
    def do_GET(self) -> None:
        self.reply(200, b"hello")


@pytest.fixture
def plain_server() -> Iterator[str]:
    with serving(http.server.HTTPServer(("127.0.0.1", 0), _Hello)) as address:
        yield address


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[str]:
    with serving_tls(_Hello, tmp_path) as (address, _cert):
        yield address


def test_plain_http_requests_never_build_the_tls_transport(
    plain_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(key, raising=False)

    async def run() -> tuple[str, object]:
        client = common.get_client()
        try:
            response = await client.get(f"http://{plain_server}/")
            return response.text, client._transport.transport  # type: ignore[attr-defined]
        finally:
            await client.aclose()

    text, tls_transport = asyncio.run(run())
    assert text == "hello"
    assert tls_transport is None  # the certificate store was never loaded


def test_https_requests_still_verify_certificates(tls_server: str) -> None:
    async def run() -> None:
        client = common.get_client()
        try:
            await client.get(f"https://{tls_server}/")
        finally:
            await client.aclose()

    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(run())


def test_a_proxy_variable_keeps_httpx_s_own_routing(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(key, raising=False)
    assert not http_client._proxy_configured()
    assert list(http_client._plain_http_mount()) == ["http://"]
    monkeypatch.setenv("HTTP_PROXY", "")  # empty: no proxy
    assert not http_client._proxy_configured()
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert http_client._proxy_configured()  # get_client() then uses httpx's own transport
