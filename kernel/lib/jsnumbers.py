"""JavaScript's number formatting, for output that must read exactly as pi's does.

``Math.round``, ``Number.prototype.toFixed`` and ``String(number)`` differ from Python's
``round``, ``format`` and ``str`` on halves, exponents and integral floats; pi's messages (image
notes, truncation notices, sizes: :func:`format_size`) are written with them.
"""

from __future__ import annotations

import math

__all__ = ["format_size", "js_round", "js_string", "js_to_fixed"]


def format_size(size: int) -> str:
    """pi's ``formatSize``: ``512B``, ``1.5KB``, ``2.0MB`` (``toFixed``: 1280 bytes is 1.3KB)."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{js_to_fixed(size / 1024, 1)}KB"
    return f"{js_to_fixed(size / (1024 * 1024), 1)}MB"


def js_round(value: float) -> int:
    """``Math.round``: halves round up (towards +infinity)."""
    return math.floor(value + 0.5)


def js_to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: ties are resolved away from zero on the exact binary value."""
    if math.isnan(value):
        return "NaN"
    if abs(value) >= 1e21 or math.isinf(value):
        return js_string(value)
    from decimal import ROUND_HALF_UP  # only here: decimal costs a millisecond to import
    from decimal import Decimal  # only here: decimal costs a millisecond to import

    exact = Decimal(abs(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{exact:f}"
    return f"-{text}" if value < 0 else text


def js_string(value: float | int) -> str:
    """``String(number)``: ``10`` for 10.0, ``1.5``, ``1e+21``, ``1e-7``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    # repr gives the shortest digits that read back as the same float, as JavaScript's do;
    # only where the point goes and when to use an exponent differ
    text = repr(value)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    stripped = digits.lstrip("0")
    point = len(whole) - (len(digits) - len(stripped)) + (int(exp_text) if exp_text else 0)
    digits = stripped.rstrip("0") or "0"
    k = len(digits)  # value == 0.<digits> * 10**point
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exp = point - 1
    body = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{body}e{'+' if exp >= 0 else '-'}{abs(exp)}"
