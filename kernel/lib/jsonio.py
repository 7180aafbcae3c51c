"""Fast JSON in and out (orjson when present, the standard library otherwise) and atomic writes."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from piko.lib.jsnumbers import js_string

try:  # orjson is a dependency; the fallback keeps piko usable in odd environments
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None  # type: ignore[assignment]


LARGE_TEXT = 256 * 1024
"""From this size on, JSON is parsed by the standard library: orjson holds about 12 times the
text in scratch memory while it parses (13.9 MB for a 1 MB tool call, against 1.1 MB), and the
time it saves there is under a millisecond."""


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(data: str | bytes, *, lenient: bool = False) -> Any:
    """Parse JSON text, strictly as JavaScript's ``JSON.parse`` does (orjson's rules).

    ``lenient`` also accepts what only Python's parser takes (lone surrogate escapes, ``NaN``),
    as a retry after orjson refused.
    """
    if _orjson is not None and len(data) < LARGE_TEXT:
        try:
            return _orjson.loads(data)
        except ValueError:
            if not lenient:
                raise
    try:
        if lenient:
            return json.loads(data)
        return json.loads(data, parse_constant=_no_constants)
    except RecursionError:  # what orjson reports as an error, the standard library overflows on
        raise ValueError("JSON is nested too deeply") from None


def dumps(value: Any) -> str:
    """Compact JSON text, as JavaScript's ``JSON.stringify`` writes it (non-ASCII kept)."""
    return dumpb(value).decode("utf-8")


def dumpb(value: Any) -> bytes:
    """:func:`dumps` as UTF-8 bytes (numbers formatted as JavaScript formats them)."""
    if type(value) is float:
        return js_number(value).encode("ascii")
    if _orjson is not None:
        try:
            out = _orjson.dumps(value)
        except TypeError:  # e.g. a str with lone surrogates, which orjson refuses
            return _stdlib_dumpb(value)
        if _FLOAT_SUSPECT.search(out) is None:
            return out
        return _orjson.dumps(_js_floats(value))
    return _stdlib_dumpb(value)


# A number token orjson writes differently from JavaScript: "1.0" (JS "1"), "1e-7"/"1e+16"
# (JS "1e-7" but "0.000001"/"10000000000000000"). Strings may contain look-alikes; those
# only cost the slower exact path below.
_FLOAT_SUSPECT = re.compile(rb"[:,\[]-?\d+(?:\.0|(?:\.\d+)?e[+-]?\d+)[,\]}]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: float) -> str:
    """A float as ``JSON.stringify`` writes it: ``String(number)``, and ``null`` for NaN and infinities."""
    if value != value or value in (math.inf, -math.inf):
        return "null"
    return js_string(value)


def _js_floats(value: Any) -> Any:
    """A copy of ``value`` whose floats are pre-formatted JavaScript-style (orjson fragments)."""
    if type(value) is float:
        return _orjson.Fragment(js_number(value).encode("ascii"))
    if isinstance(value, dict):
        return {k: _js_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_js_floats(v) for v in value]
    return value


def _stdlib_dumpb(value: Any) -> bytes:
    """A small encoder for what orjson refuses: JavaScript's numbers, lone surrogates escaped."""
    return _encode(value).encode("utf-8")


def _encode(value: Any) -> str:
    import json

    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    if value is None or value is True or value is False:
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, dict):
        return "{" + ",".join(_encode(str(k)) + ":" + _encode(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def dumps_pretty(value: Any) -> str:
    """Indented JSON text (two spaces), for files people read."""
    import json

    return json.dumps(value, ensure_ascii=False, indent=2)


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file; raises ``OSError`` or ``ValueError``."""
    with open(path, "rb") as fh:
        return loads(fh.read())


def write_atomic(
    path: str | os.PathLike[str], data: str | bytes, mode: int | None = None, *, fsync: bool = True
) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, optionally with ``mode``.

    ``fsync`` makes the content durable before the rename (files people would miss: settings,
    auth); a session rewrite skips it, as its appends do.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # only here: it brings shutil along, 5 ms a start-up

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
