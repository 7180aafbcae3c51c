"""Ids and timestamps as pi makes them: entry ids, UUIDv7 session ids, ISO times with milliseconds."""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from collections.abc import Container
from typing import Any


def new_entry_id(taken: Container[str]) -> str:
    """Eight hex characters (the start of a random UUID), unique within ``taken``; 100 tries, then a full UUID."""
    for _ in range(100):
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


class _Uuid7:
    """UUIDv7 exactly as the ``uuid`` npm package makes them: ms time, then a 31-bit counter seeded at random."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._msecs = -1
        self._seq = 0

    def __call__(self) -> str:
        rnds = os.urandom(16)
        with self._lock:
            now = time.time_ns() // 1_000_000
            if now > self._msecs:
                self._seq = ((rnds[6] & 0x7F) << 24) | (rnds[7] << 16) | (rnds[8] << 8) | rnds[9]
                self._msecs = now
            else:
                self._seq = (self._seq + 1) & 0xFFFFFFFF
                if self._seq == 0:
                    self._msecs += 1
            msecs, seq = self._msecs, self._seq
        b = bytearray(16)
        b[0:6] = msecs.to_bytes(6, "big")
        b[6] = 0x70 | ((seq >> 28) & 0x0F)
        b[7] = (seq >> 20) & 0xFF
        b[8] = 0x80 | ((seq >> 14) & 0x3F)
        b[9] = (seq >> 6) & 0xFF
        b[10] = ((seq << 2) & 0xFF) | (rnds[10] & 0x03)
        b[11:16] = rnds[11:16]
        h = b.hex()
        return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\Z")


class InvalidSessionIdError(ValueError):
    """A session id given by the user (``--session-id``) that pi would not accept; pi's wording."""

    def __init__(self) -> None:
        super().__init__(
            "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
            "and start and end with an alphanumeric character"
        )


def check_session_id(session_id: str) -> str:
    """``session_id`` if it can name a session file (pi's rule), else :class:`InvalidSessionIdError`."""
    if not _SESSION_ID.match(session_id):
        raise InvalidSessionIdError()
    return session_id


new_session_id = _Uuid7()
new_session_id.__doc__ = (
    "A new session id: a UUIDv7 (``01a228af-d835-700c-...``), monotonic within the process."
)


def iso_from_ms(ms: int) -> str:
    """``Date.toISOString()``: ``2026-11-29T19:02:30.908Z``."""
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def iso_now() -> str:
    """The current time as ``Date.toISOString()`` writes it."""
    return iso_from_ms(time.time_ns() // 1_000_000)


_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$")


def ms_from_iso(text: Any) -> int | None:
    """``new Date(text).getTime()`` for ISO timestamps; ``None`` when it is not one."""
    if not isinstance(text, str):
        return None
    m = _ISO.match(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac = m.group(7) or "0"
    millis = int((frac + "00")[:3])
    try:
        import calendar

        seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (OverflowError, ValueError):
        return None
    zone = m.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds * 1000 + millis
