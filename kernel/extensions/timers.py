"""Managed timers of extensions (``ctx.set_timeout``, ``ctx.set_interval``, ``ctx.clear_timer``).

A callback runs on the session's event loop with the isolation of handler dispatch: what it raises
(or the coroutine it returns raises) is reported as an ``extension_error`` naming its file, and
the session keeps running. Timers never keep the process alive and all of them are cleared when
the session shuts down or is replaced (after its ``session_shutdown`` handlers ran).
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from typing import Any


class Timer:
    """The handle ``set_timeout``/``set_interval`` return; pass it to ``clear_timer``."""

    __slots__ = ("_handle", "active", "id", "interval")

    def __init__(self, timer_id: int, interval: bool) -> None:
        self.id = timer_id
        self.interval = interval
        self.active = True
        self._handle: Any = None

    def __repr__(self) -> str:
        return f"Timer(id={self.id}, interval={self.interval}, active={self.active})"


def _source_of(fn: Callable[..., Any]) -> str:
    try:
        return str(
            inspect.getsourcefile(inspect.unwrap(fn)) or getattr(fn, "__module__", None) or "extension"
        )
    except TypeError:
        return getattr(fn, "__module__", None) or "extension"


class ManagedTimers:
    """Every managed timer of one app; ``dispatcher`` reports what a callback raises."""

    def __init__(self, dispatcher: Any) -> None:
        self._dispatcher = dispatcher
        self._timers: dict[int, Timer] = {}
        self._ids = itertools.count(1)
        self._running: set[Any] = set()  # callbacks' tasks, referenced until done

    def __len__(self) -> int:
        return len(self._timers)

    def set_timeout(self, fn: Callable[..., Any], ms: float = 0, *args: Any) -> Timer:
        return self._start(fn, ms, args, interval=False)

    def set_interval(self, fn: Callable[..., Any], ms: float = 0, *args: Any) -> Timer:
        return self._start(fn, ms, args, interval=True)

    def clear(self, timer: Any) -> None:
        """Stop ``timer`` (a handle, or its id); an unknown or finished one is ignored."""
        timer_id = getattr(timer, "id", timer)
        found = self._timers.pop(timer_id, None) if isinstance(timer_id, int) else None
        if found is not None:
            found.active = False
            if found._handle is not None:
                found._handle.cancel()

    def clear_all(self) -> None:
        for timer_id in list(self._timers):
            self.clear(timer_id)

    def _start(self, fn: Callable[..., Any], ms: float, args: tuple[Any, ...], *, interval: bool) -> Timer:
        import asyncio

        from piko.lib.off_loop import home_loop

        if not callable(fn):
            raise TypeError(f"a timer needs a function; got {type(fn).__name__}")
        loop = home_loop()
        if loop is None:
            loop = asyncio.get_running_loop()
        delay = max(0.0, float(ms or 0)) / 1000.0
        if interval:
            delay = max(delay, 0.001)  # an interval of 0 would hold the loop
        timer = Timer(next(self._ids), interval)
        self._timers[timer.id] = timer

        def fire() -> None:
            if not timer.active:
                return
            if interval:
                timer._handle = loop.call_later(delay, fire)
            else:
                self._timers.pop(timer.id, None)
                timer.active = False
            task = loop.create_task(self._run(fn, args))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

        loop.call_soon_threadsafe(lambda: setattr(timer, "_handle", loop.call_later(delay, fire)))
        return timer

    async def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        from piko.platform.dispatch import Handler

        try:
            result = fn(*args)
            if hasattr(result, "__await__"):
                await result
        except Exception as exc:
            source = _source_of(fn)
            await self._dispatcher.report(Handler(source, source, fn), "timer", exc)
