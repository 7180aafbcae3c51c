"""The base of the session's parts that fire events at the extensions: the dispatcher, the ctx, the run's signal."""

from __future__ import annotations

from typing import Any

from piko.engine.session_services import SessionServices

_RUN_SIGNAL: Any = object()
"""``_fire``'s default: the abort signal of the run under way."""


class ExtensionReach:
    """Fires events at the extensions through the ``services``' dispatcher, each with the ``ctx``
    handlers get and the abort ``signal()`` of the run under way (None outside a run)."""

    def __init__(self, services: SessionServices) -> None:
        self._services = services
        self._dispatcher = services.dispatcher
        self._ctx = services.ctx

    async def _fire(self, name: str, event: Any, *, signal: Any = _RUN_SIGNAL) -> Any:
        """The handlers' combined answer to event ``name``; a handler still waited for when
        ``signal`` (by default the run's) aborts counts as having answered nothing."""
        return await self._dispatcher.emit(
            name, event, self._ctx, signal=self._services.signal() if signal is _RUN_SIGNAL else signal
        )
