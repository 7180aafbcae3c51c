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
from piko.lib.json_kinds import is_kind
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
        billed = _Billed.of_wire(usage)
        if billed is None:
            continue
        tokens.input += billed.input
        tokens.output += billed.output
        tokens.cache_read += billed.cache_read
        tokens.cache_write += billed.cache_write
        stats.cost += billed.total_cost
    tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write
    return stats


def _number(value: Any) -> float:
    """A number from JSON (anything but a number counts 0)."""
    return value if is_kind("number", value) else 0  # type: ignore[no-any-return]


def _count(value: Any) -> int:
    """A token count from JSON (anything but a number counts 0)."""
    return int(_number(value))


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


class CacheWaste(Record):
    """Prompt tokens that were in the previous request's prompt yet billed again (pi 1.6's
    ``Cache Re-billed``): how many, what they cost beyond cache reads, in how many requests."""

    missed_tokens: int = 0
    missed_cost: float = 0
    miss_count: int = 0


class CostByModel(Record):
    """What one ``provider/model`` (or ``Tools/summaries``) cost in a session, and its tokens."""

    key: str
    cost: float = 0
    tokens: int = 0


CACHE_MISS_NOISE_TOKENS = 1024
"""A miss of at most this many tokens is cache breakpoint granularity, not counted (as pi 1.6)."""


class _Billed(Record):
    """One request's usage, from a message or from a pi 1.6 ``usage`` entry's wire object."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    paid_cost: float = 0  # input and cache writes
    read_cost: float = 0
    total_cost: float = 0

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @classmethod
    def of_message(cls, message: AssistantMessage) -> _Billed:
        usage, cost = message.usage, message.usage.cost
        return cls(
            input=usage.input, output=usage.output, cache_read=usage.cache_read, cache_write=usage.cache_write,
            paid_cost=cost.input + cost.cache_write, read_cost=cost.cache_read, total_cost=cost.total,
        )  # fmt: skip

    @classmethod
    def of_wire(cls, usage: Any) -> _Billed | None:
        if not isinstance(usage, dict):
            return None
        given = usage.get("cost")
        cost: dict[str, Any] = given if isinstance(given, dict) else {}
        money = {k: float(_number(cost.get(k))) for k in ("input", "cacheRead", "cacheWrite", "total")}
        return cls(
            input=_count(usage.get("input")), output=_count(usage.get("output")),
            cache_read=_count(usage.get("cacheRead")), cache_write=_count(usage.get("cacheWrite")),
            paid_cost=money["input"] + money["cacheWrite"], read_cost=money["cacheRead"], total_cost=money["total"],
        )  # fmt: skip


def cache_waste(entries: Sequence[Any], cache_read_price: Callable[[str, str], float]) -> CacheWaste:
    """The cache misses of a session's ``entries`` (all branches, in file order), as pi 1.6 counts
    them: each answer's prompt against the previous request's (an answer or a cache warm), from the
    second request on, once a cache was ever reported; a compaction or branch summary starts
    afresh; a miss is re-billed at what the answer paid per token less the cache-read price
    (``cache_read_price(provider, model)``, per million tokens, where it read nothing from cache)."""
    waste = CacheWaste()
    previous: tuple[int, bool] | None = None  # (prompt tokens, a cache was reported)
    for entry in entries:
        if entry.type in ("compaction", "branch_summary"):
            previous = None
        elif entry.type == "usage" and entry.kind == "cache_warm":
            billed = _Billed.of_wire(entry.usage)
            if billed is not None and billed.prompt > 0:
                previous = (billed.prompt, True)
        elif entry.type == "message" and isinstance(entry.message, AssistantMessage):
            message = entry.message
            billed = _Billed.of_message(message)
            reported = previous is not None and previous[1]
            if (
                previous is not None
                and billed.prompt > 0
                and (billed.cache_read + billed.cache_write > 0 or reported)
            ):
                missed = min(previous[0], billed.prompt) - billed.cache_read
                if missed > CACHE_MISS_NOISE_TOKENS:
                    paid = billed.input + billed.cache_write
                    paid_per_token = billed.paid_cost / paid if paid > 0 else 0
                    read_per_token = (
                        billed.read_cost / billed.cache_read
                        if billed.cache_read > 0
                        else cache_read_price(message.provider, message.model) / 1_000_000
                    )
                    waste.missed_tokens += missed
                    waste.missed_cost += missed * max(0.0, paid_per_token - read_per_token)
                    waste.miss_count += 1
            if billed.prompt > 0:
                previous = (billed.prompt, reported or billed.cache_read + billed.cache_write > 0)
    return waste


def usage_cost_breakdown(entries: Sequence[Any]) -> list[CostByModel]:
    """Cost and tokens of a session's ``entries`` by ``provider/model`` (the model that answered),
    summaries' usage as ``Tools/summaries``; the ones with neither left out, the dearest first."""
    totals: dict[str, CostByModel] = {}
    for entry in entries:
        key, billed = None, None
        if entry.type == "message" and isinstance(entry.message, AssistantMessage):
            message = entry.message
            key, billed = (
                f"{message.provider}/{message.response_model or message.model}",
                _Billed.of_message(message),
            )
        elif entry.type == "usage":
            key = f"{entry.raw.get('provider')}/{entry.raw.get('model')}"
            billed = _Billed.of_wire(entry.usage)
        elif entry.type in ("compaction", "branch_summary") and isinstance(entry.raw.get("usage"), dict):
            key, billed = "Tools/summaries", _Billed.of_wire(entry.raw.get("usage"))
        if key is None or billed is None:
            continue
        total = totals.setdefault(key, CostByModel(key=key))
        total.cost += billed.total_cost
        total.tokens += billed.prompt + billed.output
    shown = [t for t in totals.values() if t.cost > 0 or t.tokens > 0]
    return sorted(shown, key=lambda t: -t.cost)
