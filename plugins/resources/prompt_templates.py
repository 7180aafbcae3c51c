"""Prompt templates: ``*.md`` files run as ``/name args`` (the file name without ``.md`` is the name).

Found where pi finds them, in pi's order (the first template of a name wins, later ones are
reported): the project settings' ``prompts`` paths (folders searched recursively),
``.pi/prompts`` (not recursive), the global settings' ``prompts`` paths, ``~/.pi/agent/prompts``,
installed packages, ``--prompt-template`` paths, then paths that other ``resources_discover``
handlers (extensions) add. ``--no-prompt-templates`` keeps
only ``--prompt-template`` paths and extension paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.plugins.resources.locations import Found
from piko.plugins.resources.locations import first_of_each_name
from piko.resources.files import markdown_files
from piko.resources.loader import PromptTemplate
from piko.resources.loader import ResourceRequest


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("prompt_templates", load_prompt_templates)


def load_template_file(path: Path, source: str) -> PromptTemplate | None:
    """A template: its description is the front matter's, else its first line (60 characters)."""
    from piko.plugins.resources.frontmatter import FrontmatterError  # here: a start with no files skips it
    from piko.plugins.resources.frontmatter import parse_frontmatter

    try:
        fields, body = parse_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, FrontmatterError):  # pi skips such a template without a word
        return None
    description = fields.get("description") or ""
    if not description:
        first = next((line for line in body.split("\n") if line.strip()), "")
        description = first[:60] + ("..." if len(first) > 60 else "")
    hint = fields.get("argument-hint")
    return PromptTemplate(
        name=path.name.removesuffix(".md"),
        description=str(description),
        content=body,
        file_path=str(path),
        source=source,
        argument_hint=str(hint) if hint not in (None, "") else None,
    )


def _candidates(request: ResourceRequest) -> list[tuple[Path, str]]:
    """``(file or folder, source)`` to load templates from, in precedence order."""
    found = Found()
    disabled = bool(request.options.get("no_prompt_templates"))
    if not disabled:
        found.add_discovered(
            request,
            "prompts",
            collect=lambda folder: markdown_files(folder, recursive=True),
            project_auto=lambda _cwd, project_base: markdown_files(project_base / "prompts", recursive=False),
            user_auto=lambda agent: markdown_files(agent / "prompts", recursive=False),
        )
    found.add_explicit_paths(
        request,
        option="prompt_template",
        extra_key="prompt_paths",
        what="prompt template",
        discovery_off=disabled,
    )
    return found.ordered()


def load_prompt_templates(request: ResourceRequest) -> list[PromptTemplate]:
    """Every template found; the first of a name wins."""

    def found() -> Iterator[PromptTemplate]:
        for path, source in _candidates(request):
            if path.is_dir():
                files = markdown_files(path, recursive=False)
            elif path.is_file() and path.name.endswith(".md"):
                files = [path]
            else:
                continue
            for file in files:
                template = load_template_file(file, source)
                if template is not None:
                    yield template

    return first_of_each_name(found(), request.diagnostics, lambda t: f'prompt template "/{t.name}"')
