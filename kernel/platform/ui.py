"""The extension UI context (``ctx.ui``): dialogs, notifications and editor access.

Modes supply their own implementation; :class:`NoOpUI` is what handlers get where no UI exists
(print mode): dialogs return their cancel value at once, everything else does nothing.
"""

from __future__ import annotations

from typing import Any


class NoOpUI:
    """A UI that shows nothing: ``select``/``input``/``editor`` give ``None``, ``confirm`` ``False``."""

    has_ui = False

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        return None

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        return False

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        return None

    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None:
        return None

    async def custom(self, component: Any, **opts: Any) -> Any:
        return None

    def notify(self, message: str, level: str = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None = None) -> None:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        return None

    def set_widget(self, key: str, content: Any = None, **opts: Any) -> None:
        return None

    def set_footer(self, factory: Any = None) -> None:
        return None

    def set_header(self, factory: Any = None) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""

    def set_editor_component(self, factory: Any = None) -> None:
        return None

    def get_all_themes(self) -> list[Any]:
        return []

    def get_theme(self, name: str) -> Any:
        return None

    def set_theme(self, theme: Any) -> bool:
        return False

    @property
    def theme(self) -> Any:
        """The current theme (``None``: there is nothing to draw)."""
        return None
