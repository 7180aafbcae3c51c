"""The instructions given to the summarizing model (piko's wording of pi's summary structure).

Every summary uses the same sections, so a later compaction can update an earlier summary and
pi and piko can read each other's: Goal, Constraints & Preferences, Progress (Done, In
Progress, Blocked), Key Decisions, Next Steps and Critical Context. The wording is package data,
``prompts.toml`` beside this module, read once on the first import (when a compaction or branch
summary is first made).
"""

from __future__ import annotations

from typing import Any


def _texts() -> dict[str, Any]:
    """The prompt texts of ``prompts.toml`` (package data beside this module)."""
    import tomllib
    from importlib import resources

    return tomllib.loads(
        resources.files("piko.plugins.compaction").joinpath("prompts.toml").read_text(encoding="utf-8")
    )


_TEXTS = _texts()


def _structured(name: str) -> str:
    """Prompt ``name``'s request, then the summary format with its placeholders in the sections,
    then the closing advice; the Critical Context section only where the prompt fills it."""
    placeholders = dict(_TEXTS[name])
    request = placeholders.pop("request")
    critical = placeholders.pop("critical", None)
    placeholders["critical"] = "" if critical is None else _TEXTS["critical"].format(critical=critical)
    body = _TEXTS["format"].format(**placeholders)
    return f"{request}\n\nAnswer in exactly this format:\n\n{body}\n\n{_TEXTS['closing']}"


SYSTEM_PROMPT: str = _TEXTS["system"]
SUMMARY_PROMPT = _structured("summary")
UPDATE_PROMPT = _structured("update")
TURN_PREFIX_PROMPT: str = _TEXTS["turn_prefix"]
BRANCH_PROMPT = _structured("branch")

# Put before a branch summary in the session, so the model knows where it comes from.
BRANCH_PREAMBLE = (
    "Before coming back here, the user followed another branch of this conversation.\n"
    "What happened there:\n\n"
)

# Joins the history summary and the summary of the first part of a split turn.
SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Start of the current turn (summarized, the rest is kept):**\n\n"

NO_EARLIER_HISTORY = "No earlier history."
NO_BRANCH_CONTENT = "No content to summarize"


def with_focus(prompt: str, custom_instructions: str | None) -> str:
    """``prompt`` with the user's own instructions (``/compact focus on X``) appended."""
    if not custom_instructions:
        return prompt
    return f"{prompt}\n\nGive particular attention to: {custom_instructions}"
