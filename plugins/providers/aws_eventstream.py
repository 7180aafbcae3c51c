"""AWS event-stream binary framing (``application/vnd.amazon.eventstream``): decode and encode.

A message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes), the
headers, the payload, and a CRC32 of everything before it. Both checksums are verified; a
frame that fails them raises :class:`EventStreamError`, so a corrupted stream never yields
half-read data.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import AsyncIterator
from collections.abc import Iterator
from typing import Any

from attrs import define
from attrs import field

PRELUDE_LENGTH = 12
CRC_LENGTH = 4
MIN_MESSAGE_LENGTH = PRELUDE_LENGTH + CRC_LENGTH
MAX_MESSAGE_LENGTH = 24 * 1024 * 1024  # the service's own limit is 16 MiB of payload

# header value types
_TRUE, _FALSE, _BYTE, _SHORT, _INT, _LONG, _BYTES, _STRING, _TIMESTAMP, _UUID = range(10)


class EventStreamError(ValueError):
    """A frame that is malformed or fails its checksum."""


@define(slots=True)
class EventStreamMessage:
    """One decoded message: its headers (name -> value) and raw payload."""

    headers: dict[str, Any] = field(factory=dict)
    payload: bytes = b""

    @property
    def message_type(self) -> str:
        return str(self.headers.get(":message-type", "event"))

    @property
    def event_type(self) -> str | None:
        value = self.headers.get(":event-type")
        return None if value is None else str(value)


def _decode_headers(data: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    pos = 0
    end = len(data)
    try:
        while pos < end:
            name_len = data[pos]
            pos += 1
            name = data[pos : pos + name_len].decode("utf-8")
            pos += name_len
            kind = data[pos]
            pos += 1
            value: Any
            if kind == _TRUE:
                value = True
            elif kind == _FALSE:
                value = False
            elif kind == _BYTE:
                (value,) = struct.unpack_from(">b", data, pos)
                pos += 1
            elif kind == _SHORT:
                (value,) = struct.unpack_from(">h", data, pos)
                pos += 2
            elif kind == _INT:
                (value,) = struct.unpack_from(">i", data, pos)
                pos += 4
            elif kind in (_LONG, _TIMESTAMP):
                (value,) = struct.unpack_from(">q", data, pos)
                pos += 8
            elif kind in (_BYTES, _STRING):
                (length,) = struct.unpack_from(">H", data, pos)
                pos += 2
                raw = data[pos : pos + length]
                if len(raw) != length:
                    raise EventStreamError("header value runs past the headers section")
                pos += length
                value = raw.decode("utf-8") if kind == _STRING else bytes(raw)
            elif kind == _UUID:
                raw = data[pos : pos + 16]
                if len(raw) != 16:
                    raise EventStreamError("header value runs past the headers section")
                value = str(uuid.UUID(bytes=bytes(raw)))
                pos += 16
            else:
                raise EventStreamError(f"unknown header value type {kind}")
            if pos > end:
                raise EventStreamError("header value runs past the headers section")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamError(f"malformed headers: {exc}") from exc
    return headers


def decode_message(frame: bytes) -> EventStreamMessage:
    """Decode one complete frame (prelude to message CRC), verifying both checksums."""
    if len(frame) < MIN_MESSAGE_LENGTH:
        raise EventStreamError("frame shorter than the minimum message length")
    total, headers_len, prelude_crc = struct.unpack_from(">III", frame, 0)
    if total != len(frame):
        raise EventStreamError(f"frame length {len(frame)} does not match its prelude ({total})")
    if zlib.crc32(frame[:8]) != prelude_crc:
        raise EventStreamError("prelude checksum mismatch")
    (message_crc,) = struct.unpack_from(">I", frame, total - CRC_LENGTH)
    if zlib.crc32(frame[: total - CRC_LENGTH]) != message_crc:
        raise EventStreamError("message checksum mismatch")
    headers_end = PRELUDE_LENGTH + headers_len
    if headers_end > total - CRC_LENGTH:
        raise EventStreamError("headers length runs past the message")
    headers = _decode_headers(frame[PRELUDE_LENGTH:headers_end])
    return EventStreamMessage(headers=headers, payload=bytes(frame[headers_end : total - CRC_LENGTH]))


class EventStreamDecoder:
    """Incremental decoder: ``feed(bytes)`` returns the messages completed so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[EventStreamMessage]:
        self._buffer += data
        out: list[EventStreamMessage] = []
        while len(self._buffer) >= PRELUDE_LENGTH:
            total, _headers_len, prelude_crc = struct.unpack_from(">III", self._buffer, 0)
            if zlib.crc32(bytes(self._buffer[:8])) != prelude_crc:
                raise EventStreamError("prelude checksum mismatch")
            if total < MIN_MESSAGE_LENGTH or total > MAX_MESSAGE_LENGTH:
                raise EventStreamError(f"invalid message length {total}")
            if len(self._buffer) < total:
                break
            frame = bytes(self._buffer[:total])
            del self._buffer[:total]
            out.append(decode_message(frame))
        return out

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole message."""
        return len(self._buffer)


async def iter_messages(chunks: AsyncIterator[bytes]) -> AsyncIterator[EventStreamMessage]:
    """Messages from a body's byte chunks (``response.aiter_bytes()``); a truncated tail raises."""
    decoder = EventStreamDecoder()
    async for chunk in chunks:
        for message in decoder.feed(chunk):
            yield message
    if decoder.pending:
        raise EventStreamError(f"stream ended inside a message ({decoder.pending} bytes left over)")


def iter_messages_sync(data: bytes) -> Iterator[EventStreamMessage]:
    """Messages of a complete body."""
    decoder = EventStreamDecoder()
    yield from decoder.feed(data)
    if decoder.pending:
        raise EventStreamError(f"stream ended inside a message ({decoder.pending} bytes left over)")


# -- encoding (tests and test servers) ----------------------------------------------------------


def _encode_header(name: str, value: Any) -> bytes:
    raw_name = name.encode("utf-8")
    out = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return out + bytes([_TRUE if value else _FALSE])
    if isinstance(value, int):
        return out + bytes([_INT]) + struct.pack(">i", value)
    if isinstance(value, bytes):
        return out + bytes([_BYTES]) + struct.pack(">H", len(value)) + value
    if isinstance(value, uuid.UUID):
        return out + bytes([_UUID]) + value.bytes
    raw = str(value).encode("utf-8")
    return out + bytes([_STRING]) + struct.pack(">H", len(raw)) + raw


def encode_message(headers: dict[str, Any], payload: bytes) -> bytes:
    """One frame with the given headers (str, bytes, int, bool or UUID values) and payload."""
    raw_headers = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = PRELUDE_LENGTH + len(raw_headers) + len(payload) + CRC_LENGTH
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def encode_event(event_type: str, payload: bytes) -> bytes:
    """A JSON ``event`` frame as Bedrock sends them."""
    return encode_message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}, payload
    )


def encode_exception(exception_type: str, payload: bytes) -> bytes:
    """A modelled ``exception`` frame (``throttlingException``, ``validationException``...)."""
    return encode_message(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        payload,
    )
