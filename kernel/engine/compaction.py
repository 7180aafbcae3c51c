"""When and how the session compacts; what to keep and how to summarize is the compaction plugin's.

The kernel decides *when* (the context overflowed, or crossed ``contextWindow - reserveTokens``
with the budgets :func:`fitted_budgets` fits to small windows, or the user asked) and runs the
sequence: ``piko_compaction_prepare``, the cancellable
``session_before_compact`` (which may also supply the summary), ``piko_compact``, then a
``compaction`` entry in the session, ``session_compact``, and the rebuilt context. Listeners see
``compaction_start``/``compaction_end``; extensions also get ``auto_compaction_*`` for automatic runs.
"""

from __future__ import annotations

import datetime
import time
from typing import Any
from typing import Literal

from piko.data.events import AutoCompactionEndEvent
from piko.data.events import AutoCompactionStartEvent
from piko.data.events import CompactionEndEvent
from piko.data.events import CompactionRequest
from piko.data.events import CompactionResult
from piko.data.events import CompactionStartEvent
from piko.data.events import SessionBeforeCompactEvent
from piko.data.events import SessionCompactEvent
from piko.data.events import SessionCompactingEvent
from piko.data.messages import AssistantMessage
from piko.data.tokens import context_estimate
from piko.data.tokens import usage_tokens
from piko.engine.retry import SummaryRetry
from piko.lib.abort import AbortController
from piko.lib.redaction import redact

COMPACTION_DEFAULTS: dict[str, Any] = {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000}

OVERFLOW_GAVE_UP = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)


def overflow_nothing_to_compact(context_window: int) -> str:
    """Why an overflow cannot be recovered from when nothing before the latest messages is left to summarize."""
    return (
        "nothing to compact: the latest messages alone exceed the context window "
        f"({context_window} tokens). Try a shorter request or a larger-context model."
    )


def fitted_budgets(
    reserve_tokens: int, keep_recent_tokens: int, context_window: int, *, overhead: int = 0
) -> tuple[int, int]:
    """``(reserveTokens, keepRecentTokens)`` fitted to a model's context window.

    pi's defaults (16384 and 20000) suit windows of 32k tokens and more; on a 4k or 8k model the
    threshold ``contextWindow - reserveTokens`` is below zero and the kept tail is the whole
    session, so compaction can never free anything. Fitted:

    * the threshold is ``contextWindow - reserveTokens``, but never below the lower of
      ``reserveTokens`` and three quarters of the window (the reserve shrinks to fit);
    * the kept tail is at most half of what the threshold leaves after ``overhead`` (the system
      prompt and tool definitions, which reported usage counts and message estimates do not),
      so that the summary and new turns have room before the next compaction.

    A window of twice the reserve or more keeps the reserve; the default tail is kept on windows
    of about 64k tokens and more. Without a window (``0``) both settings are returned as they are.
    """
    if context_window <= 0:
        return reserve_tokens, keep_recent_tokens
    threshold = max(context_window - reserve_tokens, min(reserve_tokens, context_window * 3 // 4))
    keep = min(keep_recent_tokens, max(0, threshold - max(0, overhead)) // 2)
    return context_window - threshold, keep


def _latest_compaction_time(session: Any) -> int | None:
    for entry in reversed(session.session_manager.get_branch()):
        if getattr(entry, "type", "") == "compaction":
            stamp = str(getattr(entry, "timestamp", ""))
            try:
                return int(datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
            except ValueError:
                return None
    return None


async def check_compaction(
    session: Any, message: AssistantMessage, *, skip_aborted: bool
) -> Literal["retry", "compacted"] | None:
    """Compact if needed after ``message``.

    ``"retry"``: an overflow was compacted and the failed request should be sent again;
    ``"compacted"``: the context passed the threshold and was compacted; ``None``: nothing done.
    """
    if not session.compaction.enabled or session.model is None:
        return None
    if skip_aborted and message.stop_reason == "aborted":
        return None
    model = session.model
    window = model.context_window or 0
    compacted_at = _latest_compaction_time(session)
    # strictly earlier: a retry started in the same millisecond as the compaction came after it
    if compacted_at is not None and message.timestamp < compacted_at:
        return None
    from piko.engine.overflow import is_context_overflow

    same_model = message.provider == model.provider and message.model == model.id
    if same_model and is_context_overflow(message, window, pm=session.app.pm, model=model):
        if session.runs.overflow_recovery_attempted:
            await session.listeners.notify(
                CompactionEndEvent(reason="overflow", error_message=OVERFLOW_GAVE_UP)
            )
            return None
        session.runs.overflow_recovery_attempted = True
        messages = session.agent.state.messages
        failed = messages.pop() if messages and isinstance(messages[-1], AssistantMessage) else None
        if await run_compaction(session, "overflow", will_retry=True):
            return "retry"
        if failed is not None and session.agent.state.messages is messages:
            # not recovered: the failed response stays the last word, which the modes report
            messages.append(failed)
        return None
    if message.stop_reason == "error":
        # no usage on a failed response: estimate from the last successful one, unless that
        # one predates the latest compaction (its usage measured the old, larger context)
        messages = session.agent.state.messages
        estimate = context_estimate(messages)
        if estimate.last_usage_index is None:
            return None
        source = messages[estimate.last_usage_index]
        if compacted_at is not None and source.timestamp <= compacted_at:
            return None
        tokens = estimate.tokens
    else:
        tokens = usage_tokens(message.usage)
    reserve, _keep = fitted_budgets(int(compaction_settings(session)["reserveTokens"]), 0, window)
    if window and tokens > window - reserve:
        await run_compaction(session, "threshold", will_retry=False)
        return "compacted"
    return None


def compaction_settings(session: Any) -> dict[str, Any]:
    """The ``compaction`` settings with pi's defaults filled in."""
    configured = session.settings.get("compaction")
    return {**COMPACTION_DEFAULTS, **(configured if isinstance(configured, dict) else {})}


def _as_result(value: Any) -> CompactionResult | None:
    if value is None or isinstance(value, CompactionResult):
        return value
    from piko.platform.dispatch import normalize_result

    data = normalize_result(value) or {}
    if not data.get("summary"):
        return None
    return CompactionResult(
        summary=str(data["summary"]),
        first_kept_entry_id=str(data.get("first_kept_entry_id") or ""),
        tokens_before=int(data.get("tokens_before") or 0),
        details=data.get("details"),
    )


async def ask_strategy(session: Any, name: str, request: Any) -> Any:
    """The first answer of the compaction plugins to ``piko_<name>`` (``compaction_prepare``,
    ``compact``, ``summarize_branch``).

    Called directly rather than through ``dispatcher.emit``: a summary may take minutes (no
    handler budget applies) and a failure must reach the caller as it is.
    """
    dispatcher = session.dispatcher
    tracer = getattr(dispatcher, "tracer", None)
    for handler in dispatcher.handlers(name):
        started = time.perf_counter()
        result = handler.call(request, session.ctx)
        if hasattr(result, "__await__"):
            result = await result
        if tracer:
            tracer.event(name, handler.plugin, result, started)
        if result is not None and result is not False:
            return result
    return None


class _NothingToCompact(Exception):
    pass


async def compact(session: Any, custom_instructions: str | None = None) -> CompactionResult:
    """Manual compaction (``/compact``, RPC ``compact``), once what runs is aborted.

    Returns what was written; raises with pi's message when it fails or is cancelled.
    """
    await session.abort()
    if await run_compaction(session, "manual", custom_instructions=custom_instructions, will_retry=False):
        result: CompactionResult = session.compaction.last_result
        return result
    if session.compaction.last_error:
        raise RuntimeError(session.compaction.last_error.removeprefix("Compaction failed: "))
    raise RuntimeError("Compaction cancelled")


async def run_compaction(
    session: Any, reason: str, *, custom_instructions: str | None = None, will_retry: bool = False
) -> bool:
    """Compact the current branch; True when a compaction entry was written.

    Failures end in ``compaction_end`` with pi's wording (``Compaction failed: ...``,
    ``Auto-compaction failed: ...``, ``Context overflow recovery failed: ...``); a cancel (an
    extension, or :meth:`~piko.engine.compaction_state.CompactionState.abort`) ends it with ``aborted`` and no error. An automatic
    compaction with nothing to compact, or without credentials, ends quietly.
    """
    ctx = session.ctx
    dispatcher = session.dispatcher
    automatic = reason != "manual"
    await session.listeners.notify(CompactionStartEvent(reason=reason))
    if automatic:
        await dispatcher.emit("auto_compaction_start", AutoCompactionStartEvent(reason=reason), ctx)
    state = session.compaction
    state.running = True
    controller = state.controller = AbortController()
    result: CompactionResult | None = None
    error: str | None = None
    aborted = False
    from_extension = False
    try:
        model = session.model
        if model is None:
            from piko.models.guidance import no_model_selected_message

            raise (_NothingToCompact if automatic else RuntimeError)(no_model_selected_message())
        auth = session.model_registry.request_auth(model)
        if not auth.ok:
            raise (_NothingToCompact if automatic else RuntimeError)(auth.error or "No API key")
        api_key = auth.api_key
        branch = session.session_manager.get_branch()
        request = CompactionRequest(
            branch_entries=branch,
            custom_instructions=custom_instructions,
            model=model,
            api_key=api_key,
            signal=controller.signal,
            settings=compaction_settings(session),
            reason=reason,
            thinking_level=session.thinking_level,
            retry=SummaryRetry(session.services, source="compaction", reason=reason, model=model),
        )
        preparation = await ask_strategy(session, "compaction_prepare", request)
        if preparation is None:
            if reason == "overflow":  # the request stays too large: say so rather than stop silently
                raise RuntimeError(overflow_nothing_to_compact(model.context_window))
            if automatic:
                raise _NothingToCompact()
            if not dispatcher.has_handlers("compaction_prepare"):
                raise RuntimeError("No compaction plugin is active (see `pi plugins`)")
            if branch and getattr(branch[-1], "type", "") == "compaction":
                raise RuntimeError("Already compacted")
            raise RuntimeError("Nothing to compact (session too small)")
        request.preparation = preparation
        before = await dispatcher.emit(
            "session_before_compact",
            SessionBeforeCompactEvent(
                preparation=preparation, branch_entries=branch, custom_instructions=custom_instructions,
                signal=controller.signal,
            ),
            ctx,
        )  # fmt: skip
        if before and before.get("cancel"):
            raise _Cancelled("Compaction cancelled")
        if before and before.get("compaction") is not None:
            result = _as_result(before["compaction"])
            from_extension = result is not None
        preserve: dict[str, Any] = {}
        if result is None:
            preserve = await _compacting_hook(session, request)
            result = _as_result(await ask_strategy(session, "compact", request))
        if controller.signal.aborted:
            raise _Cancelled("Compaction cancelled")
        if result is None:
            raise RuntimeError("Compaction produced no summary")
        if preserve:
            result.details = {**(result.details if isinstance(result.details, dict) else {}), **preserve}
        if not result.first_kept_entry_id:
            result.first_kept_entry_id = str(getattr(preparation, "first_kept_entry_id", "") or "")
        if not result.tokens_before:
            result.tokens_before = int(getattr(preparation, "tokens_before", 0) or 0)
        entry_id = session.session_manager.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details,
            from_extension,  # pi writes "fromHook": false for its own summaries
        )  # fmt: skip
        session.rebuild_from_session()
        if will_retry:  # the failed response is on file, but must not be in the retried request
            messages = session.agent.state.messages
            if (
                messages
                and isinstance(messages[-1], AssistantMessage)
                and messages[-1].stop_reason == "error"
            ):
                messages.pop()
        entry = session.session_manager.get_entry(entry_id)
        await dispatcher.emit(
            "session_compact", SessionCompactEvent(compaction_entry=entry, from_extension=from_extension), ctx
        )
    except _NothingToCompact:
        result = None
    except _Cancelled:
        result, aborted = None, True
    except Exception as exc:
        result = None
        if controller.signal.aborted:
            aborted = True
        else:
            error = redact(_failure_message(reason, str(exc) or type(exc).__name__))
    state.running = False
    state.controller = None
    written = result is not None
    await _finish(session, reason, result, aborted=aborted, will_retry=will_retry and written, error=error)
    return written


async def _compacting_hook(session: Any, request: CompactionRequest) -> dict[str, Any]:
    """``session.compacting``: puts the handlers' context and prompt on ``request``; the data they
    want kept in the entry's details."""
    if not session.dispatcher.has_handlers("session_compacting"):
        return {}
    messages = list(getattr(request.preparation, "messages_to_summarize", None) or [])
    event = SessionCompactingEvent(session_id=session.session_id, messages=messages)
    answer = await session.dispatcher.emit("session_compacting", event, session.ctx)
    if not answer:
        return {}
    request.summary_context = list(answer["context"])
    request.summary_prompt = answer["prompt"]
    return dict(answer["preserve_data"])


def _failure_message(reason: str, message: str) -> str:
    if reason == "overflow":
        return f"Context overflow recovery failed: {message}"
    if reason == "threshold":
        return f"Auto-compaction failed: {message}"
    return f"Compaction failed: {message}"


class _Cancelled(Exception):
    pass


async def _finish(
    session: Any,
    reason: str,
    result: CompactionResult | None,
    *,
    aborted: bool,
    will_retry: bool,
    error: str | None,
) -> None:
    wire_result = None
    if result is not None:
        wire_result = {
            "summary": result.summary,
            "firstKeptEntryId": result.first_kept_entry_id,
            "tokensBefore": result.tokens_before,
            "details": result.details,
        }
    await session.listeners.notify(
        CompactionEndEvent(
            reason=reason, result=wire_result, aborted=aborted, will_retry=will_retry, error_message=error
        )
    )
    if reason != "manual":
        await session.dispatcher.emit(
            "auto_compaction_end",
            AutoCompactionEndEvent(
                result=wire_result, aborted=aborted, will_retry=will_retry, error_message=error
            ),
            session.ctx,
        )
    session.compaction.last_result = result
    session.compaction.last_error = error
