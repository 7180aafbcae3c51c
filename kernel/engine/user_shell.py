"""The user's own shell commands (``!cmd`` in the editor, RPC ``bash``): run, recorded, aborted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from piko.data.events import BashResult
from piko.data.events import UserBashEvent
from piko.data.messages import BashExecutionMessage
from piko.engine.loop import now_ms
from piko.engine.session_services import SessionServices
from piko.lib.abort import AbortSlot

NO_SHELL = "No shell is available (the bash plugin is blocked or missing)."


class UserShell:
    """Runs a user's command through the ``user_bash`` event (the bash plugin answers it by
    default) and records the outcome as a ``bashExecution`` message.

    Of its ``services``: ``emit(name, event)`` asks the extensions; ``cwd()`` is where commands
    run; while ``is_streaming()`` the result waits (:meth:`flush_pending`) so it does not land
    inside a turn; ``add(message)`` puts a message in the conversation and the session file.
    """

    def __init__(self, services: SessionServices) -> None:
        self._services = services
        self._command = AbortSlot()
        self._pending: list[BashExecutionMessage] = []

    @property
    def is_running(self) -> bool:
        return self._command.busy

    def abort(self) -> None:
        """Stop the command that runs now."""
        self._command.abort()

    async def execute(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_chunk: Callable[[str], Any] | None = None,
    ) -> BashResult:
        """Run ``command``, record it, and return what it gave (``on_chunk`` sees output as it comes)."""
        with self._command.running() as signal:
            event = UserBashEvent(
                command=command,
                exclude_from_context=exclude_from_context,
                cwd=self._services.cwd(),
                signal=signal,
                on_chunk=on_chunk,
            )
            verdict = await self._services.emit("user_bash", event)
        result = verdict.get("result") if isinstance(verdict, dict) else getattr(verdict, "result", None)
        if result is None:
            result = BashResult(output=NO_SHELL, exit_code=None)
        elif isinstance(result, dict):
            result = BashResult(
                output=str(result.get("output", "")),
                exit_code=result.get("exit_code", result.get("exitCode")),
                cancelled=bool(result.get("cancelled", False)),
                truncated=bool(result.get("truncated", False)),
                full_output_path=result.get("full_output_path", result.get("fullOutputPath")),
            )
        self.record(command, result, exclude_from_context=exclude_from_context)
        return result

    def record(self, command: str, result: BashResult, *, exclude_from_context: bool = False) -> None:
        """Add the outcome of ``command`` to the conversation (after the turn, while one runs)."""
        message = BashExecutionMessage(
            command=command,
            output=result.output,
            exit_code=result.exit_code,
            cancelled=result.cancelled,
            truncated=result.truncated,
            full_output_path=result.full_output_path,
            timestamp=now_ms(),
            exclude_from_context=True if exclude_from_context else None,
        )
        if self._services.is_streaming():
            self._pending.append(message)
        else:
            self._services.add(message)

    def flush_pending(self) -> None:
        """Add the outcomes held back while a turn ran."""
        for message in self._pending:
            self._services.add(message)
        self._pending = []
