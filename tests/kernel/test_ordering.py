"""One call order for every hook: ``tryfirst``, unmarked, ``trylast``; load order within each.

The dispatcher (events), the registries (registration hooks) and the model registry (providers)
all ask :func:`piko.platform.ordering.call_order`. Before, the registries ignored the markers,
so a ``tryfirst`` tool registration loaded later lost to an earlier plugin's.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from piko import ProviderConfig
from piko import hookimpl
from piko.models.registry import ModelRegistry
from piko.platform.dispatch import Dispatcher
from piko.platform.manager import PikoPluginManager
from piko.platform.registries import Registries

LOAD_ORDER = ["plain_one", "first", "last", "plain_two"]
CALL_ORDER = ["first", "plain_one", "plain_two", "last"]


def make_plugin(name: str, seen: list[str]) -> object:
    marks = {"tryfirst": name == "first", "trylast": name == "last"}

    class Plugin:
        @hookimpl(**marks)
        def piko_register_tools(self, register: Any) -> None:
            seen.append(name)
            register(name="shared", description=f"from {name}", execute="x:y")

        @hookimpl(**marks)
        def piko_register_providers(self, register: Any) -> None:
            seen.append(name)
            register(ProviderConfig(name=f"p-{name}"))

        @hookimpl(**marks)
        def piko_turn_start(self, event: Any, ctx: Any) -> None:
            seen.append(name)

    return Plugin()


def manager(seen: list[str]) -> PikoPluginManager:
    pm = PikoPluginManager()
    for name in LOAD_ORDER:
        pm.register(make_plugin(name, seen), name)
    return pm


def test_events_run_in_the_one_order() -> None:
    seen: list[str] = []
    asyncio.run(Dispatcher(manager(seen)).emit("turn_start", SimpleNamespace()))
    assert seen == CALL_ORDER


def test_registration_hooks_run_in_the_one_order_and_the_first_called_owns_a_name() -> None:
    seen: list[str] = []
    registries = Registries(manager(seen))
    tool = registries.tools.get("shared")
    assert seen == CALL_ORDER
    assert tool is not None and tool.plugin == "first"


def test_providers_are_collected_in_the_one_order() -> None:
    seen: list[str] = []
    models = ModelRegistry(SimpleNamespace(pm=manager(seen), policy=None))
    models.load()
    assert seen == CALL_ORDER
    assert list(models.providers) == [f"p-{name}" for name in CALL_ORDER]
