"""Every hook of piko, in families (one module each, under banners); each docstring is that hook's reference.

Hook names carry the ``piko_`` prefix. Implementations may take fewer arguments than a spec
names (pluggy passes only those asked for), so specs can grow without breaking plugins.

Three kinds of hooks live here:

* **bootstrap** hooks run once while piko starts (``piko_addhooks`` and ``piko_configure`` are
  historic: a plugin registered late still receives them);
* **registration** hooks hand a plugin a ``register`` callable; the kernel calls each plugin's
  implementation separately, so everything registered is stamped with the plugin that
  registered it (``pi plugins`` and the registries show it);
* **event** hooks (``piko_<event>(event, ctx)``) are fired by the kernel's async dispatcher
  (:mod:`piko.platform.dispatch`), never through ``pm.hook`` directly. An implementation may be a plain
  function or a coroutine function. The dispatcher walks implementations in registration order
  (``tryfirst`` ones first, ``trylast`` ones last), awaits each within a time budget, and
  applies the event's semantics: *notify* (return values ignored), *chain* (each handler sees
  the previous one's change), *cancel*, *block* or *first result*. A handler that raises or
  overruns its budget is reported as an ``extension_error`` event and the others still run;
  ``tool_call`` fails closed (the tool is blocked). Coroutines run on the event loop; a plain
  function runs on a thread of its own, so one that blocks cannot freeze piko (its budget
  applies, and ``ctx`` calls it makes are run on the loop). An abort cancels the handler being
  waited for. See plugins.md, "Plain functions and coroutines".

``event`` is a record (:class:`piko.lib.records.Record`) from :mod:`piko.data.events` with snake_case attributes;
``ctx`` is the :class:`piko.extensions.context.ExtensionContext` of the running session. Handlers return
``None`` or a mapping (snake_case or pi's camelCase keys both work) or an object with the named
attributes.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType

from piko.platform.hookspecs import bootstrap
from piko.platform.hookspecs import reference_events
from piko.platform.hookspecs import services
from piko.platform.hookspecs import session_events
from piko.platform.hookspecs import tool_events
from piko.platform.hookspecs import turn_events
from piko.platform.hookspecs.bootstrap import *  # noqa: F403
from piko.platform.hookspecs.reference_events import *  # noqa: F403
from piko.platform.hookspecs.services import *  # noqa: F403
from piko.platform.hookspecs.session_events import *  # noqa: F403
from piko.platform.hookspecs.tool_events import *  # noqa: F403
from piko.platform.hookspecs.turn_events import *  # noqa: F403

#: The families in the order of the reference (``docs/hooks.md`` follows it).
FAMILIES: tuple[ModuleType, ...] = (
    bootstrap,
    services,
    session_events,
    turn_events,
    tool_events,
    reference_events,
)


def source() -> str:
    """The families' source text in order: their banners are the sections of the hook reference."""
    return "\n".join(Path(inspect.getfile(family)).read_text(encoding="utf-8") for family in FAMILIES)
