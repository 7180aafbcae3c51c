"""What the model sees on a branch: pi's ``buildSessionContext`` over a root-to-leaf path of
entries (compaction and branch summaries applied), and the model and thinking level recorded there."""

from __future__ import annotations

from typing import Any, NamedTuple

from piko.messages import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from piko.records import Record, field
from piko.session_entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
    ms_from_iso,
)

__all__ = ["ModelRef", "SessionContext", "build_session_context"]


class ModelRef(NamedTuple):
    """The model recorded on a branch: ``provider, model_id = ref`` works."""

    provider: str
    model_id: str


class SessionContext(Record, kw_only=False):
    """What the model sees on the current branch, and the model and thinking level recorded there."""

    messages: list[Any] = field(factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None


def _context_messages(entry: SessionEntry, out: list[Any], problems: list[str]) -> None:
    if isinstance(entry, MessageEntry):
        try:
            out.append(entry.message)
        except Exception as exc:  # a line cut short or a message the data model rejects
            problems.append(f"entry {entry.id}: unreadable message skipped ({exc})")
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


def build_session_context(path: list[SessionEntry], problems: list[str] | None = None) -> SessionContext:
    """pi's ``buildSessionContext`` over a root-to-leaf path of entries.

    The latest ``thinking_level_change`` gives the thinking level; the latest ``model_change`` or
    assistant message the model. With a compaction on the path, the context is its summary, the
    entries from ``firstKeptEntryId`` up to it, then everything after it. Only the messages
    that end up in the context are parsed.
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
    if compaction_index >= 0:
        compaction = path[compaction_index]
        assert isinstance(compaction, CompactionEntry)
        messages.append(
            CompactionSummaryMessage(
                summary=compaction.summary,
                tokens_before=compaction.tokens_before,
                timestamp=ms_from_iso(compaction.timestamp) or 0,
            )
        )
        first_kept = compaction.first_kept_entry_id
        keeping = False
        for entry in path[:compaction_index]:
            if entry.id == first_kept:
                keeping = True
            if keeping:
                _context_messages(entry, messages, problems)
        for entry in path[compaction_index + 1 :]:
            _context_messages(entry, messages, problems)
    else:
        for entry in path:
            _context_messages(entry, messages, problems)
    return SessionContext(messages, thinking_level, model)
