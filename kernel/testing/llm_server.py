"""A scripted LLM server on 127.0.0.1 that answers in the providers' real streaming wire formats.

Usage::

    with LLMServer([{"blocks": [{"text": "Hello there."}]}]) as server:
        model = Model(id="mock-1", api="openai-completions", base_url=server.base_url + "/v1")
        ...
        server.requests  # [{"method", "path", "query", "headers", "body"}, ...]

Each request takes the next scripted *turn* (the ``scenario.json`` shape of the pi transcripts):
``{"blocks": [{"text": ...}, {"thinking": ...}, {"tool_call": {"name": ..., "arguments": {...}}}]}``
and the wire format is chosen by the path that was hit: ``.../chat/completions`` (OpenAI
chat completions), ``.../v1/messages`` (Anthropic messages), ``.../responses`` (OpenAI
responses), ``...:streamGenerateContent`` (Google), ``.../mistral/...`` (Mistral), from the
``piko.testing.wire_*`` modules, and whatever else is added with :func:`register_format`. Directives a turn may carry, whatever its format:

``status`` (or ``{"error": {"status", "body", "headers"}}``)
    answer with that HTTP status; ``error_body`` (dict or text) replaces the format's default body.
``headers``
    extra response headers (``{"retry-after": "1"}``), on errors and streams alike.
``repeat``
    serve this turn for every later request (a persistent 500).
``delay_s``
    seconds to wait before each body chunk.
``headers_delay_s``
    seconds to wait before sending the status line (a server slow to answer).
``stall_s``
    send the headers, then nothing for that long (then the body, if the client is still there).
``cut_after``
    drop the connection after that many body chunks (an incomplete chunked body).
``pause``
    ``{"after": N, "seconds": S}``: send N body chunks, then nothing for S seconds, then the rest
    (a model that stops mid-answer: the client must not need the next chunk to stop).
``stream_error``
    ``{"after": N, "body": {...}}``: a mid-stream error event after N chunks (format-specific).
``usage``
    token counts in pi's names (``input``, ``output``, ``cacheRead``, ``cacheWrite``, and
    ``reasoning``: the part of ``output`` the format reports as reasoning, sent only when given).
``usage_extra``
    fields merged into the format's usage object as they are (OpenRouter's ``cost``, ``is_byok``,
    ``cost_details``); OpenAI chat completions and Anthropic messages.
``stop_reason``
    the raw wire stop/finish reason to send instead of the natural one.
``sse``
    raw events instead of ``blocks``: dicts are framed by the format, strings sent verbatim.
``replay``
    ``{"status", "headers", "body_chunks"}`` of a recorded cassette, served verbatim.
``coalesce``
    send the whole body in one write (fast; for benchmarks).

Ids follow what the fake server of the pi transcripts sent: ``chatcmpl-mock0001`` for the Nth
request, ``call_`` + the first 24 hex digits of ``sha256("N/BLOCK")``; text is streamed word by
word and tool arguments in 12-character pieces; usage is ``input 100, output 20``.

Run ``python -m piko.testing.llm_server turns.json`` to serve a script from another process
(it prints the base URL and serves until stdin closes).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import pkgutil
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl
from urllib.parse import urlsplit

__all__ = [
    "ARGUMENT_PIECE",
    "DEFAULT_USAGE",
    "FORMATS",
    "LLMServer",
    "Reply",
    "TurnContext",
    "WireFormat",
    "as_bytes",
    "block_hash",
    "build_reply",
    "cassette_turns",
    "compact_json",
    "data_event",
    "discover_formats",
    "find_format",
    "load_cassette",
    "main",
    "pieces",
    "posted_to",
    "register_format",
    "tool_arguments",
    "turn_usage",
    "words",
]

DEFAULT_USAGE = {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0}
ARGUMENT_PIECE = 12

# ---------------------------------------------------------------------------
# What encoders see and produce
# ---------------------------------------------------------------------------


@dataclass
class TurnContext:
    """The request a turn answers."""

    seq: int  # 1-based number of the request
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any

    @property
    def model(self) -> str:
        """The model the request named (body ``model``, else the ``/models/<id>`` path part)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("model"), str):
            return str(self.body["model"])
        match = re.search(r"/models?/([^/:]+)", self.path)
        return match.group(1) if match else "mock"


@dataclass
class WireFormat:
    """How to answer one kind of endpoint.

    ``encode(turn, ctx)`` returns the body chunks of a successful stream; ``error_body(status,
    ctx)`` the body of an HTTP error; ``frame(event, ctx)`` frames one raw ``sse`` dict and
    ``stream_error(body, ctx)`` one mid-stream error event (both optional).
    """

    name: str
    matches: Callable[[str, str], bool]  # (method, path) -> bool
    encode: Callable[[dict[str, Any], TurnContext], list[bytes]]
    error_body: Callable[[int, TurnContext], bytes]
    content_type: str = "text/event-stream"
    frame: Callable[[Any, TurnContext], bytes] | None = None
    stream_error: Callable[[Any, TurnContext], bytes] | None = None
    error_content_type: str = "application/json"

    @classmethod
    def of_module(
        cls, module_name: str, name: str, matches: Callable[[str, str], bool], **fields: Any
    ) -> WireFormat:
        """The format a ``wire_*`` module defines by convention: its module-level ``encode``,
        ``error_body`` and, where it has them, ``frame`` and ``stream_error`` functions, named as
        this class's fields; ``fields`` adds or replaces any of them (``content_type=...``).
        Called from the module itself while it imports (``WireFormat.of_module(__name__, ...)``)."""
        module = sys.modules[module_name]
        found = {key: getattr(module, key) for key in _MODULE_FUNCTIONS if hasattr(module, key)}
        return cls(name=name, matches=matches, **{**found, **fields})


_MODULE_FUNCTIONS = ("encode", "error_body", "frame", "stream_error")

FORMATS: list[WireFormat] = []
_discovered = False
_discover_lock = threading.Lock()


def register_format(fmt: WireFormat) -> None:
    """Add (or replace, by name) a wire format; later registrations are tried first."""
    FORMATS[:] = [f for f in FORMATS if f.name != fmt.name]
    FORMATS.insert(0, fmt)


def discover_formats() -> None:
    """Import every ``wire_*.py`` module beside this one once (each registers its format)."""
    global _discovered
    with _discover_lock:
        if _discovered:
            return
        _discovered = True
        package = __name__.rpartition(".")[0]
        here = Path(__file__).resolve().parent
        for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda i: i.name):
            if info.name.startswith("wire_"):
                importlib.import_module(f"{package}.{info.name}" if package else info.name)


def posted_to(suffix: str) -> Callable[[str, str], bool]:
    """A :attr:`WireFormat.matches` for ``POST`` requests whose path ends with ``suffix``."""
    return lambda method, path: method == "POST" and path.endswith(suffix)


def find_format(method: str, path: str) -> WireFormat | None:
    discover_formats()
    for fmt in FORMATS:
        if fmt.matches(method, path):
            return fmt
    return None


# ---------------------------------------------------------------------------
# Helpers for encoders
# ---------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Text cut into words with their trailing whitespace (``"Let me"`` -> ``["Let ", "me"]``)."""
    pieces = re.findall(r"\s*\S+\s*", text)
    return pieces or ([text] if text else [])


def pieces(text: str, size: int = ARGUMENT_PIECE) -> list[str]:
    """Text cut into pieces of ``size`` characters."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def block_hash(seq: int, block_index: int, length: int = 24) -> str:
    """The hex id of a block: ``sha256("SEQ/BLOCK")`` (what the pi transcripts' server used)."""
    return hashlib.sha256(f"{seq}/{block_index}".encode()).hexdigest()[:length]


def compact_json(value: Any) -> str:
    """JSON without spaces, non-ASCII kept (as JavaScript's ``JSON.stringify``)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def text_turn(text: str, **directives: Any) -> dict[str, Any]:
    """A scripted turn that answers ``text`` (``directives``: ``usage=``, ``stop_reason=``, ... as
    the module docstring lists them)."""
    return {"blocks": [{"text": text}], **directives}


def tool_turn(name: str, arguments: dict[str, Any], **directives: Any) -> dict[str, Any]:
    """A scripted turn that calls the tool ``name`` with ``arguments``."""
    return {"blocks": [{"tool_call": {"name": name, "arguments": arguments}}], **directives}


def turn_usage(turn: dict[str, Any]) -> dict[str, int]:
    """The usage of a turn in pi's names, defaults filled in (``reasoning`` only when given)."""
    usage = dict(DEFAULT_USAGE)
    for key, value in (turn.get("usage") or {}).items():
        usage[{"cache_read": "cacheRead", "cache_write": "cacheWrite"}.get(key, key)] = int(value)
    return usage


def tool_arguments(call: dict[str, Any]) -> str:
    """The JSON text of a scripted ``tool_call``'s ``arguments`` (a string is sent as it is)."""
    arguments = call.get("arguments", {})
    return arguments if isinstance(arguments, str) else compact_json(arguments)


def as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return compact_json(value).encode()


def data_event(value: Any, end: bytes = b"\n\n") -> bytes:
    """One server-sent event with only a ``data:`` line (``value`` as :func:`as_bytes` makes it)."""
    return b"data: " + as_bytes(value) + end


# ---------------------------------------------------------------------------
# Replies
# ---------------------------------------------------------------------------


@dataclass
class Reply:
    """What the handler sends: status, headers, body chunks and the timing directives."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    chunked: bool = True
    delay_s: float = 0.0
    headers_delay_s: float = 0.0
    stall_s: float = 0.0
    cut_after: int | None = None
    pause: tuple[int, float] | None = None  # (after this many chunks, wait these seconds)


_HOP_BY_HOP = {"transfer-encoding", "content-length", "connection", "content-encoding", "keep-alive"}


def _error_status(turn: dict[str, Any]) -> int | None:
    if turn.get("status") is not None:
        return int(turn["status"])
    error = turn.get("error")
    if isinstance(error, dict) and error.get("status") is not None:
        return int(error["status"])
    return None


def _turn_headers(turn: dict[str, Any]) -> list[tuple[str, str]]:
    headers: dict[str, Any] = {}
    error = turn.get("error")
    if isinstance(error, dict) and isinstance(error.get("headers"), dict):
        headers.update(error["headers"])
    if isinstance(turn.get("headers"), dict):
        headers.update(turn["headers"])
    return [(str(k), str(v)) for k, v in headers.items()]


def _pause(value: Any) -> tuple[int, float] | None:
    if not isinstance(value, dict):
        return None
    return int(value.get("after") or 0), float(value.get("seconds") or 0)


def build_reply(turn: dict[str, Any], ctx: TurnContext) -> Reply:
    """The reply to a request for one scripted turn."""
    timing: dict[str, Any] = {
        "delay_s": float(turn.get("delay_s") or 0),
        "headers_delay_s": float(turn.get("headers_delay_s") or 0),
        "stall_s": float(turn.get("stall_s") or 0),
        "cut_after": turn.get("cut_after"),
        "pause": _pause(turn.get("pause")),
    }
    replay = turn.get("replay")
    if isinstance(replay, dict):
        headers = [(str(k), str(v)) for k, v in _pairs(replay.get("headers"))]
        headers = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
        chunks = [as_bytes(c) for c in replay.get("body_chunks") or []]
        if "body" in replay and not chunks:
            chunks = [as_bytes(replay["body"])]
        return Reply(
            status=int(replay.get("status", 200)),
            headers=headers + _turn_headers(turn),
            chunks=chunks,
            **timing,
        )

    fmt = find_format(ctx.method, ctx.path)
    if fmt is None:
        missing = {"error": {"message": f"LLMServer: no wire format for {ctx.method} {ctx.path}"}}
        return Reply(
            status=404,
            headers=[("content-type", "application/json")],
            chunks=[as_bytes(missing)],
            chunked=False,
        )

    status: int | None = _error_status(turn)
    if status is not None and status >= 400:
        error = turn.get("error") if isinstance(turn.get("error"), dict) else {}
        body_value = turn.get("error_body", error.get("body") if error else None)
        body = as_bytes(body_value) if body_value is not None else fmt.error_body(status, ctx)
        headers = [("content-type", fmt.error_content_type), *_turn_headers(turn)]
        return Reply(status=status, headers=headers, chunks=[body], chunked=False, **timing)

    if turn.get("sse") is not None:
        chunks = []
        for item in turn["sse"]:
            if isinstance(item, str | bytes) or fmt.frame is None:
                chunks.append(as_bytes(item))
            else:
                chunks.append(fmt.frame(item, ctx))
    else:
        chunks = fmt.encode(turn, ctx)
    stream_error = turn.get("stream_error")
    if isinstance(stream_error, dict) and fmt.stream_error is not None:
        after = int(stream_error.get("after", 0))
        chunks = [*chunks[:after], fmt.stream_error(stream_error.get("body"), ctx)]
    if turn.get("coalesce"):
        chunks = [b"".join(chunks)]
    headers = [
        ("content-type", fmt.content_type),
        ("cache-control", "no-cache"),
        *_turn_headers(turn),
    ]
    return Reply(status=200, headers=headers, chunks=chunks, **timing)


def _pairs(headers: Any) -> Iterable[tuple[Any, Any]]:
    if isinstance(headers, dict):
        return headers.items()
    if isinstance(headers, list):
        return [(h[0], h[1]) for h in headers if isinstance(h, list | tuple) and len(h) == 2]
    return []


# ---------------------------------------------------------------------------
# Cassettes (pi_agent_rust VCR recordings)
# ---------------------------------------------------------------------------


def load_cassette(path: str | Path) -> dict[str, Any]:
    """A VCR cassette: ``{"interactions": [{"request": ..., "response": ...}]}``."""
    return dict(json.loads(Path(path).read_text(encoding="utf-8")))


def cassette_turns(cassette: dict[str, Any] | str | Path, *, last_only: bool = False) -> list[dict[str, Any]]:
    """Turns that replay a cassette's responses verbatim (status, headers, body chunks), in order."""
    if not isinstance(cassette, dict):
        cassette = load_cassette(cassette)
    interactions = cassette.get("interactions") or []
    if last_only:
        interactions = interactions[-1:]
    return [{"replay": dict(i["response"])} for i in interactions]


# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def _handle(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        split = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        seq, turn = owner._take_turn(
            {
                "method": self.command,
                "path": split.path,
                "query": dict(parse_qsl(split.query)),
                "headers": headers,
                "body": body,
            }
        )
        ctx = TurnContext(seq, self.command, split.path, dict(parse_qsl(split.query)), headers, body)
        if turn is None:
            reply = Reply(
                status=400,
                headers=[("content-type", "application/json")],
                chunks=[
                    as_bytes({"error": {"message": f"LLMServer: no scripted turn left for request {seq}"}})
                ],
                chunked=False,
            )
        else:
            reply = build_reply(turn, ctx)
        try:
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError, OSError):
            self.close_connection = True

    def _wait(self, seconds: float) -> bool:
        """Sleep, or return False at once when the server stops."""
        if seconds <= 0:
            return True
        return not self.server.owner._stopping.wait(seconds)

    def _send(self, reply: Reply) -> None:
        if not self._wait(reply.headers_delay_s):
            self.close_connection = True
            return
        self.send_response(reply.status)
        names = {k.lower() for k, _ in reply.headers}
        for name, value in reply.headers:
            self.send_header(name, value)
        if reply.chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            body = b"".join(reply.chunks)
            if "content-length" not in names:
                self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        if not reply.chunked:
            self.wfile.write(b"".join(reply.chunks))
            self.wfile.flush()
            return
        if reply.stall_s and not self._wait(reply.stall_s):
            self._drop()
            return
        cut = None if reply.cut_after is None else int(reply.cut_after)
        for index, chunk in enumerate(reply.chunks):
            if cut is not None and index >= cut:
                break
            if reply.delay_s and not self._wait(reply.delay_s):
                self._drop()
                return
            if reply.pause and index == reply.pause[0] and not self._wait(reply.pause[1]):
                self._drop()
                return
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
        if cut is not None:
            self._drop()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection in the middle of a chunked body."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: LLMServer


class LLMServer:
    """A real HTTP server on 127.0.0.1 serving scripted turns in order (see the module docstring)."""

    def __init__(
        self,
        turns: list[Any] | None = None,
        *,
        cassette: dict[str, Any] | str | Path | None = None,
        port: int = 0,
    ) -> None:
        self.turns: list[dict[str, Any]] = list(turns or [])
        if cassette is not None:
            self.turns.extend(cassette_turns(cassette))
        self.requests: list[dict[str, Any]] = []
        self._port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> LLMServer:
        discover_formats()
        server = _Server(("127.0.0.1", self._port), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def add_turns(self, turns: Iterable[Any]) -> None:
        with self._lock:
            self.turns.extend(turns)

    @property
    def pending_turns(self) -> int:
        with self._lock:
            return len(self.turns)

    def _take_turn(self, record: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        with self._lock:
            self.requests.append(record)
            seq = len(self.requests)
            if not self.turns:
                return seq, None
            turn = self.turns[0]
            if not turn.get("repeat"):
                self.turns.pop(0)
            return seq, turn


def main(argv: list[str]) -> int:
    """Serve the turns of a JSON file until stdin closes; print the base URL first."""
    if len(argv) < 2:
        print("usage: llm_server.py TURNS.json [PORT]", file=sys.stderr)
        return 2
    turns = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    port = int(argv[2]) if len(argv) > 2 else 0
    with LLMServer(turns, port=port) as server:
        print(server.base_url, flush=True)
        try:
            sys.stdin.read()
        except KeyboardInterrupt:
            pass
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    from piko.testing.llm_server import main as _main  # the package module, where formats register

    sys.exit(_main(sys.argv))
