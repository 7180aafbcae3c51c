"""What a compaction keeps and what it summarizes: the cut point over the branch's entries.

Walking back from the newest entry, message sizes are added up until ``keepRecentTokens`` (fitted
to the model's context window by :func:`piko.engine.compaction.fitted_budgets`, and after an
overflow at most half of the messages) is reached; the history is cut at the nearest entry from there on where a cut is allowed (a user,
assistant, shell-run, custom or summary message, never a tool result, which must stay with
its call). Settings and model changes just before the cut stay with the kept part. A cut
inside a turn (a turn too large to keep whole) splits it: the start of that turn is
summarized on its own. After an earlier compaction only what came after that compaction's
kept point is summarized, with the earlier summary given to the summarizer to update.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import define
from attrs import field

from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.tokens import context_estimate
from piko.data.tokens import estimate_message_tokens
from piko.plugins.compaction.file_ops import FileOps
from piko.sessions.entries import readable_message
from piko.sessions.ids import ms_from_iso

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000

# Message roles one may cut before (tool results never: they belong to the call before them).
_CUTTABLE_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
# Entry types that are user-role messages of their own: they may start the kept part and a turn.
_USER_LIKE_ENTRIES = frozenset({"branch_summary", "custom_message"})


def _setting_int(data: Mapping[str, Any], key: str, default: int) -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"compaction.{key} must be a non-negative number of tokens, not {value!r}")
    return int(value)


@define(kw_only=True)
class CompactionSettings:
    """The ``compaction`` settings (pi's ``CompactionSettings``), defaults filled in."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> CompactionSettings:
        """From the settings object (``{"enabled", "reserveTokens", "keepRecentTokens"}``); bad values raise."""
        data = data if isinstance(data, Mapping) else {}
        return cls(
            enabled=data.get("enabled") is not False,
            reserve_tokens=_setting_int(data, "reserveTokens", DEFAULT_RESERVE_TOKENS),
            keep_recent_tokens=_setting_int(data, "keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS),
        )

    def to_wire(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@define(kw_only=True)
class CompactionPreparation:
    """What ``session_before_compact`` handlers and ``piko_compact`` get (pi's ``CompactionPreparation``).

    ``messages_to_summarize`` are the agent messages the summary replaces; with a split turn,
    ``turn_prefix_messages`` are the start of the turn that is cut, summarized apart.
    ``tokens_before`` is the estimated context size now; ``previous_summary`` the summary of
    the last compaction on the branch, which the new one updates.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[Any] = field(factory=list)
    turn_prefix_messages: list[Any] = field(factory=list)
    is_split_turn: bool = False
    tokens_before: int = 0
    previous_summary: str | None = None
    file_ops: FileOps = field(factory=FileOps)
    settings: CompactionSettings = field(factory=CompactionSettings)


@define(frozen=True)
class CutPoint:
    """Where the kept part starts (an index into the entries) and, for a split turn, where that turn starts."""

    first_kept_index: int
    turn_start_index: int  # -1 unless the cut splits a turn
    is_split_turn: bool


# ---------------------------------------------------------------------------
# Entries as messages
# ---------------------------------------------------------------------------


def entry_message(entry: Any, *, with_compactions: bool = False) -> Any:
    """The agent message an entry stands for in the context, or ``None``.

    Compaction entries are left out unless ``with_compactions`` (the summary being replaced is
    handed to the summarizer as the previous summary instead), and so are ``system`` messages
    (pi 1.6's prompt and tool records, which piko writes too): they are no conversation to
    summarize or keep.
    """
    kind = getattr(entry, "type", "")
    if kind == "message":
        return None if _role(entry) == "system" else readable_message(entry)
    timestamp = ms_from_iso(getattr(entry, "timestamp", "")) or 0
    if kind == "custom_message":
        return CustomMessage(
            custom_type=entry.custom_type,
            content=entry.content,
            display=entry.display,
            details=entry.details,
            timestamp=timestamp,
        )
    if kind == "branch_summary":
        return BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=timestamp)
    if kind == "compaction" and with_compactions:
        from piko.data.messages import CompactionSummaryMessage

        return CompactionSummaryMessage(
            summary=entry.summary, tokens_before=entry.tokens_before, timestamp=timestamp
        )
    return None


def _role(entry: Any) -> str:
    return str(getattr(entry, "role", "") or "") if getattr(entry, "type", "") == "message" else ""


# ---------------------------------------------------------------------------
# The cut point
# ---------------------------------------------------------------------------


def valid_cut_points(entries: list[Any], start: int, end: int) -> list[int]:
    """Indexes in ``[start, end)`` the kept part may start at (never a tool result)."""
    points = []
    for index in range(start, end):
        entry = entries[index]
        if _role(entry) in _CUTTABLE_ROLES or getattr(entry, "type", "") in _USER_LIKE_ENTRIES:
            points.append(index)
    return points


def find_turn_start(entries: list[Any], index: int, start: int) -> int:
    """The entry that starts the turn holding ``index`` (a user message, shell run or user-like entry), or -1."""
    for i in range(index, start - 1, -1):
        entry = entries[i]
        if getattr(entry, "type", "") in _USER_LIKE_ENTRIES or _role(entry) in ("user", "bashExecution"):
            return i
    return -1


def find_cut_point(entries: list[Any], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Where to cut ``entries[start:end]`` to keep about ``keep_recent_tokens`` of recent messages."""
    points = valid_cut_points(entries, start, end)
    if not points:
        return CutPoint(start, -1, False)
    cut = points[0]  # not enough to reach the budget: keep everything
    kept_tokens = 0
    for index in range(end - 1, start - 1, -1):
        entry = entries[index]
        if getattr(entry, "type", "") != "message":
            continue
        message = readable_message(entry)
        kept_tokens += estimate_message_tokens(message) if message is not None else 0
        if kept_tokens >= keep_recent_tokens:
            # trailing tool results larger than the budget keep their call (pi 1.6's rule)
            cut = next((p for p in points if p >= index), points[-1])
            break
    message_cut = cut
    # Settings, labels and other non-message entries just before the cut stay with the kept part.
    while cut > start:
        before = getattr(entries[cut - 1], "type", "")
        if before in ("message", "compaction"):
            break
        cut -= 1
    if _role(entries[message_cut]) == "user":
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start(entries, message_cut, start)
    if turn_start == -1 or turn_start >= cut:
        # the kept part starts a turn of its own (a shell run or a custom message)
        return CutPoint(cut, -1, False)
    return CutPoint(cut, turn_start, True)


# ---------------------------------------------------------------------------
# Preparation
# ---------------------------------------------------------------------------


def _latest_compaction_index(entries: list[Any]) -> int:
    for index in range(len(entries) - 1, -1, -1):
        if getattr(entries[index], "type", "") == "compaction":
            return index
    return -1


def _messages(entries: list[Any], start: int, end: int) -> list[Any]:
    out = []
    for index in range(start, end):
        message = entry_message(entries[index])
        if message is not None:
            out.append(message)
    return out


def context_sizes(entries: list[Any]) -> tuple[int, int]:
    """The estimated size of the context the branch builds now, and of its messages alone.

    The first counts the last reported usage (system prompt and tools included); the difference
    is the context's overhead.
    """
    from piko.sessions.context import build_session_context

    messages = build_session_context(entries).messages
    return context_estimate(messages).tokens, sum(estimate_message_tokens(m) for m in messages)


def kept_tail_tokens(
    settings: CompactionSettings, context_window: int, context: int, messages: int, *, overflow: bool
) -> int:
    """How much recent history to keep: ``keepRecentTokens`` fitted to the window (and the
    ``context - messages`` overhead); after an overflow, at most half of the ``messages``."""
    from piko.engine.compaction import fitted_budgets

    _reserve, keep = fitted_budgets(
        settings.reserve_tokens, settings.keep_recent_tokens, context_window, overhead=context - messages
    )
    return min(keep, messages // 2) if overflow else keep


def prepare_compaction(
    entries: list[Any], settings: CompactionSettings, *, context_window: int = 0, overflow: bool = False
) -> CompactionPreparation | None:
    """The preparation for compacting the branch ``entries`` (root first), or ``None``.

    ``None`` when the branch already ends with a compaction, or when nothing would be
    summarized (everything fits in the kept tail). ``context_window`` (the model's) fits the
    kept tail to it; ``overflow``: the provider refused the context as too long, so at most half
    of it is kept even when the estimate says it all fits.
    """
    if not entries or getattr(entries[-1], "type", "") == "compaction":
        return None
    previous_index = _latest_compaction_index(entries)
    previous_summary: str | None = None
    start = 0
    file_ops = FileOps()
    if previous_index >= 0:
        previous = entries[previous_index]
        previous_summary = previous.summary
        kept_id = previous.first_kept_entry_id
        kept_index = next((i for i, e in enumerate(entries) if kept_id and e.id == kept_id), -1)
        start = kept_index if kept_index >= 0 else previous_index + 1
        if not previous.from_hook:  # an extension's details may have any shape
            file_ops.add_details(previous.details)
    context, message_tokens = context_sizes(entries)
    keep = kept_tail_tokens(settings, context_window, context, message_tokens, overflow=overflow)
    cut = find_cut_point(entries, start, len(entries), keep)
    if cut.first_kept_index >= len(entries):
        return None
    first_kept_id = getattr(entries[cut.first_kept_index], "id", "")
    if not first_kept_id:
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    to_summarize = _messages(entries, start, history_end)
    prefix = _messages(entries, cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    for message in (*to_summarize, *prefix):
        file_ops.add_message(message)
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=context,
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )
