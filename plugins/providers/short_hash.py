"""pi's ``shortHash``: a short, deterministic id derived from a long string (tool call ids)."""

from __future__ import annotations

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def _base36(n: int) -> str:
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(_DIGITS[r])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """Two 32-bit multiplicative hashes over the UTF-16 code units of ``text``, in base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    raw = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(raw), 2):
        ch = raw[i] | (raw[i + 1] << 8)
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)
