"""The conversation written to the session file: messages as the agent finishes them, and ones added between turns."""

from __future__ import annotations

from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import CustomMessage
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.engine.session_services import SessionServices

# what a run writes when a message ends (bash results and summaries are written where they are made)
RUN_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage, CustomMessage)


class SessionRecorder:
    """Appends messages to the session file of the ``services``' ``manager()`` (the session may
    move to another file: ``/new``, ``/resume``, ``/fork``), and to the conversation
    ``messages()`` when they come from outside a run."""

    def __init__(self, services: SessionServices) -> None:
        self._services = services

    def record(self, message: Any) -> None:
        """A message the agent finished (``message_end``): conversation and custom messages are written."""
        if isinstance(message, RUN_MESSAGES):
            self._write(message)

    def add(self, message: Any) -> None:
        """A message from outside a run (a shell command's outcome, an extension's message):
        into the conversation, then the file."""
        self._services.messages().append(message)
        self._write(message)

    def _write(self, message: Any) -> None:
        manager = self._services.manager()
        if isinstance(message, CustomMessage):
            manager.append_custom_message(
                message.custom_type, message.content, message.display, message.details
            )
        else:
            manager.append_message(message)
