"""The ``compaction.default`` plugin: pi's compaction and branch summarization strategy.

``piko_compaction_prepare`` finds the cut point (:mod:`.prepare`), ``piko_compact`` asks the
session's model for the structured summary (:mod:`.summarize`) and ``piko_summarize_branch``
summarizes the branch left by ``/tree`` (:mod:`.branch_summary`). Replace the strategy with a
plugin of your own that answers these hooks first (``tryfirst``), or block this one
(``--disable-plugin compaction.default``); see ``docs/compaction.md``.
"""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.data.events import BranchSummaryRequest
from piko.data.events import CompactionRequest
from piko.data.events import CompactionResult


def _thinking_level(request: Any, ctx: Any) -> str | None:
    """The session's thinking level, used for the summary request when the model reasons."""
    level = getattr(request, "thinking_level", None)
    if level:
        return str(level)
    app = getattr(ctx, "app", None)
    runtime = getattr(app, "runtime", None) if app is not None else None
    if runtime is not None and getattr(runtime, "model", None) is getattr(request, "model", None):
        level = getattr(runtime, "thinking_level", None)
    return str(level) if level else None


def _app(ctx: Any) -> Any:
    app = getattr(ctx, "app", None)
    if app is None:
        raise RuntimeError("Compaction needs a running session (no app in the handler context)")
    return app


@hookimpl
def piko_compaction_prepare(request: CompactionRequest, ctx: Any) -> Any:
    from piko.plugins.compaction.prepare import CompactionSettings
    from piko.plugins.compaction.prepare import prepare_compaction

    settings = CompactionSettings.from_mapping(request.settings)
    window = request.model.context_window if request.model is not None else 0
    return prepare_compaction(
        list(request.branch_entries),
        settings,
        context_window=window or 0,
        overflow=request.reason == "overflow",
    )


@hookimpl
async def piko_compact(request: CompactionRequest, ctx: Any) -> Any:
    from piko.plugins.compaction.prepare import CompactionPreparation
    from piko.plugins.compaction.summarize import Summarizer
    from piko.plugins.compaction.summarize import compact

    preparation = request.preparation
    if not isinstance(preparation, CompactionPreparation):
        return None  # another strategy prepared this compaction: let it summarize
    summarizer = Summarizer.for_model(
        _app(ctx),
        request.model,
        api_key=request.api_key,
        signal=request.signal,
        thinking_level=_thinking_level(request, ctx),
    )
    summarizer.retry = request.retry
    summary, details = await compact(
        preparation,
        summarizer,
        request.custom_instructions,
        prompt=request.summary_prompt,
        context=request.summary_context,
    )
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=details,
    )


@hookimpl
async def piko_summarize_branch(request: BranchSummaryRequest, ctx: Any) -> Any:
    from piko.plugins.compaction.branch_summary import DEFAULT_RESERVE_TOKENS
    from piko.plugins.compaction.branch_summary import summarize_branch
    from piko.plugins.compaction.summarize import Summarizer

    if not request.entries:
        return None
    app = _app(ctx)
    reserve = app.settings.get("branchSummary.reserveTokens", DEFAULT_RESERVE_TOKENS)
    if isinstance(reserve, bool) or not isinstance(reserve, (int, float)):
        reserve = DEFAULT_RESERVE_TOKENS
    summarizer = Summarizer.for_model(app, request.model, api_key=request.api_key, signal=request.signal)
    summarizer.retry = request.retry
    return await summarize_branch(
        list(request.entries),
        summarizer,
        custom_instructions=request.custom_instructions,
        replace_instructions=request.replace_instructions,
        reserve_tokens=int(reserve),
    )
