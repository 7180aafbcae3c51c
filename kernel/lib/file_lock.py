"""pi's lock on a file (``proper-lockfile``'s scheme): the directory ``<file>.lock`` exists while a
process holds it, its mtime is refreshed while held, and one not refreshed for 30 s is stale and
taken over. ``auth.json`` and ``trust.json`` are locked this way, so pi and piko processes share them.

Not ``filelock``: its locks (``fcntl``, or a lock file it creates and removes) are invisible to
pi's ``proper-lockfile``, so a pi and a piko process could write ``auth.json`` at once.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

LOCK_STALE_S = 30.0
LOCK_TIMEOUT_S = 10.0


class FileLockError(OSError):
    """The lock could not be taken; the message names the file and why."""


class FileLock:
    """pi's lock on a file: the directory ``<file>.lock``, stale when its mtime is 30 s old.

    ``error`` is the exception class raised when it cannot be taken (a subclass may name its own).
    """

    error: type[Exception] = FileLockError

    def __init__(
        self, target: Path, *, stale_s: float = LOCK_STALE_S, timeout_s: float = LOCK_TIMEOUT_S
    ) -> None:
        self.target = target
        self.path = Path(os.path.abspath(target)).with_name(target.name + ".lock")
        self.stale_s = stale_s
        self.timeout_s = timeout_s
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None

    def acquire(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        delay = 0.02
        while True:
            try:
                os.mkdir(self.path)
                break
            except FileExistsError:
                if self._remove_if_stale():
                    continue
            except OSError as exc:
                raise self.error(f"cannot lock {self.target}: {exc.strerror or exc}") from exc
            if time.monotonic() >= deadline:
                raise self.error(
                    f"{self.target} is locked by another process ({self.path} exists); "
                    f"it is taken over once it is {int(self.stale_s)} s old"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        self._stop.clear()
        self._keeper = threading.Thread(target=self._keep_fresh, name="file-lock", daemon=True)
        self._keeper.start()

    def _remove_if_stale(self) -> bool:
        try:
            age = time.time() - os.stat(self.path).st_mtime
        except FileNotFoundError:
            return True  # released meanwhile: try again at once
        if age <= self.stale_s:
            return False
        try:
            os.rmdir(self.path)
        except FileNotFoundError:
            pass
        except OSError:
            return False
        return True

    def _keep_fresh(self) -> None:
        while not self._stop.wait(self.stale_s / 2):
            try:
                os.utime(self.path)
            except OSError:
                return

    def release(self) -> None:
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(timeout=1)
            self._keeper = None
        try:
            os.rmdir(self.path)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
