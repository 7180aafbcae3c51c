"""The agent: conversation state, steering and follow-up queues, and one run at a time.

:class:`Agent` owns an :class:`~piko.engine.loop.AgentState`, starts the loop for a prompt or a
continuation, aborts it, and queues messages that arrive while it runs (``steer``: before the
next model call; ``follow_up``: once the model would stop). Queue modes are pi's ``all`` and
``one-at-a-time``. Every event goes to ``on_event`` (the session) before the loop proceeds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.events import AgentEndEvent
from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import Usage
from piko.engine.loop import AgentState
from piko.engine.loop import LoopConfig
from piko.engine.loop import continue_agent_loop
from piko.engine.loop import run_agent_loop
from piko.lib.abort import AbortSlot


class MessageQueue:
    """Pending messages delivered all at once or one at a time."""

    def __init__(self, mode: str = "one-at-a-time") -> None:
        self.mode = mode
        self.items: list[Any] = []

    def drain(self) -> list[Any]:
        if not self.items:
            return []
        if self.mode == "all":
            drained, self.items = self.items, []
            return drained
        return [self.items.pop(0)]

    def clear(self) -> None:
        self.items = []


class Agent:
    """Runs the agent loop over its state; at most one run at a time."""

    def __init__(
        self,
        state: AgentState,
        make_config: Callable[[], LoopConfig],
        on_event: Callable[[Any], Awaitable[None]],
        *,
        steering_mode: str = "one-at-a-time",
        follow_up_mode: str = "one-at-a-time",
    ) -> None:
        self.state = state
        self._make_config = make_config
        self._on_event = on_event
        self.steering = MessageQueue(steering_mode)
        self.follow_ups = MessageQueue(follow_up_mode)
        self._work = AbortSlot()  # the run under way
        self._run: asyncio.Future[None] | None = None
        self.error_message: str | None = None

    @property
    def is_streaming(self) -> bool:
        return self._run is not None and not self._run.done()

    @property
    def signal(self) -> Any:
        return self._work.signal

    def steer(self, message: Any) -> None:
        self.steering.items.append(message)

    def follow_up(self, message: Any) -> None:
        self.follow_ups.items.append(message)

    def has_queued_messages(self) -> bool:
        return bool(self.steering.items or self.follow_ups.items)

    def clear_queues(self) -> None:
        self.steering.clear()
        self.follow_ups.clear()

    def abort(self) -> None:
        self._work.abort()

    async def wait_for_idle(self) -> None:
        run = self._run
        if run is not None and not run.done():
            await asyncio.shield(run)

    async def prompt(self, messages: list[Any]) -> None:
        """Run the loop for new prompt messages; returns when the run ended."""
        if self.is_streaming:
            raise RuntimeError(
                "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
                "or wait for completion."
            )
        await self._lifecycle(
            lambda config, signal: run_agent_loop(messages, self.state, config, self._on_event, signal)
        )

    async def continue_(self) -> None:
        """Run the loop from the current context (a retry); queued messages go first."""
        if self.is_streaming:
            raise RuntimeError("Agent is already processing. Wait for completion before continuing.")
        last = self.state.messages[-1] if self.state.messages else None
        if last is None:
            raise RuntimeError("No messages to continue from")
        if isinstance(last, AssistantMessage):
            queued = self.steering.drain() or self.follow_ups.drain()
            if queued:
                await self.prompt(queued)
                return
            raise RuntimeError("Cannot continue from message role: assistant")
        await self._lifecycle(
            lambda config, signal: continue_agent_loop(self.state, config, self._on_event, signal)
        )

    async def _lifecycle(self, runner: Callable[[LoopConfig, Any], Awaitable[Any]]) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._run = done
        with self._work.running() as signal:
            self.error_message = None
            try:
                config = self._make_config()
                await runner(config, signal)
            except Exception as exc:  # a failure outside the provider: end the run like pi does
                aborted = signal.aborted
                model = self._make_config_model()
                failure = AssistantMessage(
                    content=[TextContent(text="")],
                    api=getattr(model, "api", "unknown"),
                    provider=getattr(model, "provider", "unknown"),
                    model=getattr(model, "id", "unknown"),
                    usage=Usage(),
                    stop_reason="aborted" if aborted else "error",
                    error_message=str(exc) or type(exc).__name__,
                )
                import time

                failure.timestamp = int(time.time() * 1000)
                self.state.messages.append(failure)
                self.error_message = failure.error_message
                await self._on_event(AgentEndEvent(messages=[failure]))
            finally:
                self._run = None
                if not done.done():
                    done.set_result(None)

    def _make_config_model(self) -> Any:
        try:
            return self._make_config().model
        except Exception:
            return None

    async def next_steering(self) -> list[Any]:
        return self.steering.drain()

    async def next_follow_ups(self) -> list[Any]:
        return self.follow_ups.drain()
