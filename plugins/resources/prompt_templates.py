"""Prompt templates: ``*.md`` files in ``~/.pi/agent/prompts`` and ``.pi/prompts``, run as ``/name args``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.paths import expand_user
from piko.plugins.resources.frontmatter import parse_frontmatter
from piko.resources import PromptTemplate, ResourceRequest


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("prompt_templates", load_prompt_templates)


def load_template_file(path: Path, source: str) -> PromptTemplate | None:
    """A template: its name is the file name; its description the front matter's or the first line."""
    try:
        fields, body = parse_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    description = fields.get("description") or ""
    if not description:
        first = next((line for line in body.split("\n") if line.strip()), "")
        description = first[:60] + ("..." if len(first) > 60 else "")
    return PromptTemplate(
        name=path.stem, description=str(description), content=body, file_path=str(path), source=source
    )


def _from_path(path: Path, source: str, request: ResourceRequest) -> list[PromptTemplate]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".md" and p.is_file())
    elif path.is_file():
        files = [path]
    else:
        if source == "path":
            request.diagnostics.append(f"prompt template path not found: {path}")
        return []
    return [t for t in (load_template_file(f, source) for f in files) if t is not None]


def load_prompt_templates(request: ResourceRequest) -> list[PromptTemplate]:
    cwd = Path(request.cwd)
    agent = Path(request.agent_dir)

    def resolve(value: str, base: Path) -> Path:
        p = Path(expand_user(value))
        return p if p.is_absolute() else base / p

    locations: list[tuple[Path, str]] = []
    if not request.options.get("no_prompt_templates"):
        locations.append((agent / "prompts", "user"))
        locations.append((cwd / ".pi" / "prompts", "project"))
        for value in (request.settings.global_data.get("prompts") or []) if request.settings else []:
            locations.append((resolve(str(value), agent), "user"))
        for value in (request.settings.project_data.get("prompts") or []) if request.settings else []:
            locations.append((resolve(str(value), cwd / ".pi"), "project"))
        locations.extend((Path(p), "path") for p in request.extra_paths.get("prompt_paths", []))
    locations.extend((resolve(str(p), cwd), "path") for p in request.options.get("prompt_template") or ())
    templates: list[PromptTemplate] = []
    names: set[str] = set()
    for path, source in locations:
        for template in _from_path(path, source, request):
            if template.name in names:
                continue
            names.add(template.name)
            templates.append(template)
    return templates
