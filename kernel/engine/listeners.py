"""Who hears a session's events (the modes: print, json, RPC, interactive), and how they are told."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from collections.abc import Coroutine
from typing import Any

from piko.lib.subscriptions import subscribe

Listener = Callable[[Any], Any]


class Listeners:
    """The subscribers to one session's events, and the background tasks telling them starts.

    A listener that raises is reported on stderr and skipped: a broken listener must not break
    the session.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._background: set[asyncio.Task[Any]] = set()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event (the objects of :mod:`piko.data.events`); returns the unsubscribe."""
        return subscribe(self._listeners, listener)

    async def notify(self, event: Any) -> None:
        """Tell every listener in turn, awaiting the async ones."""
        for listener in list(self._listeners):
            try:
                result = listener(event)
                if hasattr(result, "__await__"):
                    await result
            except Exception as exc:
                _report(event, exc)

    def emit_now(self, event: Any) -> None:
        """Tell every listener from synchronous code: plain listeners at once (pi's order), async ones scheduled."""
        for listener in list(self._listeners):
            try:
                result = listener(event)
                if hasattr(result, "__await__"):
                    self.spawn(result)
            except Exception as exc:
                _report(event, exc)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run ``coroutine`` in the background (kept referenced until done); at once without a loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(coroutine)
            return
        task = loop.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _report(event: Any, exc: Exception) -> None:
    print(f"piko: event listener failed on {event.TYPE}: {exc}", file=sys.stderr)
