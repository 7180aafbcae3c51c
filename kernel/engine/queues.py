"""Messages waiting for the agent: steering and follow-up queues, their texts as shown, next-turn messages."""

from __future__ import annotations

from typing import Any

from piko.data.events import QueueUpdateEvent
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.engine.agent import Agent
from piko.engine.loop import now_ms
from piko.engine.session_services import SessionServices
from piko.lib.records import Record
from piko.lib.records import field


class ClearedQueue(Record):
    """What :meth:`MessageQueues.clear` dropped: the texts of the queued user messages."""

    steering: list[str] = field(factory=list)
    follow_up: list[str] = field(factory=list)


class MessageQueues:
    """The agent's steering and follow-up queues, seen with the texts a front end shows as queued.

    A steering message is delivered before the next model call, a follow-up once the model
    would stop (``steeringMode``/``followUpMode``: ``one-at-a-time`` or ``all``). Listeners get a
    ``queue_update`` whenever the queued texts change. Next-turn messages (an extension's
    ``deliver_as="nextTurn"``) wait for the next prompt instead.
    """

    def __init__(self, agent: Agent, services: SessionServices) -> None:
        self._agent = agent
        self._services = services
        self._steering: list[str] = []
        self._follow_up: list[str] = []
        self._next_turn: list[Any] = []

    @property
    def steering_mode(self) -> str:
        return self._agent.steering.mode

    @property
    def follow_up_mode(self) -> str:
        return self._agent.follow_ups.mode

    def set_steering_mode(self, mode: str) -> None:
        self._agent.steering.mode = mode
        self._services.save_setting("steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        self._agent.follow_ups.mode = mode
        self._services.save_setting("followUpMode", mode)

    @property
    def pending_count(self) -> int:
        """Queued user messages not delivered yet."""
        return len(self._steering) + len(self._follow_up)

    def has_pending(self) -> bool:
        """Whether anything waits: queued messages of any kind, or next-turn messages."""
        return self._agent.has_queued_messages() or bool(self._next_turn)

    async def add(
        self, text: str, images: list[ImageContent] | None, *, follow_up: bool, attribution: str | None = None
    ) -> None:
        """Queue a user message of ``text`` (and ``images``); ``attribution`` is recorded on it
        (an extension's ``send_user_message``)."""
        content: list[Any] = [TextContent(text=text)]
        if images:
            content.extend(images)
        message = UserMessage(content=content, timestamp=now_ms())
        if attribution is not None:
            message.extra["attribution"] = attribution
        if follow_up:
            self._follow_up.append(text)
            self._agent.follow_up(message)
        else:
            self._steering.append(text)
            self._agent.steer(message)
        await self._services.listeners.notify(self.update_event())

    def add_message(self, message: Any, *, follow_up: bool) -> None:
        """Queue a message that is not shown as queued (an extension's custom message)."""
        if follow_up:
            self._agent.follow_up(message)
        else:
            self._agent.steer(message)

    def defer_to_next_turn(self, message: Any) -> None:
        """Keep ``message`` until the next prompt, which sends it after the user's message."""
        self._next_turn.append(message)

    def take_next_turn(self) -> list[Any]:
        """The next-turn messages, which are then no longer pending."""
        taken, self._next_turn = self._next_turn, []
        return taken

    async def delivered(self, message: UserMessage) -> None:
        """A user message reached the conversation: if it was queued, it is no longer shown so."""
        text = text_of(message.content)
        if text in self._steering:
            self._steering.remove(text)
            await self._services.listeners.notify(self.update_event())
        elif text in self._follow_up:
            self._follow_up.remove(text)
            await self._services.listeners.notify(self.update_event())

    def clear(self) -> ClearedQueue:
        """Drop the queued messages and say which texts were dropped."""
        cleared = ClearedQueue(steering=list(self._steering), follow_up=list(self._follow_up))
        self._steering, self._follow_up = [], []
        self._agent.clear_queues()
        self._services.listeners.emit_now(self.update_event())
        return cleared

    def reset(self) -> None:
        """Forget the queued messages without telling anyone (the session moved to another file)."""
        self._agent.clear_queues()
        self._steering, self._follow_up = [], []

    def update_event(self) -> QueueUpdateEvent:
        return QueueUpdateEvent(steering=list(self._steering), follow_up=list(self._follow_up))
