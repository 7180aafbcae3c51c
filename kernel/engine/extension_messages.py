"""Messages extensions put into the conversation (``pi.send_message``, ``pi.send_user_message``), delivered as they ask."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.events import MessageEndEvent
from piko.data.events import MessageStartEvent
from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.engine.loop import now_ms
from piko.engine.queues import MessageQueues
from piko.engine.session_services import SessionServices


class ExtensionMessages:
    """Delivers what an extension sends: a custom message (its own ``custom_type``, shown or not)
    or a user message.

    ``deliver_as``: ``"steer"`` (the default while the agent streams), ``"followUp"``,
    ``"nextTurn"`` (a custom message sent with the next prompt) or ``"aside"``. Idle, a custom message starts a
    turn with ``start_turn(message)`` when ``trigger_turn`` asks, else the ``services`` ``add`` it to
    the conversation and their listeners see it; a user message is sent with ``prompt``.
    """

    def __init__(
        self,
        queues: MessageQueues,
        services: SessionServices,
        *,
        start_turn: Callable[[CustomMessage], Awaitable[None]],
        prompt: Callable[..., Awaitable[None]],
    ) -> None:
        self._queues = queues
        self._services = services
        self._start_turn = start_turn
        self._prompt = prompt

    async def send_custom(
        self, message: Any, *, deliver_as: str | None = None, trigger_turn: bool = False,
        attribution: str | None = None,
    ) -> None:  # fmt: skip
        """Deliver a custom message (a :class:`CustomMessage`, a dict of its fields, or text).

        ``"aside"`` is injected at the next step boundary while the agent streams (as a steer)
        and starts a turn when idle; ``"nextTurn"`` with ``trigger_turn`` starts one at once when
        idle and follows the running one otherwise.
        """
        custom = custom_message_from(message)
        if attribution is not None:
            custom.extra["attribution"] = attribution
        streaming = self._services.is_streaming()
        if deliver_as == "nextTurn" and not (trigger_turn and not streaming):
            if trigger_turn:  # streaming: the queued message schedules a continuation
                self._queues.add_message(custom, follow_up=True)
            else:
                self._queues.defer_to_next_turn(custom)
        elif streaming:
            self._queues.add_message(custom, follow_up=deliver_as == "followUp")
        elif trigger_turn or deliver_as == "aside":
            await self._start_turn(custom)
        else:
            self._services.add(custom)
            await self._services.listeners.notify(MessageStartEvent(message=custom))
            await self._services.listeners.notify(MessageEndEvent(message=custom))

    async def send_user(
        self, content: Any, *, deliver_as: str | None = None, attribution: str | None = None
    ) -> None:
        """Deliver user text, or content blocks (wire dicts or objects), without command or template
        expansion; the message records ``attribution`` (``"user"`` unless ``"agent"`` is given)."""
        attribution = "agent" if attribution == "agent" else "user"
        images: list[ImageContent] | None = None
        if isinstance(content, str):
            text = content
        else:
            from piko.data.wire import blocks_from_wire

            blocks = blocks_from_wire([b for b in content if isinstance(b, dict)]) + [
                b for b in content if not isinstance(b, dict)
            ]
            text = "\n".join(b.text for b in blocks if isinstance(b, TextContent))
            images = [b for b in blocks if isinstance(b, ImageContent)] or None
        if deliver_as in ("steer", "followUp") and not self._services.is_streaming():
            await self._queues.add(text, images, follow_up=deliver_as == "followUp", attribution=attribution)
            return
        behavior = "steer" if deliver_as in (None, "aside", "nextTurn") else deliver_as
        await self._prompt(
            text,
            images,
            expand=False,
            streaming_behavior=behavior,
            source="extension",
            attribution=attribution,
        )


def custom_message_from(value: Any) -> CustomMessage:
    """A ``CustomMessage`` from an extension's dict (camelCase or snake_case) or object."""
    if isinstance(value, CustomMessage):
        if not value.timestamp:
            value.timestamp = now_ms()
        return value
    from piko.data.wire import blocks_from_wire
    from piko.platform.dispatch import normalize_result

    data = {"content": value} if isinstance(value, str) else (normalize_result(value) or {})
    content = data.get("content", "")
    if isinstance(content, list):
        content = blocks_from_wire([b for b in content if isinstance(b, dict)]) + [
            b for b in content if not isinstance(b, dict)
        ]
    elif not isinstance(content, str):
        content = str(content)
    return CustomMessage(
        custom_type=str(data.get("custom_type") or "extension"),
        content=content,
        display=bool(data.get("display", True)),
        details=data.get("details"),
        timestamp=now_ms(),
    )
