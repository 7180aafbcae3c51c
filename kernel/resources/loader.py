"""Resource types (context files, skills, prompt templates, themes) and their loading through plugins.

Resource plugins register loaders per kind with ``piko_register_resource_loaders``; each loader
gets a :class:`ResourceRequest` and returns resources of its kind. :func:`load_resources`
calls them all and returns a :class:`Resources` bundle the session uses for the system prompt,
``/skill:name`` and ``/template`` expansion, and themes.
"""

from __future__ import annotations

from typing import Any

from piko.lib.records import Record
from piko.lib.records import field

KINDS = ("context_files", "skills", "prompt_templates", "themes", "system_prompts")


class ContextFile(Record):
    """An ``AGENTS.md``/``CLAUDE.md`` file included in the system prompt."""

    path: str
    content: str


class Skill(Record):
    """A ``SKILL.md`` (or ``*.md``) skill: listed in the system prompt, expanded by ``/skill:name``."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source: str = "user"  # user | project | path | package
    disable_model_invocation: bool = False


class PromptTemplate(Record):
    """A ``prompts/*.md`` template, run as ``/name args``."""

    name: str
    description: str
    content: str
    file_path: str
    source: str = "user"
    argument_hint: str | None = None  # front matter ``argument-hint``, shown before the description


class Theme(Record):
    """A JSON colour theme."""

    name: str
    path: str | None
    data: dict[str, Any] = field(factory=dict)
    source: str = "user"


class SystemPromptFiles(Record):
    """``SYSTEM.md`` (replaces the default prompt) and ``APPEND_SYSTEM.md`` texts found."""

    system: str | None = None
    append: list[str] = field(factory=list)


class ResourceRequest(Record):
    """What a loader needs: where to look and what the user asked for."""

    cwd: str
    agent_dir: str
    settings: Any
    options: dict[str, Any] = field(factory=dict)  # CLI options (skill, prompt_template, theme, no_* flags)
    extra_paths: dict[str, list[str]] = field(factory=dict)  # from resources_discover: skill_paths, ...
    extra_sources: dict[str, str] = field(factory=dict)  # extra path -> the plugin that named it
    project_trusted: bool = True
    diagnostics: list[str] = field(factory=list)


class Resources(Record):
    """Everything loaded, by kind."""

    context_files: list[ContextFile] = field(factory=list)
    skills: list[Skill] = field(factory=list)
    prompt_templates: list[PromptTemplate] = field(factory=list)
    themes: list[Theme] = field(factory=list)
    system_prompts: SystemPromptFiles = field(factory=SystemPromptFiles)
    diagnostics: list[str] = field(factory=list)


def load_resources(app: Any, request: ResourceRequest) -> Resources:
    """Run every registered loader; a failing loader is reported and skipped."""
    bundle = Resources()
    for kind in KINDS:
        for loader in app.registries.resource_loaders(kind):
            try:
                found = loader.resolved("loader")(request)
            except Exception as exc:
                bundle.diagnostics.append(f"resource loader '{loader.plugin}' ({kind}) failed: {exc}")
                continue
            if kind == "system_prompts":
                if isinstance(found, SystemPromptFiles):
                    bundle.system_prompts.system = found.system or bundle.system_prompts.system
                    bundle.system_prompts.append.extend(found.append)
                continue
            target = getattr(bundle, kind)
            seen = {getattr(item, "name", getattr(item, "path", None)) for item in target}
            for item in found or []:
                key = getattr(item, "name", getattr(item, "path", None))
                if key in seen:
                    bundle.diagnostics.append(
                        f"{kind[:-1].replace('_', ' ')} '{key}' is defined twice; keeping the first"
                    )
                    continue
                seen.add(key)
                target.append(item)
    bundle.diagnostics.extend(request.diagnostics)
    return bundle
