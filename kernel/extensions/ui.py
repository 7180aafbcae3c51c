"""The extension UI context (``ctx.ui``): dialogs, notifications and editor access.

Modes supply their own implementation; :class:`NoOpUI` is what handlers get where no UI exists
(print mode): dialogs return their cancel value at once, everything else does nothing. It is also
the base of every mode's UI, so each method of pi's ``ExtensionUIContext`` exists in every mode
(:data:`UI_METHODS`): an extension written for the terminal never fails headless, it is inert.
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

    async def ask_dialog(self, *args: Any, **opts: Any) -> Any:
        return None

    def notify(self, message: str, level: str = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None = None) -> None:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        return None

    def set_working_visible(self, visible: bool = True) -> None:
        return None

    def set_working_indicator(self, indicator: Any = None) -> None:
        return None

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
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

    def paste_to_editor(self, text: str) -> None:
        return None

    supports_editor = False

    def set_editor_component(self, factory: Any = None) -> None:
        self._editor_component = factory

    def get_editor_component(self) -> Any:
        """The factory last given to :meth:`set_editor_component` (``None``: the built-in editor)."""
        return getattr(self, "_editor_component", None)

    def add_autocomplete_provider(self, factory: Any) -> None:
        return None

    def on_terminal_input(self, handler: Any) -> Any:
        """Subscribe to raw terminal input; returns the function that unsubscribes."""
        return lambda: None

    async def open_terminal(self, request: Any) -> Any:
        """Run a command in a new multiplexer pane; only the terminal can: ``None`` elsewhere."""
        return None

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        return None

    def get_all_themes(self) -> list[Any]:
        return []

    def get_theme(self, name: str) -> Any:
        return None

    def set_theme(self, theme: Any) -> bool:
        return False

    @property
    def theme(self) -> Any:
        """The current theme: where nothing is drawn, one whose styles give the text back."""
        from piko.extensions.plain_theme import PLAIN_THEME

        return PLAIN_THEME


UI_METHODS: tuple[str, ...] = (
    "select", "confirm", "input", "editor", "custom", "ask_dialog", "notify", "set_status",
    "set_working_message", "set_working_visible", "set_working_indicator",
    "set_hidden_thinking_label", "set_widget", "set_footer", "set_header", "set_title",
    "set_editor_text", "get_editor_text", "paste_to_editor", "set_editor_component",
    "get_editor_component", "add_autocomplete_provider", "on_terminal_input", "get_tools_expanded",
    "set_tools_expanded", "get_all_themes", "get_theme", "set_theme", "open_terminal",
)  # fmt: skip
"""Every method of pi's ``ctx.ui`` (snake_case); ``theme``, ``has_ui`` and ``supports_editor`` are attributes."""


DIALOG_METHODS: tuple[str, ...] = ("select", "confirm", "input", "editor", "custom")
"""The ``ctx.ui`` methods that wait on the user (``ui_prompt_start`` / ``ui_prompt_end``)."""


class PromptWatchingUI:
    """A mode's UI as ``ctx.ui`` gives it: every call passes through, and a dialog (one of
    :data:`DIALOG_METHODS`) is announced with ``announce(start, kind, title, cancelled)``
    (pi 1.6's ``ui_prompt_start``/``ui_prompt_end``); nested dialogs make one span, the outer one.
    A UI without ``has_ui`` (print, JSON mode) waits on nobody and announces nothing."""

    def __init__(self, ui: Any, announce: Any) -> None:
        object.__setattr__(self, "_ui", ui)
        object.__setattr__(self, "_announce", announce)
        object.__setattr__(self, "_open", 0)

    @property
    def wrapped(self) -> Any:
        """The mode's own UI object."""
        return self._ui

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ui, name)
        if name in DIALOG_METHODS and callable(value) and getattr(self._ui, "has_ui", True):
            return self._watched(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._ui, name, value)

    def _watched(self, kind: str, method: Any) -> Any:
        async def dialog(*args: Any, **kwargs: Any) -> Any:
            if self._open == 0:
                title = args[0] if args and isinstance(args[0], str) else str(kwargs.get("title") or "")
                object.__setattr__(self, "_span", (kind, title))
                self._announce(True, kind, title, False)
            object.__setattr__(self, "_open", self._open + 1)
            answer: Any = None
            try:
                answer = await method(*args, **kwargs)
                return answer
            finally:
                object.__setattr__(self, "_open", self._open - 1)
                if self._open == 0:  # the span ends with the last dialog; it is named by the first
                    self._announce(False, *self._span, answer is None)

        return dialog
