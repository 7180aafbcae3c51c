"""Skills: ``SKILL.md`` folders (and loose ``*.md`` files) from the user's and the project's skill folders.

Found where pi finds them, in pi's order (the first skill of a name wins): the project
settings' ``skills`` paths, ``.pi/skills`` and every ``.agents/skills`` from cwd up to the git
root, the global settings' ``skills`` paths, ``~/.pi/agent/skills`` and ``~/.agents/skills``,
installed packages, ``--skill`` paths, then paths that other ``resources_discover`` handlers
(extensions) add. Loose ``*.md`` files
count only directly in ``.pi/skills``, ``~/.pi/agent/skills``, ``--skill`` folders and
settings folders, not in ``.agents/skills``. ``--no-skills`` keeps only ``--skill`` paths and
extension paths. A skill needs a ``description``; other rule breaks are reported and the
skill still loads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.plugins.resources.locations import Found
from piko.plugins.resources.locations import agents_skill_dirs
from piko.plugins.resources.locations import first_of_each_name
from piko.resources.files import skill_files
from piko.resources.loader import ResourceRequest
from piko.resources.loader import Skill

MAX_NAME = 64
MAX_DESCRIPTION = 1024
_NAME = re.compile(r"^[a-z0-9-]+$")


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("skills", load_skills)


def name_problems(name: str, parent: str) -> list[str]:
    """What is wrong with a skill's name by the Agent Skills rules (empty when nothing)."""
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
    from piko.plugins.resources.frontmatter import FrontmatterError  # here: a start with no files skips it
    from piko.plugins.resources.frontmatter import parse_frontmatter

    try:
        fields, _body = parse_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        request.diagnostics.append(f"skill {path}: {exc.strerror or exc}")
        return None
    except FrontmatterError as exc:  # pi skips the skill with its YAML parser's message
        request.diagnostics.append(f"skill {path}: {exc}")
        return None
    description = fields.get("description")
    parent = path.parent.name
    raw_name = fields.get("name")
    name = str(raw_name) if raw_name not in (None, "") else parent
    has_description = isinstance(description, str) and bool(description.strip())
    if not has_description:
        request.diagnostics.append(f"skill {path}: description is required; skipped")
    elif len(str(description)) > MAX_DESCRIPTION:
        request.diagnostics.append(
            f"skill {path}: description exceeds {MAX_DESCRIPTION} characters ({len(str(description))})"
        )
    for problem in name_problems(name, parent):
        request.diagnostics.append(f"skill {path}: {problem}")
    if not has_description:
        return None
    return Skill(
        name=name,
        description=str(description),
        file_path=str(path),
        base_dir=str(path.parent),
        source=source,
        disable_model_invocation=fields.get("disable-model-invocation") is True,
    )


def _candidates(request: ResourceRequest) -> list[tuple[Path, str]]:
    """``(file or folder, source)`` to load skills from, in precedence order (disabled ones left out)."""
    found = Found()
    no_skills = bool(request.options.get("no_skills"))
    user_agents = Path.home() / ".agents" / "skills"

    def project_auto(cwd: Path, project_base: Path) -> list[Path]:
        files = skill_files(project_base / "skills", root_files=True)
        for folder in agents_skill_dirs(cwd):
            if os.path.abspath(folder) != os.path.abspath(user_agents):
                files.extend(skill_files(folder, root_files=False))
        return files

    if not no_skills:
        found.add_discovered(
            request,
            "skills",
            collect=lambda folder: skill_files(folder, root_files=True),
            project_auto=project_auto,
            user_auto=lambda agent: (
                skill_files(agent / "skills", root_files=True) + skill_files(user_agents, root_files=False)
            ),
        )
    # package skills are discovered ones: --no-skills turns them off
    found.add_explicit_paths(
        request, option="skill", extra_key="skill_paths", what="skill", discovery_off=no_skills
    )
    return found.ordered()


def _load(path: Path, source: str, request: ResourceRequest) -> list[Skill]:
    if path.is_dir():
        files = skill_files(path, root_files=True)
    elif path.is_file() and path.suffix == ".md":
        files = [path]
    elif path.exists():
        request.diagnostics.append(f"skill path is not a markdown file: {path}")
        return []
    else:
        return []
    return [s for s in (load_skill_file(f, source, request) for f in files) if s is not None]


def load_skills(request: ResourceRequest) -> list[Skill]:
    """Every skill found; the first of a name wins, a later one is reported; the same file
    reached twice (through a link, or a folder and a file in it) is loaded once."""
    found = (skill for path, source in _candidates(request) for skill in _load(path, source, request))
    return first_of_each_name(
        found,
        request.diagnostics,
        lambda s: f'skill "{s.name}"',
        same_file=lambda s: os.path.realpath(s.file_path),
    )
