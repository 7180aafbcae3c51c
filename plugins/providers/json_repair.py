"""JSON as models stream it: repairing what they get wrong, parsing tool arguments while they
are still arriving, a fast path through orjson, and streamed events that must parse."""

from __future__ import annotations

import json
import re
from typing import Any

from piko.lib.jsonio import loads
from piko.lib.partial_json import parse_partial_json
from piko.plugins.providers.provider_errors import ProviderError

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def repair_json(text: str) -> str:
    """Escape raw control characters inside strings and double backslashes of invalid escapes."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
        elif ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else None
            if nxt is None:
                out.append("\\\\")
            elif nxt == "u" and _HEX4.fullmatch(text, i + 2, i + 6):
                out.append(text[i : i + 6])
                i += 5
            elif nxt in _VALID_ESCAPES and nxt != "u":
                out.append("\\" + nxt)
                i += 1
            else:
                out.append("\\\\")
        elif ord(ch) < 0x20:
            out.append(_CONTROL_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def parse_json_with_repair(text: str) -> Any:
    """``json.loads``, retried once on the repaired text."""
    try:
        return fast_json_loads(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired != text:
            return json.loads(repaired)
        raise


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Arguments from possibly incomplete JSON: always an object (``{}`` when nothing parses)."""
    if not text or not text.strip():
        return {}
    try:
        value = parse_json_with_repair(text)
        return value if isinstance(value, dict) else {}
    except ValueError:
        pass
    parsed = parse_partial_json(text)
    if parsed is None:
        parsed = parse_partial_json(repair_json(text))
    return parsed if isinstance(parsed, dict) else {}


def fast_json_loads(data: str | bytes) -> Any:
    """Parse JSON with orjson, falling back to the stdlib (lone surrogates, odd numbers)."""
    return loads(data, lenient=True)


def parse_event_json(data: str | bytes, what: str = "the stream event") -> Any:
    """One streamed event's JSON (:func:`fast_json_loads`); what does not parse is a
    :class:`ProviderError` worded as the SDKs word it: ``Could not parse <what> as JSON: ...``."""
    try:
        return fast_json_loads(data)
    except ValueError as exc:
        raise ProviderError(f"Could not parse {what} as JSON: {exc}") from exc
