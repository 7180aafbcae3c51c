"""Strict JSON Lines for RPC mode: LF-only framing, JSON parsing with pi's (V8's) error wording.

Records are split on LF only (U+2028/U+2029 and lone CRs inside a record are data), a trailing
CR is stripped, bytes that are not UTF-8 become U+FFFD, and a last record without LF still
counts. :func:`parse_line` accepts exactly what ``JSON.parse`` accepts and words its errors the
way Node's parser does, so ``"Failed to parse command: ..."`` responses read like pi's.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from piko.lib import jsonio

__all__ = ["LineSplitter", "ParseError", "parse_line", "serialize"]


class LineSplitter:
    """Turns chunks of bytes into records: ``feed(chunk)`` and, at end of input, ``finish()``."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[str]:
        """The complete records ``chunk`` finished (possibly none)."""
        if b"\n" not in chunk:
            self._buffer += chunk
            return []
        self._buffer += chunk
        *complete, rest = bytes(self._buffer).split(b"\n")
        self._buffer = bytearray(rest)
        return [_decode(raw) for raw in complete]

    def finish(self) -> list[str]:
        """The unterminated last record, if any bytes remain."""
        if not self._buffer:
            return []
        raw, self._buffer = bytes(self._buffer), bytearray()
        return [_decode(raw)]


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text


def serialize(value: Any) -> bytes:
    """One record: compact JSON as ``JSON.stringify`` writes it, then LF.

    U+2028/U+2029 are written raw (JSON allows them; clients must split on LF only). A value
    holding something JSON cannot represent is written with that part as a string rather than
    lost.
    """
    try:
        return jsonio.dumpb(value) + b"\n"
    except (TypeError, ValueError, OverflowError):
        from piko.data.wire import jsonable  # only for a value orjson refused

        return jsonio.dumpb(jsonable(value)) + b"\n"


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


class ParseError(ValueError):
    """A record that is not JSON; the message is worded as Node's ``JSON.parse`` words it."""


class _Constant(Exception):
    pass


class _IntegerTooLong(Exception):
    pass


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


def _parse_int(text: str) -> int:
    limit = sys.get_int_max_str_digits()
    if limit and len(text) - text.startswith("-") > limit:
        raise _IntegerTooLong(text)
    return int(text)


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_int=_parse_int)
NESTING_LIMIT = "JSON is nested too deeply (piko reads up to about 1000 levels)"


def parse_line(line: str) -> Any:
    """The JSON value of one record; raises :class:`ParseError` with V8's wording.

    What ``JSON.parse`` accepts but Python cannot build gets its own message: nesting deeper
    than about 1000 levels, and an integer longer than Python reads (4300 digits by default;
    JavaScript would read it as ``Infinity``).
    """
    try:
        return jsonio.loads(line)
    except (ValueError, TypeError):
        pass  # orjson refuses some valid JSON (lone surrogate escapes, huge integers): ask json
    try:
        return _DECODER.decode(line)
    except _IntegerTooLong:
        raise ParseError(_V8Scanner(line, sys.get_int_max_str_digits()).run() or NESTING_LIMIT) from None
    except (ValueError, _Constant, RecursionError):
        pass
    message = v8_error(line)
    raise ParseError(message or NESTING_LIMIT)


# What JSON.parse reports, located the way V8's parser walks the text (UTF-16 code units).

_WS = frozenset(map(ord, " \t\n\r"))
_DIGITS = frozenset(range(0x30, 0x3A))
_HEX = frozenset(map(ord, "0123456789abcdefABCDEF"))
_ESCAPES = frozenset(map(ord, '"\\/bfnrt'))
_CONTEXT = 10  # characters V8 quotes either side of an unexpected token in a long text
_SPECIAL = ("NaN", "Infinity", "undefined", "[object Object]")


class _Fail(Exception):
    def __init__(self, message: str) -> None:
        self.message = message


class _V8Scanner:
    """Walks JSON text as V8's ``JsonParser`` does, only to find and word the first error."""

    def __init__(self, text: str, max_integer_digits: int = 0) -> None:
        self.text = text
        self.max_integer_digits = max_integer_digits  # when set, a longer integer is an error
        self.units = memoryview(text.encode("utf-16-le", "surrogatepass")).cast("H")
        self.n = len(self.units)
        self.pos = 0

    def _decode(self, start: int, end: int) -> str:
        return bytes(self.units[start:end]).decode("utf-16-le", "surrogatepass")

    def peek(self) -> int | None:
        return self.units[self.pos] if self.pos < self.n else None

    def skip_ws(self) -> int | None:
        while self.pos < self.n and self.units[self.pos] in _WS:
            self.pos += 1
        return self.peek()

    def fail_at(self, template: str) -> _Fail:
        return _Fail(f"{template} in JSON at position {self.pos}")

    def unexpected(self) -> _Fail:
        """V8's ``ReportUnexpectedToken`` without an explicit message, at the cursor."""
        c = self.peek()
        if c is None:
            return _Fail("Unexpected end of JSON input")
        if c in _DIGITS or c == 0x2D:
            return self.fail_at("Unexpected number")
        if c == 0x22:
            return self.fail_at("Unexpected string")
        if self.text in _SPECIAL:
            return _Fail(f'"{self.text}" is not valid JSON')
        token = self._decode(self.pos, self.pos + 1)
        pos, n = self.pos, self.n
        if n <= 2 * _CONTEXT + 1:
            return _Fail(f"Unexpected token '{token}', \"{self.text}\" is not valid JSON")
        if pos < _CONTEXT:
            snippet = self._decode(0, pos + _CONTEXT)
            return _Fail(f"Unexpected token '{token}', \"{snippet}\"... is not valid JSON")
        if pos >= n - _CONTEXT:
            snippet = self._decode(pos - _CONTEXT, n)
            return _Fail(f"Unexpected token '{token}', ...\"{snippet}\" is not valid JSON")
        snippet = self._decode(pos - _CONTEXT, pos + _CONTEXT)
        return _Fail(f"Unexpected token '{token}', ...\"{snippet}\"... is not valid JSON")

    def expect(self, unit: int, template: str | None) -> None:
        self.skip_ws()
        if self.peek() != unit:
            raise self.fail_at(template) if template else self.unexpected()
        self.pos += 1

    def run(self) -> str | None:
        try:
            self.value()
            if self.skip_ws() is not None:
                raise _Fail(f"Unexpected non-whitespace character after JSON at position {self.pos}")
        except _Fail as failure:
            return failure.message
        return None

    def value(self) -> None:
        """One value; containers are walked with an explicit stack (any depth)."""
        stack: list[int] = []  # the closer of each open container: 0x7D for an object, 0x5D for an array
        while True:
            c = self.skip_ws()
            if c == 0x7B:
                self.pos += 1
                if self.skip_ws() == 0x7D:
                    self.pos += 1
                else:
                    # V8 words only the first object's missing colon
                    self.property_name("Expected property name or '}'", "Expected ':' after property name")
                    stack.append(0x7D)
                    continue
            elif c == 0x5B:
                self.pos += 1
                if self.skip_ws() == 0x5D:
                    self.pos += 1
                else:
                    stack.append(0x5D)
                    continue
            elif c == 0x22:
                self.string()
            elif c is not None and (c in _DIGITS or c == 0x2D):
                self.number()
            elif c == 0x74:
                self.literal("true")
            elif c == 0x66:
                self.literal("false")
            elif c == 0x6E:
                self.literal("null")
            else:
                raise self.unexpected()
            # a value ended: close containers or move to their next element
            while stack:
                c = self.skip_ws()
                in_object = stack[-1] == 0x7D
                if c == 0x2C:
                    self.pos += 1
                    if in_object:
                        self.property_name("Expected double-quoted property name", None)
                    break
                if c == stack[-1]:
                    self.pos += 1
                    stack.pop()
                    continue
                raise self.fail_at(
                    "Expected ',' or '}' after property value"
                    if in_object
                    else "Expected ',' or ']' after array element"
                )
            else:
                return

    def property_name(self, missing: str, no_colon: str | None) -> None:
        """An object's property name and the ``:`` after it; ``missing`` words a name that is not
        there, ``no_colon`` a missing colon (``None``: the unexpected token)."""
        self.expect(0x22, missing)
        self.pos -= 1
        self.string()
        self.expect(0x3A, no_colon)

    def literal(self, word: str) -> None:
        for expected in word:
            if self.peek() != ord(expected):
                raise self.unexpected()
            self.pos += 1

    def string(self) -> None:
        self.pos += 1  # the opening quote
        while True:
            c = self.peek()
            if c is None:
                raise self.fail_at("Unterminated string")
            if c == 0x22:
                self.pos += 1
                return
            if c == 0x5C:
                self.pos += 1
                c = self.peek()
                if c is None or c > 0xFF:
                    raise self.unexpected()
                if c == 0x75:
                    for _ in range(4):
                        self.pos += 1
                        if self.peek() not in _HEX:
                            raise self.fail_at("Bad Unicode escape")
                elif c not in _ESCAPES:
                    raise self.fail_at("Bad escaped character")
            elif c < 0x20:
                raise self.fail_at("Bad control character in string literal")
            self.pos += 1

    def digits(self) -> None:
        while self.peek() in _DIGITS:
            self.pos += 1

    def number(self) -> None:
        start = self.pos
        if self.peek() == 0x2D:
            self.pos += 1
        if self.peek() == 0x30:
            self.pos += 1
            if self.peek() in _DIGITS:
                raise self.unexpected()
        elif self.peek() in _DIGITS:
            first = self.pos
            self.digits()
            digits = self.pos - first
            limit = self.max_integer_digits
            if limit and digits > limit and self.peek() not in (0x2E, 0x65, 0x45):
                raise _Fail(
                    f"Number too long in JSON at position {start} ({digits} digits; "
                    f"piko reads integers of up to {limit} digits)"
                )
        else:
            raise self.fail_at("No number after minus sign")
        if self.peek() == 0x2E:
            self.pos += 1
            if self.peek() not in _DIGITS:
                raise self.fail_at("Unterminated fractional number")
            self.digits()
        if self.peek() in (0x65, 0x45):
            self.pos += 1
            if self.peek() in (0x2B, 0x2D):
                self.pos += 1
            if self.peek() not in _DIGITS:
                raise self.fail_at("Exponent part is missing a number")
            self.digits()


def v8_error(text: str) -> str | None:
    """What ``JSON.parse(text)`` throws in Node, or None when it accepts the text."""
    return _V8Scanner(text).run()
