"""JavaScript and Node formatting that pi's tool messages depend on (numbers, fs errors, UTF-8 bytes)."""

from __future__ import annotations

import errno
import os
import re

from piko.lib.jsnumbers import js_round
from piko.lib.jsnumbers import js_string
from piko.lib.jsnumbers import js_to_fixed

__all__ = [
    "NodeFsError",
    "errno_code",
    "inspect_string",
    "js_round",
    "js_string",
    "js_to_fixed",
    "node_error_message",
    "require_no_null_bytes",
    "to_utf8_bytes",
]

# libuv's descriptions (uv_strerror), which Node puts in fs error messages.
_UV_DESCRIPTIONS: dict[int, str] = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.EEXIST: "file already exists",
    errno.EROFS: "read-only file system",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENAMETOOLONG: "name too long",
    errno.ENOSPC: "no space left on device",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "file table overflow",
    errno.EBUSY: "resource busy or locked",
    errno.EIO: "i/o error",
    errno.EINVAL: "invalid argument",
    errno.EXDEV: "cross-device link not permitted",
    errno.ENOTEMPTY: "directory not empty",
    errno.EFBIG: "file too large",
    errno.EDQUOT: "disk quota exceeded",
    errno.ETXTBSY: "text file is busy",
    errno.EAGAIN: "resource temporarily unavailable",
    errno.EBADF: "bad file descriptor",
    errno.ENXIO: "no such device or address",
    errno.ENODEV: "no such device",
    errno.EOVERFLOW: "value too large for defined data type",
    errno.ENOMEM: "not enough memory",
}


def errno_code(number: int | None) -> str:
    """``ENOENT`` for 2; ``UNKNOWN`` when there is no number."""
    if number is None:
        return "UNKNOWN"
    return errno.errorcode.get(number, "UNKNOWN")


def node_error_message(exc: OSError, syscall: str, path: str | None = None) -> str:
    """The message Node gives an fs error: ``ENOENT: no such file or directory, open '/x'``."""
    number = exc.errno
    description = _UV_DESCRIPTIONS.get(number or -1) or (os.strerror(number).lower() if number else str(exc))
    message = f"{errno_code(number)}: {description}, {syscall}"
    if path is not None:
        message += f" '{path}'"
    return message


class NodeFsError(OSError):
    """An OSError whose ``str()`` is Node's message; keeps ``errno`` and the original as ``__cause__``."""

    def __init__(self, exc: OSError, syscall: str, path: str | None = None) -> None:
        super().__init__(exc.errno, node_error_message(exc, syscall, path))
        self.code = errno_code(exc.errno)
        self.syscall = syscall
        self.path = path
        self.__cause__ = exc

    def __str__(self) -> str:
        return str(self.strerror)


_INSPECT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", "\\": "\\\\"}
_CONTROL = re.compile("[\x00-\x1f\x7f\\\\]")


def inspect_string(text: str) -> str:
    """A string as Node's ``util.inspect`` shows it: quoted, control characters escaped."""
    quote = "'"
    if "'" in text:
        quote = '"' if '"' not in text else "`" if "`" not in text else "'"

    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        return _INSPECT_ESCAPES.get(char) or f"\\x{ord(char):02X}"

    body = _CONTROL.sub(escape, text)
    if quote == "'":
        body = body.replace("'", "\\'")
    return f"{quote}{body}{quote}"


def require_no_null_bytes(path: str) -> None:
    """Raise Node's error for a path holding a NUL byte (no file can be named so)."""
    if "\x00" in path:
        raise ValueError(
            "The argument 'path' must be a string, Uint8Array, or URL without null bytes. "
            f"Received {inspect_string(path)}"
        )


def to_utf8_bytes(text: str) -> bytes:
    """UTF-8 bytes as Node writes a string: surrogate pairs joined, lone surrogates as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return joined.encode("utf-8")
