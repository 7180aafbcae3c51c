"""``pi config``: enable or disable plugins (settings ``disabledPlugins``) and package resources.

Package resources are switched the way pi's ``pi config`` switches them: the package's settings
entry takes its object form and gets a ``+path`` (enable) or ``-path`` (disable) pattern for
the resource, relative to the package root. In a terminal, ``pi config`` without arguments
shows a checklist; ``pi config list|enable|disable`` work everywhere.
"""

from __future__ import annotations

import os
from typing import Any

import click

from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.manager import Resource
from piko.plugins.packages.manager import manager_for

KIND_LABELS = {"extensions": "Extensions", "skills": "Skills", "prompts": "Prompts", "themes": "Themes"}


def display_name(resource: Resource) -> str:
    """pi's names: a skill by its folder, an extension file with its folder when nested."""
    path = resource.path
    if resource.kind == "skills" and path.name == "SKILL.md":
        return path.parent.name
    if resource.kind == "extensions" and path.parent.name != "extensions" and path.is_file():
        return f"{path.parent.name}/{path.name}"
    return path.name


def _plugins(app: Any) -> list[Any]:
    from piko.platform.manager import ESSENTIAL_PLUGINS

    return [i for i in app.pm.infos.values() if i.origin != "internal" and i.name not in ESSENTIAL_PLUGINS]


def _plugin_state(info: Any) -> str:
    if info.blocked:
        return f"disabled ({info.blocked_by})"
    if info.error:
        return f"failed: {info.error}"
    return "enabled"


def show(app: Any, as_json: bool) -> int:
    manager = manager_for(app)
    resources = manager.resources()
    if as_json:
        from piko.lib import jsonio

        payload = {
            "plugins": [
                {"name": i.name, "source": i.source, "enabled": not i.blocked, "blockedBy": i.blocked_by}
                for i in _plugins(app)
            ],
            "resources": [
                {
                    "kind": r.kind,
                    "name": display_name(r),
                    "path": str(r.path),
                    "enabled": r.enabled,
                    "package": r.source,
                    "scope": r.scope,
                }
                for r in resources
            ],
        }
        click.echo(jsonio.dumps_pretty(payload))
        return 0
    click.secho("Plugins:", bold=True)
    for info in _plugins(app):
        mark = "x" if not info.blocked else " "
        click.echo(f"  [{mark}] {info.name:<34} {info.source}  {_plugin_state(info)}")
    groups: dict[tuple[str, str], list[Resource]] = {}
    for resource in resources:
        groups.setdefault((resource.source, resource.scope), []).append(resource)
    for (source, scope), items in groups.items():
        click.echo()
        click.secho(f"{source} ({scope})", bold=True)
        for kind, label in KIND_LABELS.items():
            of_kind = [r for r in items if r.kind == kind]
            if not of_kind:
                continue
            click.echo(f"  {label}")
            for r in of_kind:
                click.echo(f"    [{'x' if r.enabled else ' '}] {display_name(r):<30} {r.path}")
    return 0


# ---------------------------------------------------------------------------
# Switching
# ---------------------------------------------------------------------------


def _set_plugin(app: Any, info: Any, enabled: bool, local: bool) -> str:
    from piko.platform.manager import ESSENTIAL_PLUGINS

    if info.name in ESSENTIAL_PLUGINS:
        raise PackageError(f"plugin '{info.name}' is essential and cannot be disabled")
    if enabled and info.blocked_by == "policy":
        raise PackageError(f"plugin '{info.name}' is blocked by policy ({app.policy.source})")
    settings = app.settings
    data = settings.project_data if local else settings.global_data
    current = [str(n) for n in data.get("disabledPlugins") or [] if isinstance(n, str)]
    names = (
        [n for n in current if n != info.name]
        if enabled
        else [*current, *([info.name] if info.name not in current else [])]
    )
    value = names if names else None
    (settings.set_project if local else settings.set_global)("disabledPlugins", value)
    where = settings.project_path if local else settings.global_path
    message = f"{'Enabled' if enabled else 'Disabled'} plugin {info.name} ({where})"
    if local and not app.project_trusted:
        message += "; this project is not trusted, so its settings take effect after `pi trust`"
    if enabled:
        others = [
            n for n in (settings.global_data if local else settings.project_data).get("disabledPlugins") or []
        ]
        env = [n.strip() for n in os.environ.get("PIKO_DISABLE_PLUGINS", "").split(",")]
        if info.name in others or info.name in env:
            message += "; it is still disabled elsewhere (the other settings file or PIKO_DISABLE_PLUGINS)"
    return message


def _matches(resource: Resource, item: str) -> bool:
    path = resource.path
    candidates = {str(path), display_name(resource), path.name}
    try:
        candidates.add(os.path.relpath(path, resource.base).replace(os.sep, "/"))
    except ValueError:
        pass
    if os.path.isabs(item) or item.startswith("."):
        return os.path.abspath(item) in (str(path), str(path.parent) if path.name == "SKILL.md" else "")
    return item in candidates or f"{resource.kind}:{display_name(resource)}" == item


def set_resource(app: Any, resource: Resource, enabled: bool) -> str:
    """Write pi's ``+path``/``-path`` pattern for ``resource`` into its package's settings entry."""
    manager = manager_for(app)
    packages = manager.settings_packages(resource.scope)
    index = next(
        (
            i
            for i, e in enumerate(packages)
            if (e if isinstance(e, str) else e.get("source")) == resource.source
        ),
        None,
    )
    if index is None:
        raise PackageError(f"package {resource.source} is not in the {resource.scope} settings")
    entry = packages[index]
    entry = {"source": entry} if isinstance(entry, str) else dict(entry)
    pattern = os.path.relpath(resource.path, resource.base).replace(os.sep, "/")
    current = [p for p in entry.get(resource.kind) or [] if isinstance(p, str)]
    kept = [p for p in current if (p[1:] if p[:1] in "!+-" else p) != pattern]
    kept.append(f"{'+' if enabled else '-'}{pattern}")
    entry[resource.kind] = kept
    packages[index] = entry
    manager.write_packages(resource.scope, packages)
    manager.resources(refresh=True)
    return f"{'Enabled' if enabled else 'Disabled'} {resource.kind[:-1]} {display_name(resource)} of {resource.source} ({resource.scope} settings)"


def set_enabled(app: Any, item: str, enabled: bool, *, local: bool = False) -> str:
    """Enable or disable a plugin (by name) or a package resource (by name or path)."""
    info = app.pm.infos.get(item)
    if info is not None and info.origin != "internal":
        return _set_plugin(app, info, enabled, local)
    kind, _, name = item.partition(":") if item.split(":", 1)[0] in KIND_LABELS else ("", "", item)
    found = [
        r for r in manager_for(app).resources() if (not kind or r.kind == kind) and _matches(r, name or item)
    ]
    if not found:
        raise PackageError(f"No plugin or package resource named {item} (see `pi config list`)")
    if len(found) > 1:
        choices = ", ".join(f"{r.kind}:{display_name(r)} ({r.path})" for r in found)
        raise PackageError(f"{item} is ambiguous: {choices}; give the path instead")
    return set_resource(app, found[0], enabled)


def interactive(app: Any) -> int:
    """A checklist of plugins and package resources; the changes are written when confirmed."""
    from prompt_toolkit.shortcuts import checkboxlist_dialog

    from piko.app.application import PROJECT_DISABLED
    from piko.app.application import USER_DISABLED

    plugins = [i for i in _plugins(app) if i.blocked_by in (None, USER_DISABLED, PROJECT_DISABLED)]
    resources = manager_for(app).resources()
    values: list[tuple[str, str]] = [
        (f"resource:{n}", f"{r.kind[:-1]:<9} {display_name(r)}  ({r.source}, {r.scope})")
        for n, r in enumerate(resources)
    ]
    plugins.sort(key=lambda i: (i.origin == "built-in", i.name))  # third-party plugins first
    values += [(f"plugin:{i.name}", f"plugin    {i.name}  ({i.source})") for i in plugins]
    if not values:
        click.echo("Nothing to configure: no plugins or package resources.")
        return 0
    before = {f"plugin:{i.name}" for i in plugins if not i.blocked}
    before |= {f"resource:{n}" for n, r in enumerate(resources) if r.enabled}
    chosen = checkboxlist_dialog(
        title="Resource Configuration",
        text="space: toggle, tab: buttons, enter: confirm, escape: close",
        values=values,
        default_values=[key for key, _label in values if key in before],  # the cursor starts on the first
    ).run()
    if chosen is None:
        return 0
    after = set(chosen)
    for key in sorted(before ^ after):
        enabled = key in after
        kind, _, ident = key.partition(":")
        if kind == "plugin":
            info = app.pm.infos[ident]
            click.echo(_set_plugin(app, info, enabled, local=False))
        else:
            click.echo(set_resource(app, resources[int(ident)], enabled))
    return 0
