"""AWS event-stream framing: prelude, headers of every type, CRC32 checks, incremental decoding."""

from __future__ import annotations

import asyncio
import struct
import uuid
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from piko.plugins.providers.aws_eventstream import EventStreamDecoder
from piko.plugins.providers.aws_eventstream import EventStreamError
from piko.plugins.providers.aws_eventstream import decode_message
from piko.plugins.providers.aws_eventstream import encode_event
from piko.plugins.providers.aws_eventstream import encode_exception
from piko.plugins.providers.aws_eventstream import encode_message
from piko.plugins.providers.aws_eventstream import iter_messages
from piko.plugins.providers.aws_eventstream import iter_messages_sync


def test_round_trip_of_an_event() -> None:
    frame = encode_event("contentBlockDelta", b'{"delta":{"text":"hi"}}')
    message = decode_message(frame)
    assert message.event_type == "contentBlockDelta"
    assert message.message_type == "event"
    assert message.headers[":content-type"] == "application/json"
    assert message.payload == b'{"delta":{"text":"hi"}}'


def test_layout_matches_the_specification() -> None:
    frame = encode_message({":message-type": "event"}, b"abc")
    total, headers_len, prelude_crc = struct.unpack(">III", frame[:12])
    assert total == len(frame)
    assert prelude_crc == zlib.crc32(frame[:8])
    assert headers_len == 1 + len(":message-type") + 1 + 2 + len("event")
    assert struct.unpack(">I", frame[-4:])[0] == zlib.crc32(frame[:-4])
    assert frame[12 + headers_len : -4] == b"abc"


def test_a_frame_built_by_hand_decodes() -> None:
    """Hand-assembled bytes (not from our encoder): one string header and a payload."""
    name, value, payload = b":event-type", b"messageStop", b'{"stopReason":"end_turn"}'
    headers = bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    frame = body + struct.pack(">I", zlib.crc32(body))
    assert decode_message(frame).headers == {":event-type": "messageStop"}


def test_every_header_type() -> None:
    raw = (
        b"\x01t\x00" + b"\x01f\x01" + b"\x01b\x02\xff" + b"\x01s\x03\x00\x10" + b"\x01i\x04\x00\x00\x01\x00"
        + b"\x01l\x05" + struct.pack(">q", -5) + b"\x01y\x06\x00\x02\x00\x01"
        + b"\x01d\x08" + struct.pack(">q", 1700000000000) + b"\x01u\x09" + uuid.UUID(int=1).bytes
    )  # fmt: skip
    total = 12 + len(raw) + 4
    prelude = struct.pack(">II", total, len(raw))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw
    message = decode_message(body + struct.pack(">I", zlib.crc32(body)))
    assert message.headers == {
        "t": True, "f": False, "b": -1, "s": 16, "i": 256, "l": -5, "y": b"\x00\x01",
        "d": 1700000000000, "u": str(uuid.UUID(int=1)),
    }  # fmt: skip


def test_checksum_failures_are_errors() -> None:
    frame = bytearray(encode_event("messageStart", b'{"role":"assistant"}'))
    broken_payload = bytearray(frame)
    broken_payload[-6] ^= 1
    with pytest.raises(EventStreamError, match="message checksum"):
        decode_message(bytes(broken_payload))
    broken_prelude = bytearray(frame)
    broken_prelude[9] ^= 1
    with pytest.raises(EventStreamError, match="prelude checksum"):
        EventStreamDecoder().feed(bytes(broken_prelude))
    with pytest.raises(EventStreamError, match="shorter"):
        decode_message(bytes(frame[:10]))


def test_bytes_split_anywhere_decode_the_same() -> None:
    frames = [
        encode_event("a", b"1"),
        encode_exception("throttlingException", b'{"message":"slow"}'),
        encode_event("b", b""),
    ]
    data = b"".join(frames)
    for step in (1, 3, 7, len(data)):
        decoder = EventStreamDecoder()
        out = []
        for i in range(0, len(data), step):
            out.extend(decoder.feed(data[i : i + step]))
        assert [(m.message_type, m.payload) for m in out] == [
            ("event", b"1"), ("exception", b'{"message":"slow"}'), ("event", b"")
        ]  # fmt: skip
        assert decoder.pending == 0


def test_truncated_stream_raises() -> None:
    data = encode_event("a", b"123456")
    with pytest.raises(EventStreamError, match="ended inside a message"):
        list(iter_messages_sync(data[:-3]))

    async def chunks():
        yield data[:5]
        yield data[5:]

    async def read() -> list[bytes]:
        return [m.payload async for m in iter_messages(chunks())]

    assert asyncio.run(read()) == [b"123456"]


def test_absurd_length_is_refused() -> None:
    prelude = struct.pack(">II", 1 << 30, 0)
    with pytest.raises(EventStreamError, match="invalid message length"):
        EventStreamDecoder().feed(prelude + struct.pack(">I", zlib.crc32(prelude)))


@given(
    headers=st.dictionaries(
        st.text(min_size=1, max_size=20).filter(lambda s: len(s.encode()) < 255),
        st.text(max_size=50),
        max_size=5,
    ),
    payload=st.binary(max_size=300),
    cut=st.integers(min_value=1, max_value=50),
)
def test_any_message_round_trips(headers: dict[str, str], payload: bytes, cut: int) -> None:
    frame = encode_message(headers, payload)
    decoder = EventStreamDecoder()
    out = decoder.feed(frame[:cut]) + decoder.feed(frame[cut:])
    assert len(out) == 1 and out[0].headers == headers and out[0].payload == payload
