"""Stopping a run mode on SIGTERM, SIGHUP (and SIGINT where asked) with pi's exit codes, and
ending it within bounds when work ignores the abort.

pi's print, RPC and interactive modes end cleanly on these signals (what runs is aborted, the
session shuts down) and exit with 128 + the signal's number. :func:`on_exit_signals` installs
handlers on the running event loop that call ``stop(exit_code)``; where signals cannot be handled
(Windows, a thread other than the main one) nothing is installed. :func:`abort_within` waits for
an abort at most :data:`ABORT_GRACE_S`; :func:`run_to_exit` runs a mode's coroutine and, when
tasks or worker threads it leaves behind do not stop, says so and lets the caller exit anyway.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

# pi's exit codes after each signal
EXIT_CODES = {"SIGTERM": 143, "SIGHUP": 129, "SIGINT": 130}

ABORT_GRACE_S = 3.0
"""How long an abort may take (a tool that ignores its signal) before piko goes on without it."""

LEFTOVER_GRACE_S = 1.0
"""How long tasks still running when a mode returns get to end once cancelled."""


def on_exit_signals(stop: Callable[[int], None], *, interrupt: bool = False) -> Callable[[], None]:
    """Call ``stop(code)`` on SIGTERM or SIGHUP (and SIGINT with ``interrupt``); returns a remover."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for name, code in EXIT_CODES.items():
        number = getattr(signal, name, None)
        if number is None or (name == "SIGINT" and not interrupt):
            continue
        try:
            loop.add_signal_handler(number, stop, code)
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here
            continue
        installed.append(number)

    def remove() -> None:
        for number in installed:
            loop.remove_signal_handler(number)

    return remove


async def abort_within(session: Any, grace: float = ABORT_GRACE_S) -> bool:
    """``await session.abort()`` for at most ``grace`` seconds; False when it did not finish
    (the work goes on in the background; the caller carries on without it)."""
    try:
        await asyncio.wait_for(session.abort(), grace)
    except TimeoutError:
        return False
    return True


def run_to_exit(main: Awaitable[Any]) -> tuple[Any, bool]:
    """Run a mode's coroutine on a new event loop; ``(its result, clean)``.

    Like :func:`asyncio.run`, but the clean-up is bounded: tasks still running are cancelled and
    get :data:`LEFTOVER_GRACE_S` to end, the default executor's threads as long. ``clean`` is
    False when something did not stop (a task that swallows its cancellation, a worker thread
    blocked for good): the interpreter would wait for it forever at exit, so the caller should
    end the process with ``os._exit`` once it has flushed what it writes.
    """

    async def wrapper() -> Any:
        return await main

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    clean = True
    try:
        result = loop.run_until_complete(wrapper())
    finally:
        try:
            left = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in left:
                task.cancel()
            if left:
                _done, pending = loop.run_until_complete(asyncio.wait(left, timeout=LEFTOVER_GRACE_S))
                clean = not pending
            loop.run_until_complete(loop.shutdown_asyncgens())
            executor_stopped = _shutdown_executor(loop)
            clean = clean and executor_stopped
        finally:
            asyncio.set_event_loop(None)
            if clean:
                loop.close()
    if not clean:
        _say("work that ignored the abort is still running; exiting without waiting for it")
    return result, clean


def _shutdown_executor(loop: asyncio.AbstractEventLoop) -> bool:
    """The default executor's threads joined within the grace (True), or left running (False)."""
    executor = getattr(loop, "_default_executor", None)
    if executor is None:
        return True
    executor.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    threads: list[threading.Thread] = list(getattr(executor, "_threads", ()))
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in threads)


def _say(message: str) -> None:
    try:
        sys.stderr.write(f"Warning: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
