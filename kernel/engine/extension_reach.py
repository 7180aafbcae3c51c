"""The base of the session's parts that fire events at the extensions: the dispatcher, the ctx, the run's signal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_RUN_SIGNAL: Any = object()
"""``_fire``'s default: the abort signal of the run under way."""


def _no_run() -> Any:
    return None


class ExtensionReach:
    """Fires events at the extensions through ``dispatcher``, each with the ``ctx`` handlers get and
    the abort ``signal()`` of the run under way (None outside a run, or for a part that fires only
    outside one)."""

    def __init__(self, dispatcher: Any, ctx: Any, *, signal: Callable[[], Any] = _no_run) -> None:
        self._dispatcher = dispatcher
        self._ctx = ctx
        self._signal = signal

    async def _fire(self, name: str, event: Any, *, signal: Any = _RUN_SIGNAL) -> Any:
        """The handlers' combined answer to event ``name``; a handler still waited for when
        ``signal`` (by default the run's) aborts counts as having answered nothing."""
        return await self._dispatcher.emit(
            name, event, self._ctx, signal=self._signal() if signal is _RUN_SIGNAL else signal
        )
