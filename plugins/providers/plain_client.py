"""A provider's request to a plain-``http`` server sent without httpx: :func:`post` writes it
through :mod:`.plain_http`'s pool (one per event loop) and returns a :class:`PlainResponse`,
the part of ``httpx.Response`` that streaming providers read.

httpx costs a fifth of a ``pi -p`` turn to import (see :mod:`.plain_http`), and a local model
server is the usual plain-``http`` peer. The request carries the headers httpx's client would
add (``Accept``, ``Accept-Encoding: gzip, deflate``, ``Connection``, ``User-Agent``) and the
body is decoded as httpx decodes it (gzip, deflate), so a server cannot tell the two apart.
URLs this does not cover (user info, a host that is not ASCII) go through httpx
(:func:`plain_target` returns ``None``)."""

from __future__ import annotations

import asyncio
import json
import weakref
import zlib
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any
from typing import NamedTuple

from piko.plugins.providers.plain_http import Answer
from piko.plugins.providers.plain_http import PlainConnections
from piko.plugins.providers.plain_http import Timeouts
from piko.version import __version__

USER_AGENT = f"piko/{__version__}"  # both paths send it: this one and the shared httpx client
REDIRECTS = frozenset((301, 302, 303, 307, 308))

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PlainConnections] = weakref.WeakKeyDictionary()


class DecodingError(Exception):
    """A body whose ``Content-Encoding`` does not decode (as httpx's ``DecodingError``)."""


class PlainTarget(NamedTuple):
    """Where a plain-``http`` request goes: origin, request target and ``Host`` header."""

    host: str
    port: int
    target: bytes
    host_header: bytes


def plain_target(url: str) -> PlainTarget | None:
    """``url``'s origin and target when it is plain ``http`` this module sends as httpx would;
    ``None`` for anything else (``https``, user info, a host that is not ASCII)."""
    if not url.startswith("http://"):
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if not host or "@" in parts.netloc or not (url.isascii() and " " not in url):
        return None
    netloc = parts.netloc.lower()
    if port == 80:
        netloc = netloc.rsplit(":", 1)[0]
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return PlainTarget(host, port or 80, target.encode("ascii"), netloc.encode("ascii"))


def _pool() -> PlainConnections:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = PlainConnections()
    return pool


async def post(
    target: PlainTarget, headers: Mapping[bytes, bytes], content: bytes, timeout_s: float | None
) -> PlainResponse:
    """POST ``content`` to ``target`` with ``headers`` (encoded as sent, by
    ``http_client.header_bytes``; after ``Host`` and httpx's defaults, which they override), every
    step limited to ``timeout_s``; the answer's body is read from the response."""
    given = {name.lower() for name in headers}
    raw: list[tuple[bytes, bytes]] = [] if b"host" in given else [(b"Host", target.host_header)]
    raw.extend((name, value) for key, name, value in _DEFAULT_HEADERS if key not in given)
    raw.extend(headers.items())
    if b"content-length" not in given:
        raw.append((b"Content-Length", str(len(content)).encode("ascii")))
    timeouts = Timeouts(timeout_s, timeout_s, timeout_s)
    answer = await _pool().request(
        b"POST", (target.host, target.port), target.target, raw, [content] if content else [], timeouts
    )
    return PlainResponse(answer)


_DEFAULT_HEADERS = tuple(
    (name.lower().encode("ascii"), name.encode("ascii"), value.encode("ascii"))
    for name, value in (
        ("Accept", "*/*"),
        ("Accept-Encoding", "gzip, deflate"),
        ("Connection", "keep-alive"),
        ("User-Agent", USER_AGENT),
    )
)  # (lower-case name to compare, name and value as sent), encoded once


class Headers(Mapping[str, str]):
    """Response headers looked up in any case; a repeated header reads as its values joined by
    ``", "`` (as ``httpx.Headers`` does)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self.raw = raw
        joined: dict[str, str] = {}
        for name, value in raw:
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            joined[key] = f"{joined[key]}, {text}" if key in joined else text
        self._joined = joined

    def __getitem__(self, name: str) -> str:
        return self._joined[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._joined

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined)

    def __len__(self) -> int:
        return len(self._joined)

    def __repr__(self) -> str:
        return f"Headers({self._joined!r})"


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or (by mistake, often) raw."""

    def __init__(self) -> None:
        self.first = True
        self.decompressor = zlib.decompressobj()

    def decompress(self, data: bytes) -> bytes:
        if self.first:
            self.first = False
            try:
                return self.decompressor.decompress(data)
            except zlib.error:
                self.decompressor = zlib.decompressobj(-zlib.MAX_WBITS)
        return self.decompressor.decompress(data)

    def flush(self) -> bytes:
        return self.decompressor.flush()


def _decoders(encoding: str) -> list[Any]:
    """The decompressors for a ``Content-Encoding`` value, last applied first; encodings other
    than gzip and deflate are left as they are (as httpx leaves them)."""
    decoders: list[Any] = []
    for value in reversed(encoding.split(",")):
        value = value.strip().lower()
        if value in ("gzip", "x-gzip"):
            decoders.append(zlib.decompressobj(zlib.MAX_WBITS | 16))
        elif value == "deflate":
            decoders.append(_Deflate())
    return decoders


class PlainResponse:
    """An answer being read: ``status_code``, ``reason_phrase``, ``http_version``, ``headers``
    and the body through ``aiter_bytes`` (decoded), ``aiter_raw``, ``aiter_text``,
    ``aiter_lines``, ``aread``, ``content``, ``text`` and ``json``, as on ``httpx.Response``."""

    def __init__(self, answer: Answer) -> None:
        self.status_code = answer.status_code
        self.reason_phrase = answer.reason.decode("latin-1")
        self.http_version = answer.http_version.decode("latin-1")
        self.headers = Headers(answer.headers)
        self._body = answer.body
        self._content: bytes | None = None
        self.is_closed = False

    @property
    def encoding(self) -> str:
        """The text's encoding: the ``Content-Type`` charset when Python knows it, else UTF-8
        (``httpx.Response.encoding``'s rule)."""
        import codecs
        from email.message import Message

        message = Message()
        message["content-type"] = self.headers.get("content-type", "")
        charset = message.get_content_charset()
        if charset:
            try:
                codecs.lookup(charset)
                return charset
            except LookupError:
                pass
        return "utf-8"

    @property
    def is_redirect(self) -> bool:
        return self.status_code in REDIRECTS and "location" in self.headers

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as it arrives, still encoded."""
        try:
            async for piece in self._body:
                yield piece
        finally:
            self.is_closed = True

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives, decoded by its ``Content-Encoding``."""
        if self._content is not None:
            if self._content:
                yield self._content
            return
        decoders = _decoders(self.headers.get("content-encoding", ""))
        if not decoders:
            async for piece in self.aiter_raw():
                yield piece
            return
        try:
            async for piece in self.aiter_raw():
                for decoder in decoders:
                    piece = decoder.decompress(piece)
                if piece:
                    yield piece
            tail = b""
            for decoder in decoders:
                tail = (decoder.decompress(tail) if tail else b"") + decoder.flush()
            if tail:
                yield tail
        except zlib.error as exc:
            raise DecodingError(str(exc)) from exc

    async def aiter_text(self) -> AsyncIterator[str]:
        """The decoded body as text (in :attr:`encoding`, a character split across pieces kept whole)."""
        import codecs

        decoder = codecs.getincrementaldecoder(self.encoding)("replace")
        async for piece in self.aiter_bytes():
            if text := decoder.decode(piece):
                yield text
        if text := decoder.decode(b"", final=True):
            yield text

    async def aiter_lines(self) -> AsyncIterator[str]:
        """The text body line by line, without line endings."""
        pending = ""
        async for text in self.aiter_text():
            lines = (pending + text).splitlines(keepends=True)
            pending = lines.pop() if lines and not lines[-1].endswith(("\n", "\r")) else ""
            for line in lines:
                yield line.rstrip("\r\n")
        if pending:
            yield pending

    async def aread(self) -> bytes:
        """The whole decoded body (kept: later reads give it again)."""
        if self._content is None:
            self._content = b"".join([piece async for piece in self.aiter_bytes()])
        return self._content

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise RuntimeError("the body has not been read: await response.aread() first")
        return self._content

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding, "replace")

    def json(self) -> Any:
        return json.loads(self.content)

    async def aclose(self) -> None:
        """Stop reading: a body not read through closes its connection."""
        self.is_closed = True
        await self._body.aclose()
