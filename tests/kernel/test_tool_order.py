"""Which tools are active by default, and in what order: declared by the tools, not by their names.

Built-in tools carry ``order`` 0-6 (pi's order: read, bash, edit, write, grep, find, ls); any
plugin may give its tool an ``order``; tools without one follow in load order. Whether a tool
is built-in (what ``--no-builtin-tools`` leaves out) is decided by where its plugin came from,
so a third-party plugin named ``tools.x`` is not mistaken for one of piko's.
"""

from __future__ import annotations

from typing import Any

from piko.engine.setup import is_builtin_tool
from piko.engine.setup import select_tools

EXTRA = """
from piko import hookimpl

@hookimpl
def piko_register_tools(register):
    register(name="late", description="no order", execute=lambda *a: "x", default_active=True)
    register(name="early", description="before read", execute=lambda *a: "x", default_active=True, order=-1)
"""

BUILTIN_TOOLS = {
    f"tools.{n}": f"piko.plugins.tools.{n}" for n in ("write", "read", "ls", "bash", "edit", "grep", "find")
}


def _booted(app_factory: Any, fake_dist: Any, **options: Any) -> Any:
    fake_dist("piko", "0.1.0", BUILTIN_TOOLS)
    fake_dist("lookalike", "1.0", {"tools.extra": "lookalike_tools"}, {"lookalike_tools": EXTRA})
    app = app_factory()
    app.options.update(options)
    return app.boot()


def test_built_ins_come_in_pis_order_and_order_places_other_tools(
    env, fake_dist, only_site, app_factory
) -> None:
    app = _booted(app_factory, fake_dist)
    assert select_tools(app) == ["early", "read", "bash", "edit", "write", "late"]


def test_a_third_party_plugin_named_tools_x_is_not_built_in(env, fake_dist, only_site, app_factory) -> None:
    app = _booted(app_factory, fake_dist, no_builtin_tools=True)
    tools = app.registries.tools
    assert is_builtin_tool(app, tools.get("read"))
    assert not is_builtin_tool(app, tools.get("late"))
    assert select_tools(app) == ["early", "late"]
