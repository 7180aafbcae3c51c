"""Summaries of the branch the user leaves when moving elsewhere in the session tree (``/tree``).

The newest messages of the branch are taken first, up to the model's context window less
``branchSummary.reserveTokens``; tool results are left out (their calls say enough). File
lists accumulate: those of summaries already on the branch are carried into the new one.
"""

from __future__ import annotations

from typing import Any

from attrs import define
from attrs import field

from piko.data.tokens import estimate_message_tokens
from piko.plugins.compaction import prompts
from piko.plugins.compaction.file_ops import FileOps
from piko.plugins.compaction.file_ops import format_file_lists
from piko.plugins.compaction.prepare import entry_message
from piko.plugins.compaction.summarize import Summarizer
from piko.plugins.compaction.summarize import SummaryAborted
from piko.plugins.compaction.summarize import conversation_prompt

DEFAULT_CONTEXT_WINDOW = 128000
DEFAULT_RESERVE_TOKENS = 16384
BRANCH_SUMMARY_MAX_TOKENS = 2048


@define
class BranchEntries:
    """The messages of a branch to summarize (oldest first), their files and their size."""

    messages: list[Any] = field(factory=list)
    file_ops: FileOps = field(factory=FileOps)
    tokens: int = 0


def _branch_message(entry: Any) -> Any:
    if getattr(entry, "type", "") == "message" and getattr(entry, "role", "") == "toolResult":
        return None
    return entry_message(entry, with_compactions=True)


def prepare_branch_entries(entries: list[Any], token_budget: int = 0) -> BranchEntries:
    """The newest messages of ``entries`` that fit ``token_budget`` (0: no limit), and the files seen.

    A summary entry that does not fit is still taken while less than 90% of the budget is used:
    it stands for a lot of history in little space.
    """
    prepared = BranchEntries()
    for entry in entries:
        kind = getattr(entry, "type", "")
        if kind in ("branch_summary", "compaction") and not entry.from_hook:
            prepared.file_ops.add_details(entry.details)
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        prepared.file_ops.add_message(message)
        tokens = estimate_message_tokens(message)
        if token_budget > 0 and prepared.tokens + tokens > token_budget:
            is_summary = getattr(entry, "type", "") in ("compaction", "branch_summary")
            if is_summary and prepared.tokens < token_budget * 0.9:
                prepared.messages.insert(0, message)
                prepared.tokens += tokens
            break
        prepared.messages.insert(0, message)
        prepared.tokens += tokens
    return prepared


def branch_instructions(custom_instructions: str | None, replace_instructions: bool) -> str:
    """The summarizer's instructions: the user's own in place of the default ones, added to them, or none."""
    if replace_instructions and custom_instructions:
        return custom_instructions
    return prompts.with_focus(prompts.BRANCH_PROMPT, custom_instructions)


async def summarize_branch(
    entries: list[Any],
    summarizer: Summarizer,
    *,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
) -> dict[str, Any]:
    """``{"summary", "details": {"readFiles", "modifiedFiles"}}`` for the branch ``entries``."""
    window = summarizer.model.context_window or DEFAULT_CONTEXT_WINDOW
    prepared = prepare_branch_entries(entries, window - reserve_tokens)
    read_files, modified_files = prepared.file_ops.lists()
    details = {"readFiles": read_files, "modifiedFiles": modified_files}
    if not prepared.messages:
        return {"summary": prompts.NO_BRANCH_CONTENT, "details": details}
    prompt = conversation_prompt(
        prepared.messages, branch_instructions(custom_instructions, replace_instructions)
    )
    try:
        text = await summarizer.complete(
            prompt, max_tokens=BRANCH_SUMMARY_MAX_TOKENS, failure="Branch summarization failed"
        )
    except SummaryAborted:
        raise SummaryAborted("Branch summarization cancelled") from None
    summary = prompts.BRANCH_PREAMBLE + text + format_file_lists(read_files, modified_files)
    return {"summary": summary, "details": details}
