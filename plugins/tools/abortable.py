"""Running a tool's work so an abort rejects at once with pi's ``Operation aborted``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any
from typing import TypeVar

from piko.lib.abort import AbortError

__all__ = ["ABORTED_MESSAGE", "abortable", "check_aborted"]

ABORTED_MESSAGE = "Operation aborted"
T = TypeVar("T")


def check_aborted(signal: Any) -> None:
    """Raise ``Operation aborted`` if ``signal`` has fired."""
    if signal is not None and signal.aborted:
        raise AbortError(ABORTED_MESSAGE)


async def abortable(work: Awaitable[T], signal: Any) -> T:
    """Await ``work`` unless ``signal`` fires first; then cancel it and raise ``Operation aborted``.

    Work already handed to a thread finishes there, but its result is dropped, as in pi.
    """
    if signal is None:
        return await work
    if signal.aborted:
        if asyncio.iscoroutine(work):
            work.close()
        raise AbortError(ABORTED_MESSAGE)
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        waiter.cancel()
    if task.done():
        return task.result()
    task.cancel()
    raise AbortError(ABORTED_MESSAGE)
