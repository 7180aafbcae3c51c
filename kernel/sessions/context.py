"""What the model sees on a branch: pi's ``buildSessionContext`` over a root-to-leaf path of
entries (compaction, branch summaries and pi 1.6's context edits applied), and the model and
thinking level recorded there.

A damaged file may leave a tool result without the tool call it answers (the call's line could
not be read): such a result is left out, since providers reject it, and reported; a tool call
left without a result is reported too (providers are then told "No result provided").
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

import attrs

from piko.data.messages import AssistantMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.wire import blocks_from_wire
from piko.data.wire import message_from_wire
from piko.lib.records import Record
from piko.lib.records import field
from piko.sessions.entries import BranchSummaryEntry
from piko.sessions.entries import CompactionEntry
from piko.sessions.entries import ContextEditEntry
from piko.sessions.entries import CustomMessageEntry
from piko.sessions.entries import MessageEntry
from piko.sessions.entries import ModelChangeEntry
from piko.sessions.entries import SessionEntry
from piko.sessions.entries import ThinkingLevelChangeEntry
from piko.sessions.ids import ms_from_iso
from piko.sessions.reading import decode_messages

__all__ = ["ContextProblem", "ModelRef", "SessionContext", "build_session_context"]


class ContextProblem(NamedTuple):
    """Something on the branch the context had to leave out or could not pair, by entry."""

    entry_id: str
    message: str


class ModelRef(NamedTuple):
    """The model recorded on a branch: ``provider, model_id = ref`` works."""

    provider: str
    model_id: str


class SessionContext(Record, kw_only=False):
    """What the model sees on the current branch, and the model and thinking level recorded there."""

    messages: list[Any] = field(factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None


def _context_messages(
    entry: SessionEntry, out: list[Any], problems: list[ContextProblem], sources: list[str]
) -> None:
    """Append the message ``entry`` stands for (if any) to ``out`` and its entry id to ``sources``."""
    count = len(out)
    if isinstance(entry, MessageEntry):
        try:
            out.append(entry.message)
        except Exception as exc:  # a line cut short or a message the data model rejects
            problems.append(ContextProblem(entry.id, f"unreadable message skipped ({exc})"))
    elif isinstance(entry, CustomMessageEntry):
        out.append(
            CustomMessage(
                custom_type=entry.custom_type,
                content=entry.content,
                display=entry.display,
                details=entry.details,
                timestamp=ms_from_iso(entry.timestamp) or 0,
            )
        )
    elif isinstance(entry, BranchSummaryEntry) and entry.summary:
        out.append(
            BranchSummaryMessage(
                summary=entry.summary, from_id=entry.from_id, timestamp=ms_from_iso(entry.timestamp) or 0
            )
        )
    if len(out) > count:
        sources.append(entry.id)


def _compaction_messages(entry: SessionEntry, out: list[Any], sources: list[str]) -> None:
    """The messages a compaction stands for: pi 1.6's prompt checkpoint (if any), then the summary."""
    assert isinstance(entry, CompactionEntry)
    checkpoint = entry.system_message
    if checkpoint is not None:
        out.append(message_from_wire(checkpoint))
        sources.append(entry.id)
    out.append(
        CompactionSummaryMessage(
            summary=entry.summary,
            tokens_before=entry.tokens_before,
            timestamp=ms_from_iso(entry.timestamp) or 0,
        )
    )
    sources.append(entry.id)


_EDITABLE = (UserMessage, AssistantMessage, ToolResultMessage, CustomMessage)


def _apply_edit(
    edit: ContextEditEntry, messages: list[Any], start: int, problems: list[ContextProblem]
) -> None:
    """Replace the content of ``messages[start:]`` (one entry's) as pi 1.6's ``context_edit`` says."""
    content = edit.replacement_content
    if not isinstance(content, (str, list)):
        problems.append(ContextProblem(edit.id, "context edit without a replacement content; ignored"))
        return
    for index in range(start, len(messages)):
        message = messages[index]
        if not isinstance(message, _EDITABLE):
            continue
        if isinstance(content, list):
            new_content: Any = blocks_from_wire(content)
        elif isinstance(message, (AssistantMessage, ToolResultMessage)):
            new_content = [TextContent(text=content)]  # those roles need blocks
        else:
            new_content = content
        messages[index] = attrs.evolve(message, content=new_content)


def _pair_tool_results(messages: list[Any], sources: list[str], problems: list[ContextProblem]) -> list[Any]:
    """``messages`` without the tool results that answer no tool call of the latest assistant
    message before them (or answer one a second time). Calls left unanswered when the next
    assistant or user message comes are reported; those of the last turn are not (its tools may
    still be running)."""
    kept: list[Any] = []
    open_calls: dict[str, tuple[str, ToolCall]] = {}  # call id -> (entry id, call)

    def report_unanswered() -> None:
        for entry_id, call in open_calls.values():
            problems.append(
                ContextProblem(
                    entry_id,
                    f"tool call {call.id} ({call.name}) has no result; the model is told "
                    '"No result provided"',
                )
            )
        open_calls.clear()

    for message, entry_id in zip(messages, sources, strict=True):
        if isinstance(message, AssistantMessage):
            report_unanswered()
            if message.stop_reason not in ("error", "aborted"):  # those are never sent
                for block in message.content:
                    if isinstance(block, ToolCall):
                        open_calls[block.id] = (entry_id, block)
        elif isinstance(message, UserMessage):
            report_unanswered()  # a new user turn: providers are told "No result provided" here
        elif isinstance(message, ToolResultMessage):
            if open_calls.pop(message.tool_call_id, None) is None:
                problems.append(
                    ContextProblem(
                        entry_id,
                        f"tool result for call {message.tool_call_id} ({message.tool_name}) follows "
                        "no tool call of that id; left out of the context",
                    )
                )
                continue
        kept.append(message)
    return kept


def build_session_context(
    path: list[SessionEntry], problems: list[ContextProblem] | None = None
) -> SessionContext:
    """pi's ``buildSessionContext`` over a root-to-leaf path of entries.

    The latest ``thinking_level_change`` gives the thinking level; the latest ``model_change`` or
    assistant message the model. With a compaction on the path, the context is its summary, the
    entries from ``firstKeptEntryId`` up to it (system messages left out: pi 1.6's checkpoint in
    the compaction stands for them), then everything after it. pi 1.6's ``context_edit`` entries
    on that list remove or replace what their target gives (the latest edit of a target wins).
    System-role messages (pi 1.6's prompt record) stay in the list, as in pi; providers never get
    them (:func:`piko.engine.llm_messages.convert_to_llm` drops roles it does not send). Only the
    messages that end up in the context are parsed. Unreadable messages and tool results that answer no
    tool call are left out, and with unanswered tool calls added to ``problems``.
    """
    problems = problems if problems is not None else []
    thinking_level = "off"
    model: ModelRef | None = None
    compaction_index = -1
    found_level = found_model = False
    for index in range(len(path) - 1, -1, -1):
        entry = path[index]
        if not found_level and isinstance(entry, ThinkingLevelChangeEntry):
            thinking_level = entry.thinking_level
            found_level = True
        elif not found_model and isinstance(entry, ModelChangeEntry):
            model = ModelRef(entry.provider, entry.model_id)
            found_model = True
        elif not found_model and isinstance(entry, MessageEntry) and entry.role == "assistant":
            try:
                message = entry.message
            except Exception:
                continue
            model = ModelRef(getattr(message, "provider", ""), getattr(message, "model", ""))
            found_model = True
        elif compaction_index < 0 and isinstance(entry, CompactionEntry):
            compaction_index = index
        if found_level and found_model and compaction_index >= 0:
            break

    messages: list[Any] = []
    sources: list[str] = []  # the entry id of each message
    if compaction_index >= 0:
        compaction = path[compaction_index]
        assert isinstance(compaction, CompactionEntry)
        first_kept = compaction.first_kept_entry_id
        kept: list[SessionEntry] = []
        keeping = False
        for entry in path[:compaction_index]:
            if entry.id == first_kept:
                keeping = True
            # pi 1.6: the compaction's own prompt checkpoint stands for the system messages it kept
            if keeping and not (isinstance(entry, MessageEntry) and entry.role == "system"):
                kept.append(entry)
        context_entries = [compaction, *kept, *path[compaction_index + 1 :]]
    else:
        context_entries = path
    decode_messages(context_entries)  # lines left on disk: read in runs, not one by one
    edits = {e.target_id: e for e in context_entries if isinstance(e, ContextEditEntry)}  # the latest wins
    for index, entry in enumerate(context_entries):
        edit = edits.get(entry.id) if edits else None
        if edit is not None and edit.removes:
            continue
        count = len(messages)
        if index == 0 and compaction_index >= 0:
            _compaction_messages(entry, messages, sources)
        else:
            _context_messages(entry, messages, problems, sources)
        if edit is not None and len(messages) > count:
            _apply_edit(edit, messages, count, problems)
    messages = _pair_tool_results(messages, sources, problems)
    return SessionContext(messages, thinking_level, model)
