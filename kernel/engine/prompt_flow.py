"""What becomes of a user's text before the agent runs it, and of queued messages before they
are delivered: extension commands, ``input`` handlers, expansion, queueing while streaming, the
compaction check, and ``before_agent_start`` (its messages and its system prompt)."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.engine.loop import now_ms
from piko.engine.prompt_input import PromptInput
from piko.engine.session import built_part
from piko.engine.system_prompt import SessionSystemPrompt

CheckCompaction = Callable[[AssistantMessage, bool], Awaitable[Any]]


class PromptFlow:
    """The path of prompts, steers and follow-ups of one ``session`` (an
    :class:`~piko.engine.session.AgentSession`) into the agent.

    ``input`` runs the extension side (commands, ``input`` handlers, expansion,
    ``before_agent_start``); ``system_prompt`` is the session's, which ``before_agent_start``
    may replace for a prompt's turns. :attr:`disposition` says what became of the last prompt
    that did not run: ``"handled"`` or ``"queued"`` (pi 1.6's RPC disposition).
    """

    def __init__(
        self,
        session: Any,
        input: PromptInput,
        system_prompt: SessionSystemPrompt,
        check_compaction: CheckCompaction,
    ) -> None:
        self._session = session
        self.input = input
        self._system = system_prompt
        self._check_compaction = check_compaction
        self.disposition = "started"

    async def prepare(
        self, text: str, images: list[ImageContent] | None, *, expand: bool, streaming_behavior: str | None,
        source: str, signal: Any, attribution: str | None = None,
    ) -> list[Any] | None:  # fmt: skip
        """Everything a prompt goes through before the run: the messages to send, or None when it
        needs no run (:attr:`disposition` says why)."""
        session = self._session
        self.disposition = "handled"
        if expand and text.startswith("/") and await self.input.run_command(text):
            return None
        transformed = await self.input.transform(text, images, source=source, signal=signal)
        if transformed is None:
            return None
        text, images = transformed
        if expand:
            text = self.input.expand(text)
        if session.is_streaming:
            if not streaming_behavior:
                raise RuntimeError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
                )
            await session.queues.add(
                text, images, follow_up=streaming_behavior == "followUp", attribution=attribution
            )
            self.disposition = "queued"
            return None
        shell = built_part(session, "shell")  # the user shell is built by the first ``!command``
        if shell is not None:
            shell.flush_pending()
        session.models.require_ready()
        last = next((m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None)
        if last is not None:
            await self._check_compaction(last, False)
        content: list[Any] = [TextContent(text=text), *(images or [])]
        user = UserMessage(content=content, timestamp=now_ms())
        if attribution is not None:
            user.extra["attribution"] = attribution
        messages: list[Any] = [user, *session.queues.take_next_turn()]
        self._system.override = None
        extra, self._system.override = await self.input.before_agent_start(
            text, images, system_prompt=self._system.base, system_prompt_options=self._system.options,
            signal=signal,
        )  # fmt: skip
        messages.extend(extra)
        session.agent.state.system_prompt = self._system.current
        return messages

    async def queue(
        self, text: str, images: list[ImageContent] | None, *, follow_up: bool, source: str | None
    ) -> str:
        """Queue a steer or follow-up (``input`` handlers first when it has a ``source``):
        ``"queued"``, or ``"handled"`` when a handler consumed it."""
        self.input.refuse_queued_command(text)
        if source is not None:
            transformed = await self.input.transform(text, images, source=source)
            if transformed is None:
                return "handled"
            text, images = transformed
        await self._session.queues.add(self.input.expand(text), images, follow_up=follow_up)
        return "queued"

    async def next_steering(self) -> list[Any]:
        return await self._with_policy(await self._session.agent.next_steering())

    async def next_follow_ups(self) -> list[Any]:
        return await self._with_policy(await self._session.agent.next_follow_ups())

    async def _with_policy(self, batch: list[Any]) -> list[Any]:
        """A dequeued steer or follow-up batch holding user work goes through ``before_agent_start``
        (prompt: its texts joined by blank lines); what the handlers add follows the batch, and
        their system prompt governs the next request."""
        session = self._session
        users = [m for m in batch if isinstance(m, UserMessage)]
        if not users or not session.dispatcher.has_handlers("before_agent_start"):
            return batch
        texts = [text_of(m.content) for m in users]
        images = [
            b for m in users if isinstance(m.content, list) for b in m.content if isinstance(b, ImageContent)
        ]
        extra, override = await self.input.before_agent_start(
            "\n\n".join(texts), images or None, system_prompt=self._system.base,
            system_prompt_options=self._system.options, signal=session.agent.signal,
        )  # fmt: skip
        if override:
            self._system.override = override
            session.agent.state.system_prompt = override
        return [*batch, *extra]
