"""Automatic retry of failed model calls: which errors are worth it, the backoff wait, its cancel."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.events import AutoRetryEndEvent
from piko.data.events import AutoRetryStartEvent
from piko.data.events import SummarizationRetryAttemptStartEvent
from piko.data.events import SummarizationRetryFinishedEvent
from piko.data.events import SummarizationRetryScheduledEvent
from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.engine.session_services import SessionServices
from piko.lib.abort import AbortSlot


class RetryPolicy:
    """pi's auto-retry: up to ``retry.maxRetries`` attempts, waiting ``retry.baseDelayMs`` doubled
    each time, announced as ``auto_retry_start``/``auto_retry_end``.

    The ``services``' ``announce(name, event)`` tells the listeners and the extensions. Which
    errors are worth retrying, the plugins say (``piko_classify_error``, asked through the
    services' ``pm``). The policy holds only the attempt count and the wait in progress (which
    :meth:`abort` cancels).
    """

    def __init__(self, services: SessionServices) -> None:
        self._services = services
        self._attempt = 0
        self._wait = AbortSlot()  # the backoff wait
        self._classified: tuple[AssistantMessage, bool] | None = None  # the last message asked about

    @property
    def enabled(self) -> bool:
        return bool(self._services.settings.get("retry.enabled", True))

    def set_enabled(self, enabled: bool) -> None:
        self._services.save_setting("retry.enabled", enabled)

    @property
    def attempt(self) -> int:
        """The attempt under way (0: not retrying)."""
        return self._attempt

    @property
    def is_waiting(self) -> bool:
        """Whether the backoff wait before an attempt runs now."""
        return self._wait.busy

    def abort(self) -> None:
        """Cancel the backoff wait in progress (the retry then ends as cancelled)."""
        self._wait.abort()

    def is_retryable(self, message: AssistantMessage, model: Model | None) -> bool:
        """Whether ``message`` failed with an error worth retrying (a context overflow is not).

        Asked once per message: ``piko_classify_error`` answers may have effects (a credential
        helper fetches a fresh key once), and ``agent_end``'s ``willRetry`` asks before the run does."""
        from piko.engine.overflow import error_kind

        if self._classified is not None and self._classified[0] is message:
            return self._classified[1]
        retryable = error_kind(self._services.pm, message, model) == "retryable"
        self._classified = (message, retryable)
        return retryable

    def will_retry(self, messages: list[Any], model: Model | None, *, aborted: bool) -> bool:
        """Whether a run that ended with ``messages`` is retried next (pi 1.6's ``agent_end``
        ``willRetry``): not aborted, retries on and left, and its last answer failed retryably."""
        if (
            aborted
            or not self.enabled
            or self._attempt >= int(self._services.settings.get("retry.maxRetries", 3))
        ):
            return False
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        return last is not None and self.is_retryable(last, model)

    async def wait(self, message: AssistantMessage, messages: list[Any]) -> bool:
        """Wait the backoff delay and drop the failed ``message`` from ``messages``; False when
        the retries are exhausted or the wait was cancelled."""
        max_retries = int(self._services.settings.get("retry.maxRetries", 3))
        base = float(self._services.settings.get("retry.baseDelayMs", 2000))
        self._attempt += 1
        if self._attempt > max_retries:
            attempt = self._attempt - 1
            self._attempt = 0
            end = AutoRetryEndEvent(success=False, attempt=attempt, final_error=message.error_message)
            await self._services.announce("auto_retry_end", end)
            return False
        delay = base * 2 ** (self._attempt - 1)
        start = AutoRetryStartEvent(
            attempt=self._attempt,
            max_attempts=max_retries,
            delay_ms=int(delay),
            error_message=message.error_message or "Unknown error",
        )
        await self._services.announce("auto_retry_start", start)
        if messages and isinstance(messages[-1], AssistantMessage):
            messages.pop()
        with self._wait.running() as signal:
            try:
                await asyncio.wait_for(signal.wait(), delay / 1000.0)
            except TimeoutError:
                pass
        if signal.aborted:
            attempt, self._attempt = self._attempt, 0
            end = AutoRetryEndEvent(success=False, attempt=attempt, final_error="Retry cancelled")
            await self._services.announce("auto_retry_end", end)
            return False
        return True

    async def answered(self, message: AssistantMessage) -> None:
        """An answer arrived: one that did not fail ends the retrying, successfully."""
        if message.stop_reason != "error" and self._attempt > 0:
            await self._services.announce(
                "auto_retry_end", AutoRetryEndEvent(success=True, attempt=self._attempt)
            )
            self._attempt = 0


class SummaryRetry:
    """pi 1.6's retry of a compaction or branch-summary request: the ``retry`` settings' budget
    and backoff, told to the listeners of the session's ``services`` as
    ``summarization_retry_scheduled`` (before each wait), ``summarization_retry_attempt_start``
    (after it) and ``summarization_retry_finished`` (once, at the end, when there was a retry).
    Which errors are worth another try, the plugins say (``piko_classify_error`` through the
    services' ``pm``), as for the session's own requests."""

    def __init__(
        self, services: SessionServices, *, source: str, reason: str | None = None, model: Model | None = None
    ) -> None:
        self._services = services
        self.source = source
        self.reason = reason
        self._model = model

    async def run(
        self, produce: Callable[[], Awaitable[AssistantMessage | None]], signal: Any = None
    ) -> AssistantMessage | None:
        """``produce()`` until it answers, fails for good, or is aborted; its last message."""
        settings = self._services.settings
        enabled = bool(settings.get("retry.enabled", True))
        max_retries = int(settings.get("retry.maxRetries", 3)) if enabled else 0
        base = float(settings.get("retry.baseDelayMs", 2000))
        from piko.engine.overflow import error_kind

        attempt = 0
        while True:
            message = await produce()
            aborted = (signal is not None and signal.aborted) or (
                message is not None and message.stop_reason == "aborted"
            )
            error = message.error_message or "Unknown error" if message is not None else ""
            failed = message is not None and message.stop_reason == "error" and not aborted
            retryable = (
                failed
                and message is not None
                and error_kind(self._services.pm, message, self._model) == "retryable"
            )
            if not retryable or attempt >= max_retries:
                if attempt:
                    await self._services.listeners.notify(SummarizationRetryFinishedEvent())
                return message
            attempt += 1
            delay = base * 2 ** (attempt - 1)
            await self._services.listeners.notify(
                SummarizationRetryScheduledEvent(
                    attempt=attempt, max_attempts=max_retries, delay_ms=int(delay),
                    error_message=error,
                )
            )  # fmt: skip
            if await _sleep(delay / 1000.0, signal):
                await self._services.listeners.notify(SummarizationRetryFinishedEvent())
                return message
            await self._services.listeners.notify(
                SummarizationRetryAttemptStartEvent(source=self.source, reason=self.reason)
            )


async def _sleep(seconds: float, signal: Any) -> bool:
    """Wait ``seconds``; True when ``signal`` was aborted first."""
    if signal is None:
        await asyncio.sleep(seconds)
        return False
    try:
        await asyncio.wait_for(signal.wait(), seconds)
    except TimeoutError:
        return False
    return True
