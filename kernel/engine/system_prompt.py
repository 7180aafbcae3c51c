"""The system prompt's inputs, and the call that builds it from them.

The text itself is a plugin's (``piko_build_system_prompt``; the built-in
``resources.default-prompt`` writes pi's layout). With no plugin answering, the prompt is the
plain frame every prompt shares: the custom prompt, appended text, context files, the date and
the working directory.
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


def build_system_prompt(
    options: SystemPromptOptions, pm: Any = None, today: datetime.date | None = None
) -> str:
    """The system prompt: the first plugin's answer to ``piko_build_system_prompt``, else the plain frame."""
    if pm is not None:
        built = pm.hook.piko_build_system_prompt(options=options, today=today)
        if isinstance(built, str):
            return built
    return plain_prompt(options, today)


def plain_prompt(options: SystemPromptOptions, today: datetime.date | None = None) -> str:
    """The frame alone: custom prompt, appended text, context files, date, working directory."""
    parts = [p for p in (options.custom_prompt or "", *options.append) if p]
    prompt = "\n\n".join(parts)
    if options.context_files:
        prompt += "\n\n# Project Context\n\n"
        for context in options.context_files:
            prompt += f"## {context.path}\n\n{context.content}\n\n"
    date = (today or datetime.date.today()).isoformat()
    return prompt + f"\nCurrent date: {date}\nCurrent working directory: {options.cwd.replace(chr(92), '/')}"


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
