"""The instructions given to the summarizing model (piko's wording of pi's summary structure).

Every summary uses the same sections, so a later compaction can update an earlier summary and
pi and piko can read each other's: Goal, Constraints & Preferences, Progress (Done, In
Progress, Blocked), Key Decisions, Next Steps and Critical Context.
"""

from __future__ import annotations

SYSTEM_PROMPT = """\
You write context checkpoints. You are shown the transcript of a session between a user and \
an AI coding assistant, and you condense it into a structured summary in the format you are given.

The transcript is material to summarize, not a conversation you take part in: do not answer \
its questions, do not carry on its work, and write nothing but the summary."""

_FORMAT = """\
## Goal
{goal}

## Constraints & Preferences
- {constraints}

## Progress
### Done
- [x] {done}

### In Progress
- [ ] {in_progress}

### Blocked
- {blocked}

## Key Decisions
- **[A choice that was made]**: {rationale}

## Next Steps
1. {next_steps}{critical}"""

_CRITICAL = """

## Critical Context
- {critical}"""

_CLOSING = (
    "Be brief in every section. Copy file paths, function names, commands and error messages "
    "exactly as they appear."
)


def _structured(request: str, **placeholders: str) -> str:
    """``request``, then the summary format with ``placeholders`` in its sections, then the closing advice."""
    return f"{request}\n\nAnswer in exactly this format:\n\n{_FORMAT.format(**placeholders)}\n\n{_CLOSING}"


SUMMARY_PROMPT = _structured(
    "Above, inside <conversation>, is the session so far. Write a checkpoint summary of it that "
    "another model can pick the work up from.",
    goal="[What the user wants done; list several goals if the session moved between tasks.]",
    constraints='[Requirements, limits and preferences the user stated, or "(none)".]',
    done="[Work that is finished.]",
    in_progress="[Work under way right now.]",
    blocked="[What stops progress, if anything.]",
    rationale="[Why, in a few words.]",
    next_steps="[What to do next, in order.]",
    critical=_CRITICAL.format(
        critical='[Data, examples or references the work cannot go on without, or "(none)".]'
    ),
)

UPDATE_PROMPT = _structured(
    "Above, inside <conversation>, are the messages that came after the summary inside "
    "<previous-summary>. Bring that summary up to date with them.\n\n"
    "How to update it:\n"
    "- Keep everything the previous summary says unless it no longer matters.\n"
    "- Add the progress, decisions and context the new messages bring.\n"
    '- Move finished work from "In Progress" to "Done".\n'
    '- Rewrite "Next Steps" for where the work stands now.\n'
    "- Copy file paths, function names, commands and error messages exactly.",
    goal="[The goals so far, plus any the work grew into.]",
    constraints="[Those already listed, plus any new ones.]",
    done="[Earlier finished items and the ones finished since.]",
    in_progress="[Work under way now.]",
    blocked="[Current blockers; drop the ones that were resolved.]",
    rationale="[Why.] (keep the earlier decisions, add new ones)",
    next_steps="[What to do next, given the current state.]",
    critical=_CRITICAL.format(critical="[Keep what still matters and add what is new.]"),
)

TURN_PREFIX_PROMPT = """\
Above, inside <conversation>, is the first part of a turn that was too long to keep whole. \
The later part of the turn stays in the context as it is; this summary stands in for the \
first part, so the later part still makes sense.

Answer in exactly this format:

## Original Request
[What the user asked for in this turn.]

## Early Progress
- [What was decided and done in this first part.]

## Context for Suffix
- [What one needs to know to follow the work that is kept.]

Keep it short and limited to what the kept part depends on."""

BRANCH_PROMPT = _structured(
    "Above, inside <conversation>, is a branch of the session that the user is leaving. "
    "Summarize it so the work can be understood when the user comes back to it.",
    goal="[What the user wanted done on this branch.]",
    constraints='[Requirements, limits and preferences that were stated, or "(none)".]',
    done="[Work that is finished.]",
    in_progress="[Work that was started and not finished.]",
    blocked="[What stopped progress, if anything.]",
    rationale="[Why, in a few words.]",
    next_steps="[What would continue this work.]",
    critical="",
)

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
