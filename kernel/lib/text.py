"""Text helpers every plugin kind may use: UTF-16 lengths, line endings, JavaScript whitespace, key case."""

from __future__ import annotations

import re

__all__ = ["JS_WHITESPACE", "camel", "js_length", "normalize_newlines", "snake"]

JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What JavaScript's ``trim()`` removes: its WhiteSpace and LineTerminator characters
(``text.strip(JS_WHITESPACE)`` is ``text.trim()``)."""


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (a character outside the BMP counts twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def camel(name: str) -> str:
    """snake_case -> camelCase (``tool_call_id`` -> ``toolCallId``); a name without ``_`` is kept."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_UPPER = re.compile(r"(?<!^)(?=[A-Z])")
_snake_cache: dict[str, str] = {}


def snake(name: str) -> str:
    """camelCase -> snake_case (``toolCallId`` -> ``tool_call_id``); a snake_case name is kept."""
    cached = _snake_cache.get(name)
    if cached is None:
        cached = _UPPER.sub("_", name).lower()
        if len(_snake_cache) < 4096:  # names come from code and wire formats: a small, fixed set
            _snake_cache[name] = cached
    return cached
