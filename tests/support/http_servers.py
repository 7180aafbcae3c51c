"""Running a standard-library HTTP server on 127.0.0.1 for the length of a test."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator


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
