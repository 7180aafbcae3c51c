"""The :class:`~piko.plugins.modes.interactive.command_api.InteractiveContext` built-in commands get."""

from __future__ import annotations

from typing import Any

from piko.plugins.modes.interactive.command_api import PickItem
from piko.plugins.modes.interactive.dialogs import SelectPanel


class CommandContext:
    """What a built-in command may use: the app, the session, the UI, and the mode's screen."""

    def __init__(self, mode: Any) -> None:
        self._mode = mode

    @property
    def app(self) -> Any:
        return self._mode.app

    @property
    def session(self) -> Any:
        return self._mode.session

    @property
    def ui(self) -> Any:
        return self._mode.ui

    def show(self, renderable: Any) -> None:
        self._mode.show_renderable(renderable)

    def show_info(self, text: str) -> None:
        self._mode.show_status(text)

    def show_warning(self, text: str) -> None:
        self._mode.show_warning(text)

    def show_error(self, text: str) -> None:
        self._mode.show_error(text)

    async def pick(self, title: str, items: list[PickItem], **options: Any) -> Any:
        """The selector of :meth:`InteractiveContext.pick`; ``options`` are its keyword arguments."""
        panel = SelectPanel(title, list(items), on_change=self._mode.invalidate, **options)
        return await self._mode.show_panel(panel)

    def set_editor_text(self, text: str) -> None:
        self._mode.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self._mode.get_editor_text()

    def redraw_conversation(self) -> None:
        self._mode.render_conversation()

    def request_exit(self) -> None:
        self._mode.request_exit()

    async def run_prompt(self, text: str) -> None:
        await self._mode.handle_input(text)

    def get_tui_mode(self) -> str:
        return str(self._mode.current_tui_mode())

    def set_tui_mode(self, tui_mode: str) -> None:
        self._mode.set_tui_mode(tui_mode)
