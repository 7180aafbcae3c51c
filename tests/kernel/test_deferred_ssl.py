"""asyncio started without ``ssl`` (``piko.lib.deferred_ssl``, what the ``pi`` command does) still
makes every kind of TLS connection: through httpx, and through asyncio alone with nobody having
imported ``ssl``. Each case runs in a fresh interpreter, since this one has ``ssl`` already."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.http_servers import QuietHandler
from support.http_servers import serving_tls

_START = """
import sys
from piko.lib import deferred_ssl
deferred_ssl.defer_ssl()
import asyncio
assert "ssl" not in sys.modules and "_ssl" not in sys.modules, "ssl was imported with asyncio"
"""

_HANDED_OVER = """
ssl = sys.modules["ssl"]
import asyncio.base_events, asyncio.selector_events, asyncio.sslproto
assert asyncio.base_events.ssl is ssl and asyncio.selector_events.ssl is ssl and asyncio.sslproto.ssl is ssl
assert asyncio.sslproto.SSLAgainErrors == (ssl.SSLWantReadError, ssl.SSLSyscallError)
assert not any(type(f).__name__ == "_FirstImportWatcher" for f in sys.meta_path)
"""


class _Hello(QuietHandler):
    def do_GET(self) -> None:
        self.reply(200, b"hello over tls")


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with serving_tls(_Hello, tmp_path) as address_and_cert:
        yield address_and_cert


def _run(script: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", _START + textwrap.dedent(script) + _HANDED_OVER],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_asyncio_reaches_for_tls_with_nobody_having_imported_ssl(tls_server: tuple[str, Path]) -> None:
    address, _cert = tls_server
    host, port = address.split(":")
    out = _run(f"""
        async def main():
            try:
                await asyncio.open_connection({host!r}, {port}, ssl=True)  # the default context
            except Exception as exc:
                print(type(exc).__name__)
        asyncio.run(main())
    """)
    # the handshake ran and checked the certificate (no "ssl module not available")
    assert out.split() == ["SSLCertVerificationError"]


def test_an_asyncio_tls_connection_after_import_ssl(tls_server: tuple[str, Path]) -> None:
    address, cert = tls_server
    host, port = address.split(":")
    out = _run(f"""
        import ssl
        async def main():
            context = ssl.create_default_context(cafile={str(cert)!r})
            reader, writer = await asyncio.open_connection({host!r}, {port}, ssl=context)
            writer.write(b"GET / HTTP/1.0\\r\\nHost: {host}\\r\\n\\r\\n")
            print((await reader.read()).split(b"\\r\\n\\r\\n", 1)[1].decode())
            writer.close()
        asyncio.run(main())
    """)
    assert out.strip() == "hello over tls"


def test_an_https_request_through_httpx(tls_server: tuple[str, Path]) -> None:
    address, cert = tls_server
    out = _run(f"""
        import httpx
        async def main():
            async with httpx.AsyncClient(verify={str(cert)!r}) as client:
                print((await client.get("https://{address}/")).text)
        asyncio.run(main())
    """)
    assert out.strip() == "hello over tls"


def _run_alone(script: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr


def test_nothing_is_deferred_once_ssl_is_imported() -> None:
    _run_alone("""
        import ssl, sys
        from piko.lib import deferred_ssl
        deferred_ssl.defer_ssl()
        assert not any(type(f).__name__ == "_FirstImportWatcher" for f in sys.meta_path)
        import asyncio.base_events
        assert asyncio.base_events.ssl is ssl
    """)


def test_ssl_imported_before_asyncio_is_given_to_it_as_always() -> None:
    _run_alone("""
        import sys
        from piko.lib import deferred_ssl
        deferred_ssl.defer_ssl()
        import ssl
        import asyncio.base_events, asyncio.sslproto
        assert asyncio.base_events.ssl is ssl and asyncio.sslproto.ssl is ssl
        assert not any(type(f).__name__ == "_FirstImportWatcher" for f in sys.meta_path)
    """)


def test_deferring_imports_nothing_until_asyncio_is_imported() -> None:
    _run_alone("""
        import sys
        from piko.lib import deferred_ssl
        before = set(sys.modules)
        deferred_ssl.defer_ssl()
        deferred_ssl.defer_ssl()  # a second call adds no second watcher
        assert set(sys.modules) == before
        assert [type(f).__name__ for f in sys.meta_path].count("_FirstImportWatcher") == 1
    """)
