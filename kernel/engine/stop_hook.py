"""``session_stop``: asks the extensions whether the main session may settle, and turns their
continuations into the message of the next turn (omp's stop hook)."""

from __future__ import annotations

from typing import Any

from piko.data.events import SessionStopEvent
from piko.data.messages import CustomMessage
from piko.engine.extension_reach import ExtensionReach
from piko.engine.loop import now_ms
from piko.engine.session_services import SessionServices

MAX_CONTINUATIONS = 8
"""Advisory ``{continue: true}`` requests granted in one run; refusals do not count."""

NO_REASON = (
    "A session_stop hook refused to let the session stop without saying why. "
    "Check whether the task is complete, and finish it if it is not."
)
"""The diagnostic continuation a refusal without a reason receives."""

STOP_CUSTOM_TYPE = "session_stop"
"""The ``custom_type`` of a continuation's message."""


class StopHook(ExtensionReach):
    """Asks ``session_stop`` after each settled run; :meth:`next_turn` is the message of the turn
    the handlers asked for, or None when the session may stop."""

    def __init__(self, services: SessionServices) -> None:
        super().__init__(services)
        self.continuations = 0

    def start_run(self) -> None:
        """A new run from outside (a prompt): the allowance of advisory continuations is full again."""
        self.continuations = 0

    async def next_turn(self) -> CustomMessage | None:
        if not self._dispatcher.has_handlers("session_stop") or _aborted(self._services.messages()):
            return None
        event = SessionStopEvent(
            session_id=self._services.session_id(),
            continuations=self.continuations,
            messages=list(self._services.messages()),
        )
        verdict = await self._fire("session_stop", event)
        if not verdict:
            return None
        if verdict.get("block"):
            text = verdict.get("reason") or NO_REASON
        else:
            if self.continuations >= MAX_CONTINUATIONS:
                return None
            self.continuations += 1
            text = "\n\n".join(verdict.get("additional_context") or []) or "Continue."
        return CustomMessage(custom_type=STOP_CUSTOM_TYPE, content=text, display=False, timestamp=now_ms())


def _aborted(messages: list[Any]) -> bool:
    """Whether the run ended by an abort or an error (the user interrupted, or the provider failed:
    asking for more turns would not help)."""
    for message in reversed(messages):
        if getattr(message, "role", None) == "assistant":
            return getattr(message, "stop_reason", None) in {"aborted", "error"}
    return False
