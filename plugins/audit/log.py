"""The audit log file: one JSON object a line, each with the SHA-256 of the line before it.

A line is ``{"seq", "time", "event", ...fields, "user", "host", "pid", "prev", "hash"}``; ``hash`` is
the SHA-256 of the line's canonical JSON (sorted keys, no spaces) without ``hash``, and ``prev``
the ``hash`` of the line before it (``""`` for the first). Appends take an exclusive lock on the
file, so several piko processes writing one log keep one chain.
"""

from __future__ import annotations

import datetime
import getpass
import hashlib
import json
import os
import socket
from typing import Any

from piko.lib.redaction import redact

MAX_VALUE_CHARS = 2000  # longer strings are cut, their length and hash kept


def canonical(line: dict[str, Any]) -> bytes:
    return json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def line_hash(line: dict[str, Any]) -> str:
    return hashlib.sha256(canonical({k: v for k, v in line.items() if k != "hash"})).hexdigest()


def result_size(result: Any) -> int:
    """The bytes of text a tool result carries."""
    content = getattr(result, "content", None) or []
    return sum(len(getattr(block, "text", "") or b"") for block in content)


class AuditLog:
    """Appends hash-chained lines to ``path``; ``content`` keeps prompt texts (else length and hash)."""

    def __init__(self, path: str, *, content: bool = False) -> None:
        self.path = path
        self.content = content
        try:
            user = getpass.getuser()
        except Exception:
            user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
        self._who = {"user": user, "host": socket.gethostname(), "pid": os.getpid()}

    def text_fields(self, name: str, text: str) -> dict[str, Any]:
        """A text as the log keeps it: the text itself only when content is enabled."""
        fields: dict[str, Any] = {
            f"{name}_chars": len(text),
            f"{name}_sha256": hashlib.sha256(text.encode()).hexdigest(),
        }
        if self.content:
            fields[name] = redact(text)
        return fields

    def value(self, value: Any) -> Any:
        """Arguments as the log keeps them: redacted, long strings cut."""
        if isinstance(value, str):
            value = redact(value)
            return (
                value
                if len(value) <= MAX_VALUE_CHARS
                else value[:MAX_VALUE_CHARS] + f"... ({len(value)} chars)"
            )
        if isinstance(value, dict):
            return {str(k): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value

    def append(self, event: str, **fields: Any) -> None:
        """Write one line after the last one (raises ``OSError`` when the file cannot be written)."""
        import fcntl

        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            prev, seq = _last(fd)
            now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
            line: dict[str, Any] = {"seq": seq + 1, "time": now.replace("+00:00", "Z"), "event": event}
            line.update({k: v for k, v in fields.items() if v is not None})
            line.update(self._who)
            line["prev"] = prev
            line = json.loads(redact(json.dumps(line)))  # one rule for every value written
            line["hash"] = line_hash(line)
            os.write(fd, json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
        finally:
            os.close(fd)


def _last(fd: int) -> tuple[str, int]:
    """The hash and sequence number of the file's last line (``("", 0)`` for an empty file)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return "", 0
    chunk = min(size, 65536)
    data = os.pread(fd, chunk, size - chunk)
    tail = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        last = json.loads(tail)
        return str(last.get("hash", "")), int(last.get("seq", 0))
    except (ValueError, TypeError):
        return hashlib.sha256(tail).hexdigest(), 0  # a damaged last line: chain on from its bytes
