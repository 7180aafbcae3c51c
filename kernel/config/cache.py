"""Documents in piko's cache folder that hold while their key does: the entry-point scan, the catalog summary.

A document is ``{"version", "key", "payload"}``: it is read back only while its format version and
its key (what the payload was made from: file times, sizes, paths) are the ones asked for. It is
never needed, only saved work: a missing, broken or unwritable one means the work is done again,
and ``PIKO_NO_CACHE=1`` turns reading and writing off.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from piko.lib import jsonio


def enabled() -> bool:
    """Whether cache documents are read and written (not with ``PIKO_NO_CACHE=1``)."""
    return os.environ.get("PIKO_NO_CACHE") != "1"


def read(path: Path, version: int, key: Any) -> Any:
    """The payload of the document at ``path`` when it has ``version`` and ``key``; else ``None``."""
    if not enabled():
        return None
    try:
        data = jsonio.read_json_file(path)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != version or data.get("key") != key:
        return None
    return data.get("payload")


def write(path: Path, version: int, key: Any, payload: Any) -> None:
    """Save ``payload`` for ``key``; a cache folder that cannot be written is left as it is."""
    if not enabled():
        return
    try:
        jsonio.write_atomic(
            path, jsonio.dumps({"version": version, "key": key, "payload": payload}), fsync=False
        )
    except OSError:
        pass  # the work is done again next time
