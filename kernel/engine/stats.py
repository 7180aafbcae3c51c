"""Figures about a conversation: message counts, tokens and cost, context use, the last answer's text.

Pure functions of the messages (and the session branch): the session passes what it holds, the
modes turn the records into what they show or send (RPC ``get_session_stats``, ``/session``,
the footer).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.lib.records import Record
from piko.lib.records import field


class TokenTotals(Record):
    """Tokens of the assistant messages, by kind."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0


class ContextUsage(Record):
    """Estimated tokens in context against the model's window.

    ``tokens`` and ``percent`` are None after a compaction until a response measures the context.
    """

    tokens: int | None
    context_window: int
    percent: float | None


class SessionStats(Record):
    """Message counts, tokens and cost of the conversation in context (pi's ``getSessionStats``)."""

    session_file: str | None
    session_id: str
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    total_messages: int = 0
    tokens: TokenTotals = field(factory=TokenTotals)
    cost: float = 0
    context_usage: ContextUsage | None = None


def session_stats(
    messages: list[Any],
    *,
    session_file: str | None,
    session_id: str,
    context_usage: ContextUsage | None,
    usage_entries: Sequence[Any] = (),
) -> SessionStats:
    """The statistics of ``messages``, with the tokens and cost of pi 1.6's ``usage`` entries
    (``usage_entries``: their wire ``usage`` objects) added, as pi 1.6 counts them."""
    stats = SessionStats(
        session_file=session_file,
        session_id=session_id,
        total_messages=len(messages),
        context_usage=context_usage,
    )
    tokens = stats.tokens
    for message in messages:
        if isinstance(message, UserMessage):
            stats.user_messages += 1
        elif isinstance(message, AssistantMessage):
            stats.assistant_messages += 1
            stats.tool_calls += sum(1 for b in message.content if isinstance(b, ToolCall))
            usage = message.usage
            tokens.input += usage.input
            tokens.output += usage.output
            tokens.cache_read += usage.cache_read
            tokens.cache_write += usage.cache_write
            stats.cost += usage.cost.total
        elif isinstance(message, ToolResultMessage):
            stats.tool_results += 1
    for usage in usage_entries:
        if not isinstance(usage, dict):
            continue
        tokens.input += _count(usage.get("input"))
        tokens.output += _count(usage.get("output"))
        tokens.cache_read += _count(usage.get("cacheRead"))
        tokens.cache_write += _count(usage.get("cacheWrite"))
        cost = usage.get("cost")
        if isinstance(cost, dict):
            total = cost.get("total")
            if isinstance(total, (int, float)) and not isinstance(total, bool):
                stats.cost += total
    tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write
    return stats


def _count(value: Any) -> int:
    """A token count from JSON (anything but a number counts 0)."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def context_usage(
    model: Model | None, messages: list[Any], branch: Callable[[], list[Any]]
) -> ContextUsage | None:
    """How full ``model``'s window is with ``messages`` (None without a model or a known window).

    After the latest compaction on the session ``branch()``, only a response that came after it
    measures the context: until one did, the figures are unknown.
    """
    from piko.data.tokens import estimate_context_tokens
    from piko.data.tokens import usage_tokens

    if model is None:
        return None
    window = model.context_window or 0
    if window <= 0:
        return None
    entries = branch()
    compactions = [i for i, e in enumerate(entries) if getattr(e, "type", "") == "compaction"]
    if compactions:
        measured = False
        for entry in reversed(entries[compactions[-1] + 1 :]):
            message = getattr(entry, "message", None) if getattr(entry, "type", "") == "message" else None
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
                measured = usage_tokens(message.usage) > 0
                break
        if not measured:
            return ContextUsage(tokens=None, context_window=window, percent=None)
    tokens = estimate_context_tokens(messages)
    return ContextUsage(tokens=tokens, context_window=window, percent=tokens / window * 100)


def last_assistant_text(messages: list[Any]) -> str | None:
    """The text of the latest assistant message that was not aborted (None when it has none)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.stop_reason != "aborted":
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            return text.strip() or None
    return None
