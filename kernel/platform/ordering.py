"""The one order in which piko calls a hook's implementations, whoever calls them.

pluggy's markers decide first: ``tryfirst`` implementations, then the unmarked ones, then the
``trylast`` ones. Within each group, plugins are called in the order they were registered
(essential plugins, built-ins, installed distributions, then extension files), which is the
order pi runs its extensions' handlers in. pluggy's own ``pm.hook`` calls run the other way
within a group (last registered first); piko never fires events or registration hooks through
``pm.hook``, so this order holds everywhere: the dispatcher's events, the registration hooks of
:mod:`piko.platform.registries` and the providers of :mod:`piko.models.registry`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["call_order", "merged_answers"]


def call_order(pm: Any, hookimpls: Iterable[Any]) -> list[Any]:
    """``hookimpls`` of one hook (pluggy ``HookImpl`` objects), in the order piko calls them."""
    # keyed by id(): plugins may be unhashable (pluggy allows it)
    registered = {id(plugin): index for index, (_name, plugin) in enumerate(pm.list_name_plugin())}

    def rank(impl: Any) -> tuple[int, int]:
        group = 0 if impl.tryfirst else 2 if impl.trylast else 1
        return group, registered.get(id(impl.plugin), 0)

    return sorted(hookimpls, key=rank)


def merged_answers(pm: Any, hook: str, **kwargs: Any) -> dict[str, Any]:
    """Call every implementation of a hook whose answers are dicts, in piko's order, and merge
    them (a later answer wins for the same key). An implementation that raises is left out."""
    merged: dict[str, Any] = {}
    caller = getattr(pm.hook, hook, None)
    if caller is None:
        return merged
    for impl in call_order(pm, caller.get_hookimpls()):
        try:
            answer = impl.function(**{name: kwargs[name] for name in impl.argnames if name in kwargs})
        except Exception:
            continue
        if isinstance(answer, dict):
            merged.update(answer)
    return merged
