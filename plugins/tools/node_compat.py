"""JavaScript and Node formatting that pi's tool messages depend on (numbers, fs errors, UTF-16 lengths)."""

from __future__ import annotations

import errno
import math
import os
import re
from decimal import ROUND_HALF_UP, Decimal

__all__ = [
    "NodeFsError",
    "errno_code",
    "js_round",
    "js_string",
    "js_to_fixed",
    "node_error_message",
    "to_utf8_bytes",
    "utf16_length",
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


def js_round(value: float) -> int:
    """``Math.round``: halves round up (towards +infinity)."""
    return math.floor(value + 0.5)


def js_to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: ties are resolved away from zero on the exact binary value."""
    if math.isnan(value):
        return "NaN"
    if abs(value) >= 1e21 or math.isinf(value):
        return js_string(value)
    exact = Decimal(abs(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{exact:f}"
    return f"-{text}" if value < 0 else text


def js_string(value: float | int) -> str:
    """``String(number)``: ``10`` for 10.0, ``1.5``, ``1e+21``, ``1e-7``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digits_tuple.digits)).rstrip("0") or "0"
    exponent = int(digits_tuple.exponent) + len(digits_tuple.digits) - len(digits)
    k = len(digits)
    n = exponent + k  # value == 0.<digits> * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def utf16_length(text: str) -> int:
    """JavaScript's ``string.length``: astral characters count twice."""
    if text.isascii():
        return len(text)
    return len(text) + len(_ASTRAL.findall(text))


def to_utf8_bytes(text: str) -> bytes:
    """UTF-8 bytes as Node writes a string: surrogate pairs joined, lone surrogates as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return joined.encode("utf-8")
