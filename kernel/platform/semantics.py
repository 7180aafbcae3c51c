"""How an event's handlers combine, declared once beside the event's hook spec.

Each event hook in :mod:`piko.platform.hookspecs` is declared with :func:`event`:

.. code-block:: python

    @event(Semantics.CHAIN, reducer=reducers.context, empty=lambda e: e.messages)
    def piko_context(event: ContextEvent, ctx: ExtensionContext) -> Any: ...

which records an :class:`EventSpec` in :data:`EVENTS`: the semantics, the reducer that
combines results (the generic one of its semantics when not given), the result when nothing
listens, whether extensions may subscribe with ``pi.on``, and what pi's extension reference says
a handler may change or cancel. The dispatcher, the extension API's subscribable events and
``docs/hooks.md`` are all derived from it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any
from typing import TypeVar

from piko.lib.records import Record
from piko.platform.markers import hookspec

F = TypeVar("F", bound=Callable[..., Any])


class Semantics(enum.Enum):
    """How the dispatcher combines what handlers return."""

    NOTIFY = "notify"  # return values ignored
    CHAIN = "modify"  # each handler sees the previous one's change
    CANCEL = "cancel"  # a handler may cancel; the first cancel stops the walk
    BLOCK = "block"  # a handler may block; fails closed on errors and overruns
    FIRST = "first result"  # the first non-empty result wins
    COLLECT = "collect"  # every handler's contribution is gathered


# What each semantics lets a handler do, as pi's extension reference words it: (modify, cancel).
_CAPABILITIES: dict[Semantics, tuple[str, str]] = {
    Semantics.NOTIFY: ("No", "No"),
    Semantics.CHAIN: ("Yes", "No"),
    Semantics.CANCEL: ("No", "Yes"),
    Semantics.BLOCK: ("No", "Yes (block)"),
    Semantics.FIRST: ("Yes", "No"),
    Semantics.COLLECT: ("Yes", "No"),
}


class EventSpec(Record, frozen=True):
    """One event's declaration (see the module docstring)."""

    name: str
    semantics: Semantics
    reducer: Callable[..., Any] | None = None
    empty: Callable[[Any], Any] | None = None
    subscribable: bool = True
    service: bool = False  # takes a request object; answered by the first useful handler
    can_modify: str = ""
    can_cancel: str = ""

    @property
    def modify(self) -> str:
        return self.can_modify or _CAPABILITIES[self.semantics][0]

    @property
    def cancel(self) -> str:
        return self.can_cancel or _CAPABILITIES[self.semantics][1]

    def empty_result(self, event: Any) -> Any:
        """What firing the event returns when no handler listens."""
        return self.empty(event) if self.empty is not None else None


EVENTS: dict[str, EventSpec] = {}
"""Every declared event, by name (without ``piko_``), in the order of the hook specs."""


def event(
    semantics: Semantics,
    *,
    reducer: Callable[..., Any] | None = None,
    empty: Callable[[Any], Any] | None = None,
    subscribable: bool = True,
    service: bool = False,
    can_modify: str = "",
    can_cancel: str = "",
) -> Callable[[F], F]:
    """Declare an event hook: a pluggy hook spec plus its :class:`EventSpec`."""

    def declare(spec: F) -> F:
        name = spec.__name__.removeprefix("piko_")
        EVENTS[name] = EventSpec(
            name=name,
            semantics=semantics,
            reducer=reducer,
            empty=empty,
            subscribable=subscribable and not service,
            service=service,
            can_modify=can_modify,
            can_cancel=can_cancel,
        )
        return hookspec(spec)

    return declare


def declared() -> dict[str, EventSpec]:
    """:data:`EVENTS`, with the hook specs imported (they fill it)."""
    import piko.platform.hookspecs  # noqa: F401  (its decorators declare every event)

    return EVENTS


def semantics_of(name: str) -> Semantics:
    spec = declared().get(name)
    return spec.semantics if spec is not None else Semantics.NOTIFY


def subscribable_events() -> frozenset[str]:
    """The events an extension may subscribe to with ``pi.on``."""
    return frozenset(name for name, spec in declared().items() if spec.subscribable)
