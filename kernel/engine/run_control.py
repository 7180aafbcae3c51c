"""One agent run and what its end calls for: a retry after a passing failure, a compaction, the
messages queued meanwhile, the turns ``session_stop`` handlers ask for, and ``agent_settled``."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.events import AgentSettledEvent
from piko.data.messages import AssistantMessage
from piko.engine.agent import Agent
from piko.engine.retry import RetryPolicy
from piko.engine.session_services import SessionServices
from piko.engine.stop_hook import StopHook

CheckCompaction = Callable[[AssistantMessage, bool], Awaitable[str | None]]


class RunControl:
    """Runs the ``agent`` until nothing more follows, as pi does.

    After each run the last assistant message decides: a retryable failure waits the ``retry``
    backoff and continues; otherwise ``check_compaction(message, skip_aborted)`` may compact (an
    overflow is compacted once and the request sent again; a full context is compacted and
    messages queued meanwhile are delivered). Messages queued after the loop's last look at the
    queues (by ``agent_end`` handlers) get a fresh run, unless the run was asked to stop. The
    ``services``' ``model()`` gives the context window that tells an overflow from a retryable
    error. Once the agent settled with nothing queued (``has_pending()`` false), the
    ``stop_hook`` may ask for more turns (a RunControl without one only runs, retries and
    compacts); then the services' ``announce`` tells of ``agent_settled``.
    """

    def __init__(
        self,
        agent: Agent,
        retry: RetryPolicy,
        services: SessionServices,
        *,
        check_compaction: CheckCompaction,
        stop_hook: StopHook | None = None,
        has_pending: Callable[[], bool] = lambda: False,
    ) -> None:
        self._agent = agent
        self._retry = retry
        self._services = services
        self._check_compaction = check_compaction
        self._stop_hook = stop_hook
        self._has_pending = has_pending
        self._last: AssistantMessage | None = None
        self.abort_requested = False
        """Whether the current run was asked to stop (what ``agent_settled`` reports)."""
        self.overflow_recovery_attempted = False
        """Whether an overflow was compacted since the last user message or good answer (once only)."""

    def user_message_started(self) -> None:
        self.overflow_recovery_attempted = False

    def answered(self, message: AssistantMessage) -> None:
        """An assistant message ended: the run's outcome, so far."""
        self._last = message
        if message.stop_reason != "error":
            self.overflow_recovery_attempted = False

    async def run_until_settled(self, start: Callable[[], Awaitable[Any]]) -> None:
        """:meth:`run`, then the turns ``session_stop`` asks for; ``agent_settled`` once idle."""
        try:
            await self.run(start)
            if self._stop_hook is None:
                return
            self._stop_hook.start_run()
            while not self._agent.is_streaming and not self._has_pending():
                continuation = await self._stop_hook.next_turn()
                if continuation is None:
                    break
                await self.run(functools.partial(self._agent.prompt, [continuation]))
        finally:
            if not self._agent.is_streaming and not self._has_pending():
                await self._services.announce(
                    "agent_settled", AgentSettledEvent(aborted=self.abort_requested)
                )

    async def settle(self) -> None:
        """Wait until the work extensions started without awaiting it (``pi.send_user_message``,
        ``pi.send_message``...) is done and the agent is idle."""
        import asyncio

        from piko.extensions.context import scheduled_work

        while True:
            pending = scheduled_work()
            if not pending and not self._agent.is_streaming:
                return
            if pending:
                await asyncio.wait(pending)
            await self._agent.wait_for_idle()

    async def run(self, start: Callable[[], Awaitable[Any]]) -> None:
        """``start()`` the agent, then retry, compact and continue while its outcome calls for it."""
        self._last = None
        self.abort_requested = False
        await self._run(start)

    async def _run(self, start: Callable[[], Awaitable[Any]]) -> None:
        await start()
        while await self._goes_on():
            await self._agent.continue_()

    async def _goes_on(self) -> bool:
        """Whether the agent continues after its last run: a retryable failure once its backoff
        is waited, an overflow compacted, messages queued while it ended or compaction ran."""
        last, self._last = self._last, None
        if last is not None:
            if self._retry.is_retryable(last, self._services.model()) and self._retry.enabled:
                return await self._retry.wait(last, self._agent.state.messages)
            outcome = await self._check_compaction(last, True)
            if outcome == "retry":
                return True
            if outcome == "compacted" and self._agent.has_queued_messages():
                # messages queued while the run ended or compaction ran would otherwise wait for
                # the next prompt: deliver them now, as pi does
                return True
        return self._queued_after_the_run()

    def _queued_after_the_run(self) -> bool:
        """Whether messages wait that the run could not take: the loop takes the queues for the
        last time before ``agent_end``, so what its handlers queue needs a fresh run (pi 1.6's
        rule); a run asked to stop leaves them for the next prompt."""
        return not self.abort_requested and self._agent.has_queued_messages()
