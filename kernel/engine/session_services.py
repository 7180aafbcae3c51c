"""What the agent session's parts share: the app's services and live views of the session's state.

The session builds one :class:`SessionServices` and hands it to each part (model control, retry,
run control, the extension hooks...), instead of each part taking the same collaborators one by
one. A part reads what it needs (``services.settings``, ``services.model()``...); the live views
are callables, so a part always sees the session's current model, session id and run signal.
A part built on its own (a test) is given a :class:`SessionServices` with only what it uses: the
others default to nothing (no settings saved, no listeners told, no extension answering).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from typing import Any

from piko.data.messages import Model
from piko.engine.listeners import Listeners
from piko.lib.records import Record
from piko.lib.records import field


def _nothing() -> Any:
    return None


def _no_messages() -> list[Any]:
    return []


def _idle() -> bool:
    return False


def _no_thinking() -> str:
    return "off"


def _no_id() -> str:
    return ""


def _unsaved(key: str, value: Any) -> None:
    return None


def _unrecorded(message: Any) -> None:
    return None


async def _untold(name: str, event: Any) -> Any:
    return None


class SessionServices(Record, eq=False):
    """The collaborators of the session's parts (see the module docstring)."""

    settings: Any = None
    """The settings (``get(key, default)``), read at each use."""
    registry: Any = None
    """The model registry: credentials and the stream function of each provider API."""
    pm: Any = None
    """The plugin manager (``piko_classify_error`` and other "who answers" hooks)."""
    dispatcher: Any = None
    """The kernel dispatcher that fires events at the extensions."""
    ctx: Any = None
    """The ``ctx`` the extensions' handlers get."""
    listeners: Listeners = field(factory=Listeners)
    """The session's listeners (the mode)."""
    save_setting: Callable[[str, Any], None] = _unsaved
    """Write a global setting (the defaults of the next start)."""
    emit: Callable[[str, Any], Coroutine[Any, Any, Any]] = _untold
    """Tell the extensions of an event; their combined answer."""
    announce: Callable[[str, Any], Awaitable[None]] = _untold
    """Tell the listeners of an event, then the extensions."""
    add: Callable[[Any], None] = _unrecorded
    """Add a message from outside a run to the conversation and the session file."""
    signal: Callable[[], Any] = _nothing
    """The abort signal of the run under way (None outside a run)."""
    messages: Callable[[], list[Any]] = _no_messages
    """The conversation in context."""
    model: Callable[[], Model | None] = _nothing
    """The model the next request goes to."""
    thinking_level: Callable[[], str] = _no_thinking
    """The thinking level of the next request."""
    session_id: Callable[[], str] = _no_id
    """The session's id."""
    cwd: Callable[[], str] = os.getcwd
    """The folder the session works in."""
    manager: Callable[[], Any] = _nothing
    """The session manager (its entries and file); it changes on ``/new``, ``/resume``, a fork."""
    is_streaming: Callable[[], bool] = _idle
    """Whether a run is under way."""
