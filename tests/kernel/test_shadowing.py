"""No silent shadowing: a plugin cannot take a name another plugin owns unless it says so.

The fake distributions sit first on the import path, so their entry points are found before
piko's own (what once let a pip-installed ``read`` replace the built-in, with the warning blaming
the built-in). Load order decides ownership: built-ins, then distributions by plugin name.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

SHADOW = """
from piko import hookimpl

@hookimpl
def piko_register_tools(register):
    register(name="read", description="acme's read", execute=execute{override})

async def execute(tool_call_id, params, signal, on_update, ctx):
    original = await ctx.invoke_tool("read", params)
    return "acme saw: " + original.content[0].text
"""

BROKEN = """
from piko import hookimpl

@hookimpl
def piko_register_commands(register):
    raise RuntimeError("no database")
"""


def _plugins(run_pi: Any, env: Any, *args: str) -> dict[str, Any]:
    done = run_pi("plugins", "--json", *args, pythonpath=[env.site])
    assert done.code == 0, done
    return json.loads(done.stdout)


def test_a_distributions_read_is_refused_and_both_plugins_named(run_pi, env, fake_dist) -> None:
    fake_dist("acme_tools", "1.0", {"acme.tools": "acme_tools"}, {"acme_tools": SHADOW.format(override="")})
    report = _plugins(run_pi, env)
    assert (
        "plugin 'acme.tools': tool 'read' is already registered by plugin 'tools.read'; "
        "ignored (register it with override=True to replace it)"
    ) in report["diagnostics"]
    acme = next(p for p in report["plugins"] if p["name"] == "acme.tools")
    assert acme["overrides"] == []


def test_an_override_says_so_and_the_original_stays_reachable(
    run_pi, env, fake_dist, only_site, app_factory, tmp_path: Path
) -> None:
    fake_dist(
        "acme_tools",
        "1.0",
        {"acme.tools": "acme_tools"},
        {"acme_tools": SHADOW.format(override=", override=True")},
    )
    fake_dist("piko", "0.1.0", {"tools.read": "piko.plugins.tools.read"})  # the built-in, in this site
    report = _plugins(run_pi, env)
    acme = next(p for p in report["plugins"] if p["name"] == "acme.tools")
    assert acme["overrides"] == ["overrides tools.read"]
    table = run_pi("plugins", pythonpath=[env.site]).stdout
    assert "active, overrides tools.read" in next(line for line in table.splitlines() if "acme.tools" in line)

    app = app_factory().boot()
    tools = app.registries.tools
    assert tools.get("read").plugin == "acme.tools" and tools.original("read").plugin == "tools.read"
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    result = asyncio.run(tools.get("read").run("c1", {"path": str(notes)}, None, None, app.context()))
    assert result.content[0].text == "acme saw: hello\n"


def test_a_policy_can_forbid_overrides(run_pi, env, fake_dist, tmp_path: Path) -> None:
    fake_dist(
        "acme_tools",
        "1.0",
        {"acme.tools": "acme_tools"},
        {"acme_tools": SHADOW.format(override=", override=True")},
    )
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"allowOverrides": False}))
    done = run_pi("plugins", "--json", pythonpath=[env.site], env={"PIKO_POLICY": str(policy)})
    report = json.loads(done.stdout)
    assert (
        f"plugin 'acme.tools': tool 'read' of plugin 'tools.read' not overridden: overrides are forbidden by {policy}"
    ) in report["diagnostics"]


@pytest.mark.parametrize("as_json", [False, True])
def test_pi_plugins_check_fails_on_a_plugin_whose_registration_raised(
    run_pi, env, fake_dist, as_json: bool
) -> None:
    fake_dist("acme_db", "1.0", {"acme.db": "acme_db"}, {"acme_db": BROKEN})
    args = ["plugins", "--check", *(["--json"] if as_json else [])]
    done = run_pi(*args, pythonpath=[env.site])
    assert done.code == 1
    if as_json:
        acme = next(p for p in json.loads(done.stdout)["plugins"] if p["name"] == "acme.db")
        assert acme["error"] == "piko_register_commands failed: RuntimeError: no database"
    else:
        line = next(line for line in done.stdout.splitlines() if line.startswith("acme.db"))
        assert "failed: piko_register_commands failed: RuntimeError: no database" in line
    assert (
        run_pi("plugins", "--check", pythonpath=[env.site], env={"PIKO_DISABLE_PLUGINS": "acme.db"}).code == 0
    )
