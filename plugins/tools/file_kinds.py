"""Which files the file tools open: regular files only, read within a byte bound, stopped by an abort.

A character or block device, a FIFO or a socket never ends or never answers when read as a
file (``/dev/zero``, a pipe with no writer), so the tools refuse them with a clear error. Files
are opened without blocking (a FIFO's ``open`` would wait for a writer) and the kind is checked
on the open descriptor, so a file swapped between a check and the open is still caught. Reading
is bounded: a regular file by the size it had when opened, a file that reports no size or lives
on ``/proc`` or ``/sys`` by :data:`PSEUDO_FILE_MAX_BYTES`. Each read asks ``should_stop`` first,
so an abort ends the thread's work, not only the answer.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Callable

__all__ = [
    "PSEUDO_FILE_MAX_BYTES",
    "BoundedReader",
    "SpecialFileError",
    "open_for_reading",
    "refuse_special",
    "refuse_special_path",
    "special_kind",
]

PSEUDO_FILE_MAX_BYTES = 10 * 1024 * 1024
"""The most bytes read from a file whose size says nothing (``/proc``, ``/sys``, size 0)."""

_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
}


class SpecialFileError(ValueError):
    """A tool was pointed at a device, FIFO or socket."""


def special_kind(mode: int) -> str | None:
    """``"a character device"`` and so on, or ``None`` for regular files, directories and links."""
    return _KINDS.get(stat.S_IFMT(mode))


def refuse_special(verb: str, path: str, mode: int, *, allowed: str = "a regular file") -> None:
    """Raise :class:`SpecialFileError` (``Cannot read /dev/zero: it is a character device, ...``)."""
    kind = special_kind(mode)
    if kind is not None:
        raise SpecialFileError(f"Cannot {verb} {path}: it is {kind}, not {allowed}")


def refuse_special_path(verb: str, path: str, *, allowed: str = "a regular file") -> None:
    """:func:`refuse_special` for what ``path`` names now (nothing happens when it cannot be examined)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    refuse_special(verb, path, mode, allowed=allowed)


@functools.cache
def _pseudo_devices() -> frozenset[int]:
    devices = set()
    for root in ("/proc", "/sys"):
        try:
            devices.add(os.stat(root).st_dev)
        except OSError:
            continue
    return frozenset(devices)


def _byte_bound(info: os.stat_result) -> tuple[int, bool]:
    """``(most bytes to read, whether that is an arbitrary cap rather than the file's size)``."""
    if info.st_size <= 0 or info.st_dev in _pseudo_devices():
        return PSEUDO_FILE_MAX_BYTES, True
    return info.st_size, False


class BoundedReader:
    """A binary file that yields at most ``limit`` bytes from its start.

    ``capped`` turns true once a read reaches an arbitrary cap with bytes still beyond it.
    Every read first calls ``should_stop`` (which raises to stop, e.g. ``Operation aborted``).
    """

    def __init__(
        self, fd: int, limit: int, *, arbitrary: bool, should_stop: Callable[[], None] | None
    ) -> None:
        self._file = os.fdopen(fd, "rb", buffering=0)
        self._limit = limit
        self._arbitrary = arbitrary
        self._should_stop = should_stop
        self._position = 0
        self.capped = False

    def read(self, size: int = -1) -> bytes:
        if self._should_stop is not None:
            self._should_stop()
        left = self._limit - self._position
        if left <= 0:
            if self._arbitrary and not self.capped and self._file.read(1):
                self.capped = True
            return b""
        want = left if size is None or size < 0 else min(size, left)
        chunks: list[bytes] = []
        while want > 0:
            chunk = self._file.read(want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
            self._position += len(chunk)
            if size is not None and size >= 0:
                break  # one read per call, like a buffered file's read(n)
            if self._should_stop is not None:
                self._should_stop()
        return b"".join(chunks)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET:
            raise OSError(errno.EINVAL, "only absolute seeks are supported")
        self._position = self._file.seek(offset)
        return self._position

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> BoundedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_for_reading(
    absolute: str, *, verb: str = "read", should_stop: Callable[[], None] | None = None
) -> BoundedReader:
    """Open a regular file to read (never blocking in ``open``), bounded as the module says.

    A directory raises Node's ``EISDIR: illegal operation on a directory, read``; a special
    file :class:`SpecialFileError`; a failed open Node's ``open`` message.
    """
    from piko.plugins.tools.node_compat import NodeFsError

    try:
        fd = os.open(absolute, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError as exc:
        raise NodeFsError(exc, "read") from exc
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket cannot be opened: say what it is
            refuse_special_path(verb, absolute)
        raise NodeFsError(exc, "open", absolute) from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NodeFsError(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)), "read")
        refuse_special(verb, absolute, info.st_mode)
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        limit, arbitrary = _byte_bound(info)
        return BoundedReader(fd, limit, arbitrary=arbitrary, should_stop=should_stop)
    except BaseException:
        os.close(fd)
        raise
