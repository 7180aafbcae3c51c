"""The system prompt: who the agent is, its tools and guidelines, project context, skills, date and cwd.

pi's structure in piko's own words. A custom prompt (``--system-prompt`` or ``SYSTEM.md``)
replaces the opening part; appended text (``--append-system-prompt``, else ``APPEND_SYSTEM.md``),
context files, skills (only when ``read`` is active) and the date and working directory follow
in either case.
"""

from __future__ import annotations

import datetime
from typing import Any

from piko.lib.records import Record, field
from piko.resources.loader import ContextFile, Skill


class SystemPromptOptions(Record):
    """Everything the prompt is built from (handed to ``before_agent_start`` handlers too)."""

    cwd: str
    tool_names: list[str] = field(factory=list)
    tool_snippets: dict[str, str] = field(factory=dict)
    tool_guidelines: list[str] = field(factory=list)
    custom_prompt: str | None = None
    append: list[str] = field(factory=list)
    context_files: list[ContextFile] = field(factory=list)
    skills: list[Skill] = field(factory=list)
    docs_path: str | None = None


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


def build_system_prompt(options: SystemPromptOptions, today: datetime.date | None = None) -> str:
    """The full system prompt text."""
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
        if options.docs_path:
            prompt += (
                "\n\npiko documentation (read it only when the user asks about piko itself: plugins, "
                f"extensions, providers, themes, skills, sessions):\n- {options.docs_path}"
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


def one_line(text: str | None) -> str | None:
    """A tool's snippet on one line (runs of blanks and line breaks become one space)."""
    if not text:
        return None
    return " ".join(text.split()) or None


def options_for_tools(cwd: str, tools: list[Any], **kwargs: Any) -> SystemPromptOptions:
    """Prompt options from active tool definitions (snippets and guidelines come from the tools)."""
    snippets = {t.name: line for t in tools if (line := one_line(t.prompt_snippet))}
    guidelines = [g for t in tools for g in (t.prompt_guidelines or []) if isinstance(g, str)]
    return SystemPromptOptions(
        cwd=cwd,
        tool_names=[t.name for t in tools],
        tool_snippets=snippets,
        tool_guidelines=guidelines,
        **kwargs,
    )
