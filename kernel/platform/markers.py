"""The pluggy markers of the ``piko`` project: ``hookspec`` for the kernel, ``hookimpl`` for plugins,
and ``registers`` for a registration hook that only declares fixed definitions."""

from __future__ import annotations

import pluggy

TYPE_CHECKING = False  # not typing's: every start imports this module, and typing costs more
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PROJECT_NAME = "piko"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Mark a hook specification (``@hookspec``, ``@hookspec(firstresult=True)``); a plugin that adds
hooks of its own declares them with it in ``piko_addhooks``."""
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Mark a plugin's function as the implementation of the hook it is named after (``@hookimpl``);
``@hookimpl(tryfirst=True)`` / ``trylast=True`` move it to the front or the back of the call order,
``optionalhook=True`` lets it name a hook that may not exist."""


def registers(*definitions: Any, **fields: Any) -> Callable[[Callable[..., Any]], None]:
    """The implementation of a registration hook that registers fixed definitions, declared::

        piko_register_modes = registers(name="oneline", run="my_plugin.oneline:run", description="...")
        piko_register_flags = registers({"name": "plan", "type": "boolean"}, {"name": "persona"})

    Each positional argument is one definition, given as a definition object
    (``piko.ModeDefinition(...)``) or a dict of its fields; keyword arguments are the fields of one
    more. They are passed to the hook's ``register`` in that order, exactly as
    ``@hookimpl def piko_register_modes(register): register(...)`` would. The module attribute's
    name says which hook it implements; a field that hook's definitions do not have is reported
    as the plugin's diagnostic, like any failing registration. The definitions stay readable on
    the returned function as ``.declared``.
    """
    declared = (*definitions, fields) if fields else definitions
    if not declared:
        raise TypeError("registers() needs at least one definition")

    def register_declared(register: Callable[..., Any]) -> None:
        for definition in declared:
            register(definition)

    register_declared.declared = declared  # type: ignore[attr-defined]
    return hookimpl(register_declared)
