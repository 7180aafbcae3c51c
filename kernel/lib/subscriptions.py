"""Subscribing a callback to a list of callbacks: the append, and the unsubscribe function handed back.

Every listener list in piko (the session's listeners, abort signals, ``pi.events``, terminal input
handlers, the MCP screen's watchers) gives its subscriber a function that takes the callback off
again; this is that function, written once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def subscribe(callbacks: list[T], callback: T) -> Callable[[], None]:
    """Append ``callback`` to ``callbacks``; the function returned removes it (once: calling it
    again, or after the list was cleared, does nothing)."""
    callbacks.append(callback)

    def unsubscribe() -> None:
        try:
            callbacks.remove(callback)
        except ValueError:  # already removed
            pass

    return unsubscribe
