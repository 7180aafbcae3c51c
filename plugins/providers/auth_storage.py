"""pi's ``auth.json``: stored credentials per provider, written atomically (0600) under pi's file lock.

The file maps a provider to ``{"type": "api_key", "key": ...}`` or ``{"type": "oauth",
"refresh": ..., "access": ..., "expires": <ms>}``. Every change re-reads the file under the lock
and changes only its own provider, so pi and piko processes can share one file. The lock is
pi's (``proper-lockfile``): the directory ``auth.json.lock`` exists while a process holds it, its
mtime is refreshed while held, and a lock not refreshed for 30 seconds is stale and taken over.
Credential values never appear in messages or logs.
"""

from __future__ import annotations

import builtins
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

from piko.lib import jsonio
from piko.lib.file_lock import FileLock as _FileLock

FILE_MODE = 0o600
DIR_MODE = 0o700

T = TypeVar("T")


class AuthStorageError(Exception):
    """auth.json cannot be read, locked or written; the message says which and why."""


class FileLock(_FileLock):
    """pi's lock on ``auth.json`` (:class:`piko.lib.file_lock.FileLock`), failing with :class:`AuthStorageError`."""

    error = AuthStorageError


def _parse(text: str | None, path: Path) -> dict[str, Any]:
    if not text or not text.strip():
        return {}
    try:
        data = jsonio.loads(text)
    except ValueError as exc:
        raise AuthStorageError(f"{path} is not valid JSON ({exc}); fix or remove it") from exc
    if not isinstance(data, dict):
        raise AuthStorageError(f"{path} must hold a JSON object of providers")
    return data


class AuthStorage:
    """Credentials of ``auth.json``, re-read when another process changed the file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock = FileLock(self.path)
        self._data: dict[str, Any] = {}
        self._stamp: tuple[int, int] | None = None
        self.load_error: str | None = None
        self.errors: list[str] = []
        self.reload()

    def __repr__(self) -> str:  # never show credentials
        return f"AuthStorage({str(self.path)!r}, providers={sorted(self._data)})"

    # -- reading -------------------------------------------------------------------------------

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def reload(self) -> None:
        """Read the file again (a missing file is an empty one)."""
        self._stamp = self._file_stamp()
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        except OSError as exc:
            self._fail(f"cannot read {self.path}: {exc.strerror or exc}")
            return
        try:
            self._data = _parse(text, self.path)
        except AuthStorageError as exc:
            if self._writer_active():  # pi writes in place under its lock: read again once done
                self.reload()
                return
            self._fail(str(exc))
            return
        self.load_error = None

    def _writer_active(self, wait_s: float = 1.0) -> bool:
        """Whether another process held the lock; waits (up to ``wait_s``) until it lets go."""
        if not self.lock.path.exists():
            return False
        deadline = time.monotonic() + wait_s
        while self.lock.path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return not self.lock.path.exists()

    def _fail(self, message: str) -> None:
        self._data = {}
        self.load_error = message
        if message not in self.errors:
            self.errors.append(message)

    def _fresh(self) -> dict[str, Any]:
        if self._file_stamp() != self._stamp:
            self.reload()
        return self._data

    def get(self, provider: str) -> dict[str, Any] | None:
        """The stored credential of ``provider``."""
        value = self._fresh().get(provider)
        return value if isinstance(value, dict) else None

    def has(self, provider: str) -> bool:
        return provider in self._fresh()

    def list(self) -> builtins.list[str]:
        """Providers with a stored credential."""
        return list(self._fresh())

    def all(self) -> dict[str, Any]:
        return dict(self._fresh())

    # -- writing -------------------------------------------------------------------------------

    def update(self, change: Callable[[dict[str, Any]], tuple[T, dict[str, Any] | None]]) -> T:
        """Run ``change(current)`` under the lock on the file's current content.

        ``change`` returns ``(result, new_content)``; a ``new_content`` other than ``None`` is
        written atomically with mode 0600. Raises :class:`AuthStorageError`.
        """
        self.path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        with self.lock:
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                text = None
            except OSError as exc:
                raise AuthStorageError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
            current = _parse(text, self.path)
            result, new = change(current)
            if new is not None:
                try:
                    jsonio.write_atomic(self.path, jsonio.dumps_pretty(new), mode=FILE_MODE)
                except OSError as exc:
                    raise AuthStorageError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
                current = new
            self._data = current
            self._stamp = self._file_stamp()
            self.load_error = None
        return result

    def set(self, provider: str, credential: dict[str, Any]) -> None:
        """Store ``credential`` for ``provider`` (other providers are left as they are)."""
        self.update(lambda current: (None, {**current, provider: credential}))

    def remove(self, provider: str) -> bool:
        """Forget ``provider``'s credential; False when there was none."""

        def change(current: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
            if provider not in current:
                return False, None
            return True, {k: v for k, v in current.items() if k != provider}

        return self.update(change)

    def drain_errors(self) -> builtins.list[str]:
        errors, self.errors = self.errors, []
        return errors
