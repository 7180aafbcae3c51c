"""Abort signals: how a user's Esc or an RPC ``abort`` reaches a provider stream, a tool or a process."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

from piko.lib.subscriptions import subscribe


class AbortError(Exception):
    """Raised by work that stops because its signal was aborted."""


class AbortSignal:
    """Read side: ``aborted``, ``reason``, listeners, and ``await signal.wait()``."""

    __slots__ = ("_event", "_listeners", "aborted", "reason")

    def __init__(self) -> None:
        self.aborted = False
        self.reason: Any = None
        self._listeners: list[Callable[[], Any]] = []
        self._event: Any = None

    def add_listener(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback`` on abort (at once if already aborted); returns a remover."""
        if self.aborted:
            callback()
            return lambda: None
        return subscribe(self._listeners, callback)

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self.aborted:
            return
        import asyncio

        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def throw_if_aborted(self) -> None:
        """Raise :class:`AbortError` (with the reason) if the signal was aborted."""
        if self.aborted:
            raise AbortError(str(self.reason or "aborted"))

    def _fire(self, reason: Any) -> None:
        if self.aborted:
            return
        self.aborted = True
        self.reason = reason
        if self._event is not None:
            self._event.set()
        listeners, self._listeners = self._listeners, []
        for callback in listeners:
            try:
                callback()
            except Exception:  # one failing listener must not keep others from stopping
                pass


class AbortController:
    """Write side: ``abort()`` fires the ``signal``."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = "aborted") -> None:
        """Abort the signal with ``reason`` and call its listeners (once: later calls do nothing)."""
        self.signal._fire(reason)


class AbortSlot:
    """The abort controller of the one piece of work under way (a run, a wait, a command), if
    any: :meth:`running` holds a fresh one while the work lasts, :meth:`abort` fires it."""

    __slots__ = ("_controller",)

    def __init__(self) -> None:
        self._controller: AbortController | None = None

    @property
    def busy(self) -> bool:
        """Whether work runs now."""
        return self._controller is not None

    @property
    def signal(self) -> AbortSignal | None:
        """The signal of the work under way (None between pieces of work)."""
        return self._controller.signal if self._controller is not None else None

    def abort(self) -> None:
        """Abort the work under way (nothing when none runs)."""
        if self._controller is not None:
            self._controller.abort()

    @contextlib.contextmanager
    def running(self) -> Iterator[AbortSignal]:
        """A fresh signal for the work done inside, which :meth:`abort` fires until it ends."""
        self._controller = controller = AbortController()
        try:
            yield controller.signal
        finally:
            self._controller = None
