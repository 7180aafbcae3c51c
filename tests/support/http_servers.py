"""Running a standard-library HTTP server on 127.0.0.1 for the length of a test, with a quiet
handler, over TLS with a self-signed certificate where a test needs https."""

from __future__ import annotations

import contextlib
import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path

import pytest


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler that logs nothing to stderr; :meth:`reply` sends a whole answer."""

    def log_message(self, format: str, *args: object) -> None:
        """Say nothing: a test's output is what it asserts."""

    def reply(
        self,
        status: int,
        body: bytes = b"",
        content_type: str | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Answer ``status`` with ``body`` (its length in ``Content-Length``), ``content_type`` and
        ``headers``."""
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serving(server: http.server.HTTPServer) -> Iterator[str]:
    """``server`` answering from a daemon thread while the block runs (its ``host:port``), then
    shut down and closed."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{server.server_address[0]}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for ``127.0.0.1`` and its key, made by ``openssl`` in ``folder``: ``(cert, key)``."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make a self-signed certificate")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@contextlib.contextmanager
def serving_tls(
    handler: type[http.server.BaseHTTPRequestHandler], folder: Path
) -> Iterator[tuple[str, Path]]:
    """An HTTP server with ``handler`` answering over TLS on 127.0.0.1 while the block runs, with a
    self-signed certificate made in ``folder``: its ``host:port`` and the certificate (for a
    client that should trust it)."""
    import ssl

    cert, key = self_signed_certificate(folder)
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server) as address:
        yield address, cert
