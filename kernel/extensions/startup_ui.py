"""The ``ctx.ui`` of handlers that run while piko starts, before any mode's UI exists (pi 1.6's
project-trust context): in an interactive run ``select``, ``confirm`` and ``input`` ask on the
terminal (the question on stderr, the answer from stdin, as the built-in trust question); in
print, JSON and RPC runs they answer their cancel value at once and never read stdin."""

from __future__ import annotations

import asyncio
import sys
from typing import Any
from typing import TextIO

from piko.extensions.ui import NoOpUI
from piko.platform.dispatch import paused_budget


def _label(option: Any) -> str:
    if isinstance(option, dict):
        return str(option.get("label") or option.get("value") or "")
    return str(option)


class StartupTerminalUI(NoOpUI):
    """Dialogs on the terminal before the interactive mode starts; ``notify`` writes to stderr.

    With ``interactive`` False it has no UI (``has_ui`` False): dialogs give ``None`` / ``False``
    without waiting, and ``notify`` still writes its line to stderr (pi's non-interactive rule).
    """

    def __init__(
        self, *, interactive: bool, stdin: TextIO | None = None, stderr: TextIO | None = None
    ) -> None:
        self.has_ui = interactive
        self._stdin = stdin
        self._stderr = stderr

    @property
    def stdin(self) -> TextIO:
        return self._stdin or sys.stdin

    @property
    def stderr(self) -> TextIO:
        return self._stderr or sys.stderr

    async def _read_line(self, prompt: str) -> str | None:
        """One answer from stdin (None at end of input); the handler's budget waits meanwhile."""
        self.stderr.write(prompt)
        self.stderr.flush()
        with paused_budget():
            try:
                line = await asyncio.to_thread(self.stdin.readline)
            except (OSError, ValueError):
                line = ""
        if not line:
            self.stderr.write("\n")
            return None
        return line.rstrip("\r\n")

    async def _choose(self, title: str, labels: list[str]) -> int | None:
        """The index of the label picked by number (an empty answer or end of input: None)."""
        lines = [title, *(f"  {number}. {label}" for number, label in enumerate(labels, 1))]
        self.stderr.write("\n".join(lines) + "\n")
        while True:
            answer = await self._read_line(f"Choice [1-{len(labels)}; Enter: cancel]: ")
            if answer is None or not answer.strip():
                return None
            text = answer.strip()
            if text.isdigit() and 1 <= int(text) <= len(labels):
                return int(text) - 1

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        if not self.has_ui or not options:
            return None
        index = await self._choose(title, [_label(option) for option in options])
        if index is None:
            return None
        chosen = options[index]
        if isinstance(chosen, dict):
            return chosen["value"] if "value" in chosen else _label(chosen)
        return chosen

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        if not self.has_ui:
            return False
        heading = f"{title}\n{message}" if message else title
        return await self._choose(heading, ["Yes", "No"]) == 0

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        if not self.has_ui:
            return None
        hint = f" ({placeholder})" if placeholder else ""
        return await self._read_line(f"{title}{hint}: ")

    def notify(self, message: str, level: str = "info") -> None:
        prefix = {"error": "Error: ", "warning": "Warning: "}.get(level, "")
        self.stderr.write(f"{prefix}{message}\n")
        self.stderr.flush()
