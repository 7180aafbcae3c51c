"""Best-effort parsing of a JSON object that is still arriving: what a tool call's arguments say so far.

:func:`parse_partial_json` closes the open strings, arrays and objects of an incomplete object
and parses the result (dropping a dangling key or value when that is what stops it).
:class:`NestingScan` keeps the nesting state of a scanned prefix, so a text that grows at its
end is scanned only once overall (:func:`parse_scanned` parses it with that state).

The scanner is hand-written because no JSON library offers partial parsing with this repair
(closing what is open); the parse itself is the standard library's C decoder, and the scanner
jumps between quotes and brackets with a regular expression instead of looking at every
character in Python.
"""

from __future__ import annotations

import json
import re
from typing import Any

_OUTSIDE = re.compile(r'["{}\[\]]')  # what changes the nesting outside strings
_INSIDE = re.compile(r'["\\]')  # what can end a string or escape its next character


class NestingScan:
    """The open brackets and string state of a JSON text scanned so far, resumable at its end."""

    __slots__ = ("escaped", "in_string", "position", "stack")

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.in_string = False
        self.escaped = False
        self.position = 0

    def scan(self, text: str) -> None:
        """Scan ``text[self.position:]`` (``text`` extends what was scanned before)."""
        i = self.position
        n = len(text)
        stack = self.stack
        in_string = self.in_string
        escaped = self.escaped
        outside = _OUTSIDE.search
        inside = _INSIDE.search
        while i < n:
            if in_string:
                if escaped:
                    escaped = False
                    i += 1
                    continue
                match = inside(text, i)
                if match is None:
                    i = n
                    break
                i = match.end()
                if match.group() == '"':
                    in_string = False
                else:
                    escaped = True
            else:
                match = outside(text, i)
                if match is None:
                    i = n
                    break
                i = match.end()
                ch = match.group()
                if ch == '"':
                    in_string = True
                elif ch == "{":
                    stack.append("}")
                elif ch == "[":
                    stack.append("]")
                elif stack:
                    stack.pop()
        self.position = i
        self.in_string = in_string
        self.escaped = escaped


def parse_scanned(text: str, scan: NestingScan) -> dict[str, Any] | None:
    """Parse ``text``, whose whole length ``scan`` has scanned, with its open strings and
    brackets closed (``None`` when nothing parses)."""
    candidate = text
    if scan.escaped:
        candidate = candidate[:-1]
    if scan.in_string:
        candidate += '"'
    closers = "".join(reversed(scan.stack))
    for _ in range(3):
        attempt = candidate.rstrip().rstrip(",").rstrip(":")
        if attempt.endswith('"') and attempt.count('"') % 2 == 1:
            attempt = attempt[:-1]
        try:
            value = json.loads(attempt + closers)
            return value if isinstance(value, dict) else None
        except ValueError:
            # drop a dangling key or value and try again
            cut = max(attempt.rfind(","), attempt.rfind("{"), attempt.rfind("["))
            if cut <= 0:
                return None
            candidate = attempt[: cut + (0 if attempt[cut] == "," else 1)]
    return None


def parse_partial_json(text: str) -> dict[str, Any] | None:
    """Best effort on an incomplete JSON object: ``{}`` for blank text, ``None`` when nothing parses."""
    if not text.strip():
        return {}
    text = text.lstrip()  # trailing blanks may sit inside an unterminated string
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else None
    except ValueError:
        pass
    scan = NestingScan()
    scan.scan(text)
    return parse_scanned(text, scan)
