"""The system prompt's inputs, and the call that builds it from them.

The text itself is a plugin's (``piko_build_system_prompt``; the built-in
``resources.default-prompt`` writes pi's layout). With no plugin answering, the prompt is the
plain frame every prompt shares: the custom prompt, appended text, context files, the date and
the working directory.
"""

from __future__ import annotations

import datetime
from typing import Any

from piko.lib.records import Record
from piko.lib.records import field
from piko.resources.loader import ContextFile
from piko.resources.loader import Skill


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


class SessionSystemPrompt:
    """A session's system prompt: rebuilt when its tools or resources change, and replaced for
    one prompt's turns when ``before_agent_start`` handlers answer with a prompt of their own.

    ``custom`` (``--system-prompt``) wins over the project's ``SYSTEM.md``; ``append``
    (``--append-system-prompt``) replaces ``APPEND_SYSTEM.md``, as in pi.
    """

    def __init__(self, pm: Any, custom: str | None, append: list[str]) -> None:
        self._pm = pm
        self._custom = custom
        self._append = append
        self.options = SystemPromptOptions(cwd="")
        """What :attr:`base` was built from (``before_agent_start`` handlers see it)."""
        self.base = ""
        """The prompt of the tools and resources, with no handler's replacement."""
        self.override: str | None = None
        """The replacement ``before_agent_start`` handlers gave for this prompt's turns."""

    def rebuild(self, cwd: str, tools: list[Any], resources: Any) -> None:
        """Build :attr:`base` again from the active ``tools`` and the ``resources``."""
        self.options = options_for_tools(
            cwd,
            tools,
            custom_prompt=self._custom or resources.system_prompts.system,
            append=list(self._append) or list(resources.system_prompts.append),
            context_files=list(resources.context_files),
            skills=list(resources.skills),
        )
        self.base = build_system_prompt(self.options, self._pm)

    @property
    def current(self) -> str:
        """The prompt the next request sends."""
        return self.override or self.base
