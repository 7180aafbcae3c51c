"""What the dispatcher tests share: a real plugin manager and dispatcher with handlers on it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from piko.data import events as ev
from piko.data.messages import AssistantMessage
from piko.platform.dispatch import Dispatcher
from piko.platform.manager import PikoPluginManager
from piko.platform.markers import hookimpl
from piko.platform.semantics import declared

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

SEMANTICS = {name: spec.semantics for name, spec in declared().items()}


class Harness:
    """A plugin manager, a dispatcher over it, and a log of which handler ran."""

    def __init__(self, budget_ms: float = 30000.0) -> None:
        self.pm = PikoPluginManager()
        self.errors: list[ev.ExtensionErrorEvent] = []
        self.dispatcher = Dispatcher(self.pm, budget_ms=lambda name: budget_ms, sources=lambda p: f"src:{p}")
        self.dispatcher.error_listeners.append(self.errors.append)
        self.calls: list[str] = []

    def add(self, hook: str, fn: Callable[[Any, Any], Any], name: str | None = None, **opts: Any) -> str:
        """Register a plugin whose ``hook`` implementation logs its name and returns ``fn(first, ctx)``."""
        plugin_name = name or f"p{len(self.pm.list_name_plugin())}"
        spec_args = tuple(getattr(self.pm.hook, hook).spec.argnames)
        calls = self.calls

        if spec_args[0] == "request":

            def impl(request: Any, ctx: Any) -> Any:
                calls.append(plugin_name)
                return fn(request, ctx)

        else:

            def impl(event: Any, ctx: Any) -> Any:  # type: ignore[misc]
                calls.append(plugin_name)
                return fn(event, ctx)

        self.pm.register(SimpleNamespace(**{hook: hookimpl(**opts)(impl)}), plugin_name)
        return plugin_name

    def emit(self, name: str, event: Any, ctx: Any = None) -> Any:
        return asyncio.run(self.dispatcher.emit(name, event, ctx))


def returns(value: Any) -> Callable[[Any, Any], Any]:
    return lambda event, ctx: value


def raises(exc: BaseException) -> Callable[[Any, Any], Any]:
    def handler(event: Any, ctx: Any) -> Any:
        raise exc

    return handler


def assistant(*blocks: Any) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), provider="faux", model="m")
