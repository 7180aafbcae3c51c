"""Themes: pi's JSON colour themes from the user's and the project's theme folders, settings and ``--theme``.

Looked up in ``--theme`` paths (files or folders, also with ``--no-themes``), then, unless
``--no-themes``: ``.pi/themes/*.json`` (a trusted project), ``~/.pi/agent/themes/*.json``, the
settings' ``themes`` lists (files or folders, relative to the agent dir or ``.pi``), and paths
that ``resources_discover`` handlers add (packages). A file must be a JSON object with a
``name``; the first theme of a name wins. Colours are checked when the interactive mode uses them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.config.paths import expand_user
from piko.resources.files import files_with_suffix
from piko.resources.loader import ResourceRequest
from piko.resources.loader import Theme


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("themes", load_themes)


def load_theme_file(path: Path, source: str, request: ResourceRequest) -> Theme | None:
    """One theme from its JSON file (``None``, with a diagnostic, when it cannot be used)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        request.diagnostics.append(f"theme {path}: {exc.strerror or exc}")
        return None
    except ValueError as exc:
        request.diagnostics.append(f"theme {path}: invalid JSON: {exc}")
        return None
    if not isinstance(data, dict):
        request.diagnostics.append(f"theme {path}: must be a JSON object")
        return None
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        request.diagnostics.append(f'theme {path}: "name" is required; skipped')
        return None
    if not isinstance(data.get("colors"), dict):
        request.diagnostics.append(f'theme {path}: "colors" must be an object; skipped')
        return None
    return Theme(name=name.strip(), path=str(path), data=data, source=source)


def _from_path(path: Path, source: str, request: ResourceRequest) -> list[Theme]:
    if path.is_dir():
        try:
            os.scandir(path).close()  # an unreadable folder is reported, not silently empty
        except OSError as exc:
            request.diagnostics.append(f"theme folder {path}: {exc.strerror or exc}")
            return []
        files = files_with_suffix(path, ".json", recursive=False)  # honours ignore files, as pi
    elif path.is_file():
        files = [path]
    else:
        if source == "path":
            request.diagnostics.append(f"theme path not found: {path}")
        return []
    return [t for t in (load_theme_file(f, source, request) for f in files) if t is not None]


def _resolve(value: str, base: Path) -> Path:
    path = Path(expand_user(value))
    return path if path.is_absolute() else base / path


def _listed(data: Any) -> list[str]:
    """The settings' ``themes`` entries (a list of paths; anything else is ignored)."""
    value = data.get("themes") if isinstance(data, dict) else None
    return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []


def load_themes(request: ResourceRequest) -> list[Theme]:
    """Every theme found; the first definition of a name wins (later ones are reported)."""
    cwd = Path(request.cwd)
    agent = Path(request.agent_dir)
    locations: list[tuple[Path, str]] = [
        (_resolve(str(p), cwd), "path") for p in request.options.get("theme") or ()
    ]
    if not request.options.get("no_themes"):
        if request.project_trusted:
            locations.append((cwd / ".pi" / "themes", "project"))
        locations.append((agent / "themes", "user"))
        settings = request.settings
        for value in _listed(settings.global_data if settings else None):
            locations.append((_resolve(value, agent), "user"))
        if request.project_trusted:
            for value in _listed(settings.project_data if settings else None):
                locations.append((_resolve(value, cwd / ".pi"), "project"))
        locations.extend((Path(p), "package") for p in request.extra_paths.get("theme_paths", []))
    themes: list[Theme] = []
    names: set[str] = set()
    seen: set[Path] = set()
    for path, source in locations:
        resolved = path.resolve() if path.exists() else path
        if resolved in seen:
            continue
        seen.add(resolved)
        for theme in _from_path(path, source, request):
            if theme.name in names:
                request.diagnostics.append(f'theme "{theme.name}" at {theme.path} ignored: the name is taken')
                continue
            names.add(theme.name)
            themes.append(theme)
    return themes
