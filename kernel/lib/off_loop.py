"""Running plain functions (extension handlers, tools) off the event loop, so one that blocks cannot freeze piko.

An ``async def`` handler shares the event loop and can be cancelled; a plain function cannot be
interrupted, and while it runs on the loop nothing else does (RPC stops answering, signals wait).
So plain functions run on threads of their own:

* :func:`run_in_thread` runs one call on a fresh daemon thread and returns an awaitable: the
  caller bounds it with its budget and abort, and when it gives up the thread is left to finish
  (its result is dropped). Daemon threads never keep the process from exiting.
* :class:`InlineGuard` runs a call on the loop itself, for calls so frequent that a thread hop
  would cost more than the call (a handler per streamed delta), and interrupts one that holds
  the loop past its limit.

Code on such a thread reaches the session through :func:`call_on_loop` and :class:`LoopProxy`
(the ``ctx`` handlers receive on a thread is one), which run the call on the event loop and wait
for it, so the session's state is only ever touched from the loop.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

if TYPE_CHECKING:  # asyncio is imported where first used: it costs start-up time
    import asyncio

__all__ = [
    "InlineGuard",
    "LoopHeld",
    "LoopProxy",
    "call_on_loop",
    "home_loop",
    "is_coroutine_callable",
    "loop_bound",
    "on_loop",
    "run_abortable",
    "run_in_thread",
]

T = TypeVar("T")

_local = threading.local()


def home_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop that handed this thread its work; ``None`` on the loop and on other threads."""
    return getattr(_local, "loop", None)


def is_coroutine_callable(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine, looking through ``__wrapped__`` adapters."""
    seen = 0
    while fn is not None and seen < 10:
        if inspect.iscoroutinefunction(fn):
            return True
        if not inspect.isfunction(fn) and not inspect.ismethod(fn):
            call = getattr(type(fn), "__call__", None)  # noqa: B004 - the class's own __call__
            if inspect.iscoroutinefunction(call):
                return True
        fn = getattr(fn, "__wrapped__", None)
        seen += 1
    return False


# ---------------------------------------------------------------------------
# From a thread back to the loop
# ---------------------------------------------------------------------------


class SessionEndedError(RuntimeError):
    """The event loop a thread worked for is gone."""


def call_on_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on the home loop, waiting for it; called directly anywhere else."""
    loop = home_loop()
    if loop is None:
        return fn(*args, **kwargs)
    import concurrent.futures

    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)

    try:
        loop.call_soon_threadsafe(run)
    except RuntimeError:  # the loop is closed
        raise SessionEndedError("the session has ended") from None
    while True:
        try:
            return future.result(timeout=1.0)
        except concurrent.futures.TimeoutError:
            if loop.is_closed():
                raise SessionEndedError("the session has ended") from None


def loop_bound(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` wrapped so that a call from a worker thread runs on the loop (see :func:`call_on_loop`)."""

    @functools.wraps(fn)
    def bound(*args: Any, **kwargs: Any) -> T:
        return call_on_loop(fn, *args, **kwargs)

    return bound


class LoopProxy:
    """An object of the session as a worker thread sees it: its methods run on the loop.

    Attributes that are not methods are read directly; ``ui`` is proxied in turn.
    """

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name == "ui" and value is not None:
            return LoopProxy(value)
        if callable(value) and not isinstance(value, type):
            return loop_bound(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        call_on_loop(setattr, self._target, name, value)

    def __eq__(self, other: object) -> bool:
        target = other._target if isinstance(other, LoopProxy) else other
        return bool(self._target == target)

    def __hash__(self) -> int:
        return hash(self._target)

    def __repr__(self) -> str:
        return f"LoopProxy({self._target!r})"


def on_loop(target: T) -> T:
    """``target``, or a :class:`LoopProxy` of it when called from a worker thread."""
    if home_loop() is None or target is None:
        return target
    return LoopProxy(target)  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# One call on a thread of its own
# ---------------------------------------------------------------------------


def run_in_thread(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Start ``fn(*args)`` on a new daemon thread; the future resolves on the calling loop.

    Cancelling the future does not stop the thread: its result is dropped when it ends.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        _local.loop = loop
        try:
            outcome: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # handed to the awaiting side
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:  # the loop is gone: nobody waits any more
            pass

    import contextvars

    context = contextvars.copy_context()  # the thread sees the caller's context variables
    name = f"piko-{getattr(fn, '__name__', 'call')}"
    threading.Thread(target=context.run, args=(work,), name=name, daemon=True).start()
    return future


async def run_abortable(fn: Callable[..., T], *args: Any, signal: Any) -> T:
    """:func:`run_in_thread`, raising ``Operation aborted`` as soon as ``signal`` fires.

    The thread runs on to its end (a thread cannot be stopped from outside); its result is dropped.
    """
    import asyncio

    from piko.lib.abort import AbortError

    future = run_in_thread(fn, *args)
    if signal is None:
        return await future
    if signal.aborted:
        future.cancel()
        raise AbortError("Operation aborted")
    remove = signal.add_listener(future.cancel)
    try:
        return await future
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if future.cancelled() and signal.aborted and (task is None or not task.cancelling()):
            raise AbortError("Operation aborted") from None
        raise
    finally:
        remove()


# ---------------------------------------------------------------------------
# Plain functions that must stay on the loop, interrupted when they hold it too long
# ---------------------------------------------------------------------------


class LoopHeld(BaseException):
    """Raised inside a plain function that held the event loop past its limit.

    A ``BaseException``, so that the function's own ``except Exception`` does not swallow it.
    """


class InlineGuard:
    """Runs plain functions on the event loop's (main) thread, interrupting one that holds it.

    For calls too frequent for a thread hop (a handler per streamed delta). A watchdog thread,
    started on first use, looks every :data:`WATCH_INTERVAL` seconds; a call still running past
    its limit gets :class:`LoopHeld` raised inside it, through a signal to the main thread (which
    also breaks a ``time.sleep`` or a blocking read), and again after each further limit while
    it goes on. Off the main thread the call just runs (signals reach the main thread only).
    """

    def __init__(self) -> None:
        self._serial = 0
        self._active: tuple[int, float, float] | None = None  # (serial, deadline, limit)
        self._target = 0  # the serial the last interrupt was meant for
        self._started = False
        self._lock = threading.Lock()

    def run(self, limit: float, fn: Callable[..., T], *args: Any) -> T:
        if threading.current_thread() is not threading.main_thread():
            return fn(*args)
        if not self._started:
            self._start()
        self._serial += 1
        self._active = (self._serial, time.monotonic() + limit, limit)
        try:
            return fn(*args)
        finally:
            self._active = None

    def _start(self) -> None:
        import signal

        with self._lock:
            if self._started:
                return
            number = signal.SIGURG  # ignored by default and unused by piko
            previous = signal.getsignal(number)

            def interrupt(signum: int, frame: Any) -> None:
                active = self._active
                if active is not None and active[0] == self._target:
                    raise LoopHeld()
                if callable(previous):
                    previous(signum, frame)

            signal.signal(number, interrupt)
            main = threading.main_thread().ident
            assert main is not None
            threading.Thread(
                target=self._watch, args=(number, main), name="piko-inline-guard", daemon=True
            ).start()
            self._started = True

    def _watch(self, number: int, main: int) -> None:
        import signal

        fired_serial, fired_at = 0, 0.0  # only the loop's thread writes _active
        while True:
            time.sleep(WATCH_INTERVAL)
            active = self._active
            now = time.monotonic()
            if active is None or now < active[1]:
                continue
            serial, _deadline, limit = active
            if serial == fired_serial and now - fired_at < limit:
                continue  # interrupted already: again only after another limit
            fired_serial, fired_at = serial, now
            self._target = serial
            signal.pthread_kill(main, number)


WATCH_INTERVAL = 0.05
"""Seconds between the inline guard's looks at the running call."""
