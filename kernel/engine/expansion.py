"""Expanding ``/skill:name args`` and ``/template args`` into the text sent to the model."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piko.lib.text import normalize_newlines

_POSITIONAL = re.compile(r"\$(\d+)")
_SLICE = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}")


def parse_command_args(text: str) -> list[str]:
    """Split arguments on blanks; single or double quotes group words."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
            else:
                current += ch
        elif ch in "\"'":
            quote = ch
        elif ch in " \t":
            if current:
                args.append(current)
                current = ""
        else:
            current += ch
    if current:
        args.append(current)
    return args


def substitute_args(content: str, args: list[str]) -> str:
    """``$1``.., ``${@:N}``/``${@:N:L}``, ``$ARGUMENTS`` and ``$@`` (arguments are not re-substituted)."""

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return args[index] if 0 <= index < len(args) else ""

    def sliced(match: re.Match[str]) -> str:
        start = max(int(match.group(1)) - 1, 0)
        if match.group(2) is not None:
            return " ".join(args[start : start + int(match.group(2))])
        return " ".join(args[start:])

    result = _POSITIONAL.sub(positional, content)
    result = _SLICE.sub(sliced, result)
    joined = " ".join(args)
    return result.replace("$ARGUMENTS", joined).replace("$@", joined)


def expand_prompt_template(text: str, templates: list[Any]) -> str:
    """``/name args`` -> the template's content with arguments substituted; other text unchanged."""
    if not text.startswith("/"):
        return text
    name, _, rest = text[1:].partition(" ")
    template = next((t for t in templates if t.name == name), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(rest))


def strip_frontmatter(text: str) -> str:
    """The body of a markdown file after a leading ``---`` front matter block (trimmed when there is one)."""
    normalized = normalize_newlines(text)
    if normalized.startswith("---"):
        end = normalized.find("\n---", 3)
        if end != -1:
            return normalized[end + 4 :].strip()
    return normalized


def expand_skill_command(
    text: str, skills: list[Any], on_error: Callable[[Any, OSError], None] | None = None
) -> str:
    """``/skill:name args`` -> a ``<skill>`` block with the skill file's body, then the arguments.

    Unknown names and unreadable files leave the text as it is; ``on_error(skill, error)`` hears
    of an unreadable one (pi reports it as a ``skill_expansion`` extension error). As in pi this
    works whatever ``enableSkillCommands`` says: that setting only decides whether skills are
    offered as commands (completion, command lists).
    """
    if not text.startswith("/skill:"):
        return text
    name, _, rest = text[len("/skill:") :].partition(" ")
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    try:
        body = strip_frontmatter(Path(skill.file_path).read_text(encoding="utf-8", errors="replace")).strip()
    except OSError as exc:
        if on_error is not None:
            on_error(skill, exc)
        return text
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    args = rest.strip()
    return f"{block}\n\n{args}" if args else block
