"""The commands a prompt can run, as pi lists them for RPC ``get_commands`` and for extensions'
``pi.get_commands()``: extension commands, then prompt templates, then every skill (whatever
``enableSkillCommands`` says: that setting only hides skills from interactive completion), each
with pi's ``sourceInfo``."""

from __future__ import annotations

from typing import Any

# resource location -> pi's (source, scope, origin)
_SCOPES = {
    "user": ("auto", "user", "top-level"),
    "project": ("auto", "project", "top-level"),
    "path": ("cli", "temporary", "top-level"),
    "package": ("package", "user", "package"),
}


def source_info(path: str, location: str, base_dir: str | None = None) -> dict[str, Any]:
    """pi's ``sourceInfo`` of a template or skill file loaded from ``location``."""
    source, scope, origin = _SCOPES.get(location, ("local", "user", "top-level"))
    info = {"path": path, "source": source, "scope": scope, "origin": origin, "baseDir": base_dir}
    return {k: v for k, v in info.items() if v is not None}


def extension_source_info(app: Any, plugin: str) -> dict[str, Any]:
    """pi's ``sourceInfo`` of what a plugin registered: an extension file, a package, or built in."""
    info = app.pm.infos.get(plugin)
    if info is not None and info.origin == "file":
        return {"path": info.path or plugin, "source": "local", "scope": "user", "origin": "top-level"}
    if info is not None and info.origin == "distribution":
        return {"path": plugin, "source": info.source, "scope": "user", "origin": "package"}
    return {"path": plugin, "source": "built-in", "scope": "user", "origin": "top-level"}


def list_commands(app: Any, resources: Any) -> list[dict[str, Any]]:
    """``{name, description, source, sourceInfo}`` for every command, template and skill."""
    commands: list[dict[str, Any]] = []
    for definition in app.registries.commands:
        entry = {
            "name": definition.name,
            "description": definition.description or None,
            "source": "extension",
            "sourceInfo": extension_source_info(app, definition.plugin),
        }
        commands.append({k: v for k, v in entry.items() if v is not None})
    for template in resources.prompt_templates:
        commands.append(
            {
                "name": template.name,
                "description": template.description,
                "source": "prompt",
                "sourceInfo": source_info(template.file_path, template.source),
            }
        )
    for skill in resources.skills:
        commands.append(
            {
                "name": f"skill:{skill.name}",
                "description": skill.description,
                "source": "skill",
                "sourceInfo": source_info(skill.file_path, skill.source, skill.base_dir),
            }
        )
    return commands
