"""Running a standard-library HTTP server on 127.0.0.1 for the length of a test, with a quiet handler."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterable
from collections.abc import Iterator


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
