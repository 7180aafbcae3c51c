"""``pi plugins [--json]``: every plugin, where it came from, the hooks it implements, its state.

``pi plugins new NAME`` writes a new plugin package (:mod:`piko.app.plugin_template`).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from piko.app.plugin_template import new_command


def _status(info: Any) -> str:
    if info.blocked:
        return f"blocked ({info.blocked_by})"
    if info.error:
        return f"failed: {info.error}"
    return "active"


@click.group(
    "plugins",
    invoke_without_command=True,
    help="List plugins, where they come from, the hooks they implement, and what is blocked.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table")
@click.pass_obj
def plugins_command(app: Any, as_json: bool) -> None:
    if click.get_current_context().invoked_subcommand:
        return  # ``pi plugins new ...``
    from piko.platform.registries import Registries

    for registry in Registries.SPECS:  # collect registrations so their problems are reported
        getattr(app.registries, registry)
    infos = list(app.pm.infos.values())
    if as_json:
        from piko.lib import jsonio

        payload = {"plugins": [i.to_json() for i in infos], "diagnostics": app.diagnostics()}
        sys.stdout.write(jsonio.dumps_pretty(payload) + "\n")
        return
    rows = [
        (i.name, i.source, _status(i), ", ".join(h.removeprefix("piko_") for h in i.hooks)) for i in infos
    ]
    headers = ("NAME", "SOURCE", "STATUS", "HOOKS")
    widths = [max(len(headers[c]), *(len(r[c]) for r in rows)) if rows else len(headers[c]) for c in range(3)]
    lines = ["  ".join(h.ljust(widths[c]) if c < 3 else h for c, h in enumerate(headers))]
    for row in rows:
        lines.append("  ".join(v.ljust(widths[c]) if c < 3 else v for c, v in enumerate(row)))
    sys.stdout.write("\n".join(lines) + "\n")
    for message in app.diagnostics():
        sys.stdout.write(f"! {message}\n")


plugins_command.add_command(new_command)
