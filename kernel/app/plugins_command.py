"""``pi plugins [--json] [--check]``: every plugin, where it came from, the hooks it implements,
its state (active, failed with the cause, refused with the cause, blocked by what) and what it
overrides.

``pi plugins new NAME`` writes a new plugin package (:mod:`piko.app.plugin_template`).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from piko.app.plugin_template import new_command


class Health:
    """What each plugin registered, took over and was refused, from the filled registries."""

    def __init__(self, app: Any) -> None:
        models = app.model_registry
        self.overrides: dict[str, list[str]] = {}
        for override in app.registries.overrides() + models.overrides:
            self.overrides.setdefault(override.plugin, []).append(override.label)
        self.refusals: dict[str, list[Any]] = {}
        for refusal in app.registries.refusals() + models.refusals:
            self.refusals.setdefault(refusal.plugin, []).append(refusal)
        self.owners = app.registries.owners() | {p.plugin for p in models.providers.values()}

    def refused_only(self, info: Any) -> bool:
        """Refused, and nothing else of the plugin is in use: no registration was taken and it
        implements no hook besides registration hooks."""
        if info.name not in self.refusals or info.name in self.owners:
            return False
        return all(hook.startswith("piko_register_") for hook in info.hooks)

    def status(self, info: Any) -> str:
        if info.blocked:
            return f"blocked ({info.blocked_by})"
        if info.error:
            return f"failed: {info.error}"
        refusals = self.refusals.get(info.name, [])
        if refusals and self.refused_only(info):
            more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
            return f"refused: {refusals[0].cause}{more}"
        labels = [*self.overrides.get(info.name, []), *dict.fromkeys(r.label for r in refusals)]
        return "active" + "".join(f", {label}" for label in labels)

    def unhealthy(self, info: Any) -> bool:
        """What makes ``--check`` fail: the plugin failed, or a registration of it was refused."""
        return not info.blocked and bool(info.error or info.name in self.refusals)


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
    health = Health(app)
    infos = list(app.pm.infos.values())
    if as_json:
        from piko.lib import jsonio

        plugins = [
            {
                **i.to_json(),
                "status": health.status(i),
                "overrides": health.overrides.get(i.name, []),
                "refused": [r.cause for r in health.refusals.get(i.name, [])],
            }
            for i in infos
        ]
        payload = {"plugins": plugins, "diagnostics": _diagnostics(app)}
        sys.stdout.write(jsonio.dumps_pretty(payload) + "\n")
    else:
        _table(app, infos, health)
    if check and any(health.unhealthy(i) for i in infos):
        raise click.exceptions.Exit(1)


def _table(app: Any, infos: list[Any], health: Health) -> None:
    rows = [
        (
            i.name,
            i.source,
            health.status(i),
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
    """The run's diagnostics, each once: ``pi plugins`` is where they are printed (its notices,
    such as an untrusted project's, go to stderr as for every command)."""
    return list(dict.fromkeys(app.diagnostics()))


plugins_command.add_command(new_command)
