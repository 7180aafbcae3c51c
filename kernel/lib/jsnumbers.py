"""JavaScript's number formatting, for output that must read exactly as pi's does.

``Math.round``, ``Number.prototype.toFixed`` and ``String(number)`` differ from Python's
``round``, ``format`` and ``str`` on halves, exponents and integral floats; pi's messages (image
notes, truncation notices, sizes) are written with them.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["js_round", "js_string", "js_to_fixed"]


def js_round(value: float) -> int:
    """``Math.round``: halves round up (towards +infinity)."""
    return math.floor(value + 0.5)


def js_to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: ties are resolved away from zero on the exact binary value."""
    if math.isnan(value):
        return "NaN"
    if abs(value) >= 1e21 or math.isinf(value):
        return js_string(value)
    exact = Decimal(abs(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{exact:f}"
    return f"-{text}" if value < 0 else text


def js_string(value: float | int) -> str:
    """``String(number)``: ``10`` for 10.0, ``1.5``, ``1e+21``, ``1e-7``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digits_tuple.digits)).rstrip("0") or "0"
    exponent = int(digits_tuple.exponent) + len(digits_tuple.digits) - len(digits)
    k = len(digits)
    n = exponent + k  # value == 0.<digits> * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
