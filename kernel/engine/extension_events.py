"""Agent-loop events retold to extensions: turn numbers, and ``message_end`` handlers that replace the message."""

from __future__ import annotations

from typing import Any

from piko.data.events import AgentStartEvent
from piko.data.events import MessageEndEvent
from piko.data.events import TurnEndEvent
from piko.data.events import TurnStartEvent
from piko.engine.extension_reach import ExtensionReach
from piko.engine.loop import now_ms
from piko.engine.session_services import SessionServices

# loop events extensions receive as they are, when any extension listens
AS_THEY_ARE = frozenset(
    {"message_start", "message_update", "tool_execution_start", "tool_execution_update",
     "tool_execution_end", "agent_end"}
)  # fmt: skip


class ExtensionEvents(ExtensionReach):
    """Hands each agent-loop event to the extensions through ``dispatcher``, with ``ctx`` and the
    run's abort ``signal()``; counts the turns of a run; a ``message_end`` handler's replacement
    takes the message's place in ``messages()``."""

    def __init__(self, services: SessionServices) -> None:
        super().__init__(services)
        self._turn_index = 0

    async def forward(self, event: Any) -> None:
        """Tell the extensions of ``event`` (whose ``message`` a ``message_end`` handler may replace)."""
        kind = event.TYPE
        d = self._dispatcher
        if kind == "agent_start":
            self._turn_index = 0
            await self._fire("agent_start", AgentStartEvent(session_id=self._services.session_id()))
        elif kind == "turn_start":
            await self._fire(
                "turn_start",
                TurnStartEvent(
                    turn_index=self._turn_index, timestamp=now_ms(), session_id=self._services.session_id()
                ),
            )
        elif kind == "turn_end":
            await self._fire(
                "turn_end",
                TurnEndEvent(
                    turn_index=self._turn_index,
                    message=event.message,
                    tool_results=event.tool_results,
                    session_id=self._services.session_id(),
                ),
            )
            self._turn_index += 1
        elif kind == "message_end":
            if d.has_handlers("message_end"):
                replacement = await self._fire("message_end", MessageEndEvent(message=event.message))
                if replacement is not None and replacement is not event.message:
                    _replace_in_place(self._services.messages(), event.message, replacement)
                    event.message = replacement
        elif kind in AS_THEY_ARE:
            if d.has_handlers(kind):
                if kind == "agent_end":
                    event.session_id = self._services.session_id()
                await self._fire(kind, event)


def _replace_in_place(messages: list[Any], old: Any, new: Any) -> None:
    for i, message in enumerate(messages):
        if message is old:
            messages[i] = new
            return
