"""An OAuth token endpoint on 127.0.0.1: answers POSTs with scripted replies and records the requests."""

from __future__ import annotations

import json
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

from support.http_servers import QuietHandler


class TokenServer:
    """Answers POSTs with scripted ``(status, content type, body)`` replies (the last one repeats)
    and records each request's path, headers and JSON body in ``requests``."""

    def __init__(
        self, replies: list[tuple[int, str, str]], delay_s: float = 0.0, on_request: Any = None
    ) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                outer.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                )
                if on_request is not None:
                    on_request(outer.requests[-1])
                time.sleep(delay_s)
                status, content_type, text = (
                    outer.replies.pop(0) if len(outer.replies) > 1 else outer.replies[0]
                )
                self.reply(status, text.encode(), content_type)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/oauth/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the requests so far."""
        return [request["body"] for request in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
