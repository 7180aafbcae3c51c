"""Serialises the file-changing tools per file: two edits of one file never interleave."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["file_mutation_lock"]

# (lock, number of holders and waiters); an entry goes away when nobody uses it.
_locks: dict[str, tuple[asyncio.Lock, int]] = {}


def _key(path: str) -> str:
    resolved = os.path.abspath(path)
    try:
        return os.path.realpath(resolved, strict=True)
    except OSError:
        return resolved


@asynccontextmanager
async def file_mutation_lock(path: str) -> AsyncIterator[None]:
    """Hold the lock of ``path`` (symlinks resolved, so two names of one file share it)."""
    key = _key(path)
    lock, users = _locks.get(key, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    _locks[key] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _locks[key]
        if users <= 1:
            del _locks[key]
        else:
            _locks[key] = (lock, users - 1)
