"""Skills: ``SKILL.md`` folders (and top-level ``*.md`` files) from the user's and the project's skill folders.

Looked up in ``~/.pi/agent/skills``, ``~/.agents/skills``, ``.pi/skills``, every ``.agents/skills``
from cwd up to the git root, the settings' ``skills`` paths, ``--skill`` paths, and paths that
``resources_discover`` handlers add. A skill needs a ``description``; names that break pi's
rules are reported but still load.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.paths import expand_user
from piko.plugins.resources.frontmatter import parse_frontmatter
from piko.resources import ResourceRequest, Skill

MAX_NAME = 64
MAX_DESCRIPTION = 1024
_NAME = re.compile(r"^[a-z0-9-]+$")


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("skills", load_skills)


def _name_problems(name: str, parent: str) -> list[str]:
    problems = []
    if name != parent:
        problems.append(f'name "{name}" does not match parent directory "{parent}"')
    if len(name) > MAX_NAME:
        problems.append(f"name exceeds {MAX_NAME} characters ({len(name)})")
    if not _NAME.match(name):
        problems.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def load_skill_file(path: Path, source: str, request: ResourceRequest) -> Skill | None:
    """One skill from its markdown file (``None`` when it has no description or cannot be read)."""
    try:
        fields, _body = parse_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        request.diagnostics.append(f"skill {path}: {exc}")
        return None
    description = fields.get("description")
    parent = path.parent.name
    name = str(fields.get("name") or parent)
    for problem in _name_problems(name, parent):
        request.diagnostics.append(f"skill {path}: {problem}")
    if not isinstance(description, str) or not description.strip():
        request.diagnostics.append(f"skill {path}: description is required; skipped")
        return None
    if len(description) > MAX_DESCRIPTION:
        request.diagnostics.append(
            f"skill {path}: description exceeds {MAX_DESCRIPTION} characters ({len(description)})"
        )
    return Skill(
        name=name,
        description=description.strip(),
        file_path=str(path),
        base_dir=str(path.parent),
        source=source,
        disable_model_invocation=fields.get("disable-model-invocation") is True,
    )


def _scan(directory: Path, source: str, request: ResourceRequest, *, root_files: bool) -> list[Skill]:
    skill_file = directory / "SKILL.md"
    if skill_file.is_file():
        skill = load_skill_file(skill_file, source, request)
        return [skill] if skill else []
    found: list[Skill] = []
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return found
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        if entry.is_dir():
            found.extend(_scan(entry, source, request, root_files=False))
        elif root_files and entry.is_file() and entry.suffix == ".md":
            skill = load_skill_file(entry, source, request)
            if skill:
                found.append(skill)
    return found


def _load_path(path: Path, source: str, request: ResourceRequest) -> list[Skill]:
    if path.is_dir():
        return _scan(path, source, request, root_files=True)
    if path.is_file() and path.suffix == ".md":
        skill = load_skill_file(path, source, request)
        return [skill] if skill else []
    request.diagnostics.append(f"skill path not found: {path}")
    return []


def _agents_dirs(cwd: Path) -> list[Path]:
    """``.agents/skills`` in cwd and each parent up to the git root (or the filesystem root)."""
    dirs = []
    for directory in (cwd, *cwd.parents):
        candidate = directory / ".agents" / "skills"
        if candidate.is_dir():
            dirs.append(candidate)
        if (directory / ".git").exists():
            break
    return dirs


def _resolve(value: str, base: Path) -> Path:
    path = Path(expand_user(value))
    return path if path.is_absolute() else base / path


def load_skills(request: ResourceRequest) -> list[Skill]:
    """Every skill found, first definition of a name wins."""
    cwd = Path(request.cwd).resolve()
    agent = Path(request.agent_dir)
    explicit = [(_resolve(p, cwd), "path") for p in request.options.get("skill") or ()]
    if request.options.get("no_skills"):
        return [s for path, source in explicit for s in _load_path(path, source, request)]
    locations: list[tuple[Path, str]] = list(explicit)
    locations.append((cwd / ".pi" / "skills", "project"))
    locations.extend((d, "project") for d in _agents_dirs(cwd))
    project_settings = request.settings.project_data.get("skills") if request.settings else None
    for value in project_settings if isinstance(project_settings, list) else []:
        locations.append((_resolve(str(value), cwd / ".pi"), "project"))
    locations.append((agent / "skills", "user"))
    locations.append((Path.home() / ".agents" / "skills", "user"))
    global_settings = request.settings.global_data.get("skills") if request.settings else None
    for value in global_settings if isinstance(global_settings, list) else []:
        locations.append((_resolve(str(value), agent), "user"))
    locations.extend((Path(p), "path") for p in request.extra_paths.get("skill_paths", []))
    skills: list[Skill] = []
    seen_dirs: set[Path] = set()
    names: set[str] = set()
    for path, source in locations:
        resolved = path.resolve() if path.exists() else path
        if resolved in seen_dirs or not path.exists():
            if not path.exists() and source == "path":
                request.diagnostics.append(f"skill path not found: {path}")
            continue
        seen_dirs.add(resolved)
        for skill in _load_path(path, source, request):
            if skill.name in names:
                request.diagnostics.append(
                    f'skill "{skill.name}" at {skill.file_path} ignored: the name is taken'
                )
                continue
            names.add(skill.name)
            skills.append(skill)
    return skills
