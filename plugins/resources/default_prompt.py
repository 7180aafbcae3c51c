"""The default system prompt: who the agent is, its tools and guidelines, piko's docs, project
context, skills, date and working directory, laid out as pi lays out its own (in our words).

A custom prompt (``--system-prompt`` or ``SYSTEM.md``) replaces the opening part; appended text
(``--append-system-prompt``, else ``APPEND_SYSTEM.md``), context files, skills (only when
``read`` is active) and the date and working directory follow in either case. Blocking this
plugin leaves the kernel's plain prompt (the custom prompt, appended text, context files, date
and directory).
"""

from __future__ import annotations

import datetime
import functools

from piko import hookimpl
from piko.engine.system_prompt import SystemPromptOptions
from piko.resources.loader import Skill


@hookimpl
def piko_build_system_prompt(options: SystemPromptOptions, today: datetime.date | None) -> str:
    return build(options, today)


@functools.cache
def docs_path() -> str | None:
    """Where piko's user documentation is installed (shipped as the ``piko.docs`` package)."""
    import importlib.util  # not importlib.resources: it costs 3 ms of imports a start-up
    import os

    try:
        spec = importlib.util.find_spec("piko.docs")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    folder = os.path.dirname(spec.origin)
    return folder if os.path.isfile(os.path.join(folder, "README.md")) else None


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def skills_section(skills: list[Skill]) -> str:
    """The skills block: name, description and file of each skill the model may load."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "\n\nSkills below hold specialised instructions for particular tasks.",
        "When a task matches a skill's description, read its file with the read tool first.",
        "Relative paths inside a skill file are relative to the skill's own directory; use absolute paths in tool calls.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{_escape(skill.name)}</name>",
            f"    <description>{_escape(skill.description)}</description>",
            f"    <location>{_escape(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _guidelines(options: SystemPromptOptions) -> list[str]:
    tools = set(options.tool_names)
    out: list[str] = []

    def add(text: str) -> None:
        text = text.strip()
        if text and text not in out:
            out.append(text)

    explorers = tools & {"grep", "find", "ls"}
    if "bash" in tools and not explorers:
        add("Use bash for file operations like ls, rg, find")
    elif "bash" in tools:
        add(
            "Prefer the grep, find and ls tools over bash for exploring files (faster, and they respect .gitignore)"
        )
    for guideline in options.tool_guidelines:
        add(guideline)
    add("Keep answers short and to the point")
    add("Name file paths clearly when you work with files")
    return out


def build(options: SystemPromptOptions, today: datetime.date | None = None) -> str:
    """The full system prompt text, as pi lays it out."""
    date = (today or datetime.date.today()).isoformat()
    cwd = options.cwd.replace("\\", "/")
    if options.custom_prompt:
        prompt = options.custom_prompt
    else:
        visible = [n for n in options.tool_names if options.tool_snippets.get(n)]
        tool_list = "\n".join(f"- {n}: {options.tool_snippets[n]}" for n in visible) or "(none)"
        guidelines = "\n".join(f"- {g}" for g in _guidelines(options))
        prompt = (
            "You are an expert coding assistant working inside piko, a coding agent harness. "
            "You help users by reading files, running commands, editing code and writing new files.\n\n"
            f"Available tools:\n{tool_list}\n\n"
            "Other tools may also be available, depending on the project.\n\n"
            f"Guidelines:\n{guidelines}"
        )
        docs = docs_path()
        if docs:
            prompt += (
                "\n\npiko documentation (read it only when the user asks about piko itself: plugins, "
                f"extensions, providers, themes, skills, sessions):\n- {docs}"
            )
    appended = "\n\n".join(options.append)
    if appended:
        prompt += "\n\n" + appended
    if options.context_files:
        prompt += "\n\n# Project Context\n\nInstructions and guidelines for this project:\n\n"
        for context in options.context_files:
            prompt += f"## {context.path}\n\n{context.content}\n\n"
    if "read" in options.tool_names and options.skills:
        prompt += skills_section(options.skills)
    prompt += f"\nCurrent date: {date}"
    prompt += f"\nCurrent working directory: {cwd}"
    return prompt
