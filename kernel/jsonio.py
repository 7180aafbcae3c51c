"""Fast JSON in and out (orjson when present, the standard library otherwise) and atomic writes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

try:  # orjson is a dependency; the fallback keeps piko usable in odd environments
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None  # type: ignore[assignment]


def loads(data: str | bytes) -> Any:
    """Parse JSON text."""
    if _orjson is not None:
        return _orjson.loads(data)
    import json

    return json.loads(data)


def dumps(value: Any) -> str:
    """Compact JSON text, as JavaScript's ``JSON.stringify`` writes it (non-ASCII kept)."""
    if _orjson is not None:
        return _orjson.dumps(value).decode("utf-8")
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps_pretty(value: Any) -> str:
    """Indented JSON text (two spaces), for files people read."""
    import json

    return json.dumps(value, ensure_ascii=False, indent=2)


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file; raises ``OSError`` or ``ValueError``."""
    with open(path, "rb") as fh:
        return loads(fh.read())


def write_atomic(path: str | os.PathLike[str], text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, optionally with ``mode``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
