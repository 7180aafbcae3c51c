"""A small publish/subscribe bus shared by all extensions (``pi.events``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from piko.lib.subscriptions import subscribe


class EventBus:
    """``on(name, handler)`` subscribes (returns an unsubscribe function); ``emit(name, data)`` calls."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Callable[[Any], Any]]] = {}
        self._tasks: set[Any] = set()

    def on(self, name: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        return subscribe(self._handlers.setdefault(name, []), handler)

    def emit(self, name: str, data: Any = None) -> None:
        """Call every handler of ``name``; a raising handler is reported on stderr, the rest run.

        A handler returning a coroutine is scheduled on the running event loop. Called from a
        handler's thread, the handlers run on the loop.
        """
        from piko.lib.off_loop import call_on_loop
        from piko.lib.off_loop import home_loop

        if home_loop() is not None:
            call_on_loop(self.emit, name, data)
            return
        for handler in list(self._handlers.get(name, [])):
            try:
                result = handler(data)
                if hasattr(result, "__await__"):
                    import asyncio

                    task = asyncio.ensure_future(result)
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
            except Exception as exc:
                print(f"piko: event bus handler for '{name}' failed: {exc}", file=sys.stderr)
