"""Asking the session's model for summaries through the registered stream function."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from attrs import define
from attrs import field

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamOptions
from piko.plugins.compaction import prompts
from piko.plugins.compaction.file_ops import format_file_lists
from piko.plugins.compaction.file_ops import strip_file_lists
from piko.plugins.compaction.prepare import CompactionPreparation
from piko.plugins.compaction.serialize import serialize_conversation


class SummaryAborted(Exception):
    """The summary request was aborted (the user cancelled the compaction or the navigation)."""

    def __init__(self, message: str = "Compaction cancelled") -> None:
        super().__init__(message)


@define(kw_only=True)
class Summarizer:
    """The model, credentials and abort signal summaries are requested with."""

    model: Model
    stream_function: Any
    api_key: str | None = None
    headers: dict[str, str] = field(factory=dict)
    signal: Any = None
    thinking_level: str | None = None
    retry: Any = None  # piko.engine.retry.SummaryRetry, or None: one try
    settings: Any = None  # the app's settings: retry.provider applies to summaries too

    @classmethod
    def for_model(
        cls,
        app: Any,
        model: Model | None,
        *,
        api_key: str | None,
        signal: Any,
        thinking_level: str | None = None,
    ) -> Summarizer:
        """A summarizer for ``model`` through ``app``'s model registry (its key and request headers)."""
        if model is None:
            raise RuntimeError("No model selected")
        registry = app.model_registry
        stream = registry.stream_function(model)
        if stream is None:
            raise RuntimeError(f"No API provider registered for api: {model.api}")
        auth = registry.request_auth(model)
        if not auth.ok:
            raise RuntimeError(auth.error or f'No API key found for "{model.provider}"')
        headers = dict(auth.headers or {})
        api_key = api_key or auth.api_key
        return cls(
            model=model,
            stream_function=stream,
            api_key=api_key,
            headers=headers,
            signal=signal,
            thinking_level=thinking_level,
            settings=app.settings,
        )

    def _options(self, max_tokens: int) -> StreamOptions:
        reasoning = None
        if self.model.reasoning and self.thinking_level and self.thinking_level != "off":
            reasoning = self.thinking_level
        options = StreamOptions(
            api_key=self.api_key,
            signal=self.signal,
            max_tokens=max_tokens,
            headers=dict(self.headers),
            reasoning=reasoning,
        )
        if self.settings is not None:
            from piko.engine.provider_hooks import apply_provider_retry_settings

            apply_provider_retry_settings(self.settings, options)
        return options

    async def complete(self, prompt: str, *, max_tokens: int, failure: str) -> str:
        """The model's text answer to ``prompt``; raises ``RuntimeError("<failure>: <why>")`` on errors."""
        if self.signal is not None and self.signal.aborted:
            raise SummaryAborted()
        request = UserMessage(content=[TextContent(text=prompt)], timestamp=int(time.time() * 1000))
        context = Context(system_prompt=prompts.SYSTEM_PROMPT, messages=[request])

        async def produce() -> AssistantMessage | None:
            async for event in self.stream_function(self.model, context, self._options(max_tokens)):
                if event.type in ("done", "error"):
                    return event.final  # type: ignore[no-any-return]
            return None

        final = await (self.retry.run(produce, self.signal) if self.retry is not None else produce())
        if (self.signal is not None and self.signal.aborted) or (
            final is not None and final.stop_reason == "aborted"
        ):
            raise SummaryAborted()
        if final is None:
            raise RuntimeError(f"{failure}: the response ended without a result")
        if final.stop_reason == "error":
            raise RuntimeError(f"{failure}: {final.error_message or 'Unknown error'}")
        return "\n".join(block.text for block in final.content if isinstance(block, TextContent))


def conversation_prompt(
    messages: list[Any],
    instructions: str,
    previous_summary: str | None = None,
    context: list[str] | None = None,
) -> str:
    """The summarizer's request: the conversation as text, the previous summary, what extensions
    added (``session.compacting``), then the instructions."""
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous_summary:  # its file lists are carried in the details and listed again at the end
        text += f"<previous-summary>\n{strip_file_lists(previous_summary)}\n</previous-summary>\n\n"
    if context:
        joined = "\n".join(context)
        text += f"<context>\n{joined}\n</context>\n\n"
    return text + instructions


async def summarize_history(
    summarizer: Summarizer,
    messages: list[Any],
    *,
    reserve_tokens: int,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
    prompt: str | None = None,
    context: list[str] | None = None,
) -> str:
    """A structured summary of ``messages`` (an update of ``previous_summary`` when there is one);
    an extension's ``prompt`` replaces the instructions, its ``context`` goes with the conversation."""
    base = prompt or (prompts.UPDATE_PROMPT if previous_summary else prompts.SUMMARY_PROMPT)
    request = conversation_prompt(
        messages, prompts.with_focus(base, custom_instructions), previous_summary, context
    )
    return await summarizer.complete(
        request, max_tokens=int(0.8 * reserve_tokens), failure="Summarization failed"
    )


async def summarize_turn_prefix(summarizer: Summarizer, messages: list[Any], *, reserve_tokens: int) -> str:
    """A short summary of the start of a turn whose end is kept."""
    prompt = conversation_prompt(messages, prompts.TURN_PREFIX_PROMPT)
    return await summarizer.complete(
        prompt, max_tokens=int(0.5 * reserve_tokens), failure="Turn prefix summarization failed"
    )


async def compact(
    preparation: CompactionPreparation,
    summarizer: Summarizer,
    custom_instructions: str | None = None,
    *,
    prompt: str | None = None,
    context: list[str] | None = None,
) -> tuple[str, dict[str, list[str]]]:
    """The compaction summary for ``preparation`` and its ``details`` (the file lists).

    A split turn gets two summaries, requested in parallel and joined: the history before the
    turn, and the start of the turn. Their length is bounded by the reserve fitted to the
    model's window (80% and 50% of it), so a summary request fits a small model too.
    """
    from piko.engine.compaction import fitted_budgets

    settings = preparation.settings
    window = summarizer.model.context_window or 0
    reserve, _keep = fitted_budgets(settings.reserve_tokens, settings.keep_recent_tokens, window)
    history_kwargs: dict[str, Any] = {
        "reserve_tokens": reserve,
        "custom_instructions": custom_instructions,
        "previous_summary": preparation.previous_summary,
        "prompt": prompt,
        "context": context,
    }
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        history: asyncio.Task[str] | None = None
        try:
            async with asyncio.TaskGroup() as group:
                if preparation.messages_to_summarize:
                    history = group.create_task(
                        summarize_history(summarizer, preparation.messages_to_summarize, **history_kwargs)
                    )
                prefix = group.create_task(
                    summarize_turn_prefix(
                        summarizer, preparation.turn_prefix_messages, reserve_tokens=reserve
                    )
                )
        except ExceptionGroup as failed:  # report the first failure as it is (an abort first)
            causes: list[BaseException] = [e for e in failed.exceptions if isinstance(e, SummaryAborted)]
            raise (causes or list(failed.exceptions))[0] from None
        if history is not None:
            history_text = history.result()
        elif preparation.previous_summary:  # nothing new before the turn: the earlier summary stands
            history_text = strip_file_lists(preparation.previous_summary)
        else:
            history_text = prompts.NO_EARLIER_HISTORY
        summary = history_text + prompts.SPLIT_TURN_SEPARATOR + prefix.result()
    else:
        summary = await summarize_history(summarizer, preparation.messages_to_summarize, **history_kwargs)
    details = preparation.file_ops.details()
    summary += format_file_lists(details["readFiles"], details["modifiedFiles"])
    return summary, details
