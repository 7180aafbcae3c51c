"""``pi plugins [--json] [--check]``: every plugin, where it came from, the hooks it implements,
its state (active, failed with the cause, blocked by what) and what it overrides.

``pi plugins new NAME`` writes a new plugin package (:mod:`piko.app.plugin_template`).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from piko.app.plugin_template import new_command


def _status(info: Any, overrides: list[str]) -> str:
    if info.blocked:
        return f"blocked ({info.blocked_by})"
    if info.error:
        return f"failed: {info.error}"
    return "active" + "".join(f", {label}" for label in overrides)


@click.group(
    "plugins",
    invoke_without_command=True,
    help="List plugins, where they come from, the hooks they implement, and what is blocked.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table")
@click.option("--check", is_flag=True, help="Exit with 1 when a plugin failed to load or register")
@click.pass_obj
def plugins_command(app: Any, as_json: bool, check: bool) -> None:
    if click.get_current_context().invoked_subcommand:
        app.report()  # ``pi plugins new ...`` lists no diagnostics of its own
        return
    from piko.platform.registries import Registries

    for registry in Registries.SPECS:  # collect registrations so their problems are reported
        getattr(app.registries, registry)
    app.model_registry.load()
    overrides: dict[str, list[str]] = {}
    for override in app.registries.overrides() + app.model_registry.overrides:
        overrides.setdefault(override.plugin, []).append(override.label)
    infos = list(app.pm.infos.values())
    failed = [i for i in infos if i.error and not i.blocked]
    if as_json:
        from piko.lib import jsonio

        plugins = [{**i.to_json(), "overrides": overrides.get(i.name, [])} for i in infos]
        payload = {"plugins": plugins, "diagnostics": _diagnostics(app)}
        sys.stdout.write(jsonio.dumps_pretty(payload) + "\n")
    else:
        _table(app, infos, overrides)
    if check and failed:
        raise click.exceptions.Exit(1)


def _table(app: Any, infos: list[Any], overrides: dict[str, list[str]]) -> None:
    rows = [
        (
            i.name,
            i.source,
            _status(i, overrides.get(i.name, [])),
            ", ".join(h.removeprefix("piko_") for h in i.hooks),
        )
        for i in infos
    ]
    headers = ("NAME", "SOURCE", "STATUS", "HOOKS")
    widths = [max(len(headers[c]), *(len(r[c]) for r in rows)) if rows else len(headers[c]) for c in range(3)]
    lines = ["  ".join(h.ljust(widths[c]) if c < 3 else h for c, h in enumerate(headers))]
    for row in rows:
        lines.append("  ".join(v.ljust(widths[c]) if c < 3 else v for c, v in enumerate(row)))
    sys.stdout.write("\n".join(lines) + "\n")
    for message in _diagnostics(app):
        sys.stdout.write(f"! {message}\n")


def _diagnostics(app: Any) -> list[str]:
    """The run's diagnostics and notices, each once: ``pi plugins`` is where they are printed."""
    return list(dict.fromkeys([*app.diagnostics(), *app.notices]))


plugins_command.add_command(new_command)
