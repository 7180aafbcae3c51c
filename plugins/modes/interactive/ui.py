"""``ctx.ui`` in the interactive mode: dialogs in place of the editor, notices, statuses, widgets, themes.

Dialogs (``select``, ``confirm``, ``input``, ``editor``) end with their cancel value (``None``,
``False`` for confirm) on Escape, on a ``timeout`` (milliseconds) or an aborted ``signal``.
``custom(factory)`` shows a prompt_toolkit container: ``factory(done)`` returns it and calls
``done(value)`` to close (``overlay=True``: floating over the transcript in fullscreen).
``set_editor_component(factory)`` replaces the editor's look around its buffer. Widgets are lines
(text or ANSI; ten shown, then a truncation notice), a rich renderable, or a callable returning
one, shown above the editor (``placement="aboveEditor"``, the default) or below it.
``add_autocomplete_provider`` stacks a provider on the editor's completion (see
:mod:`~piko.plugins.modes.interactive.autocomplete`), ``on_terminal_input`` sees raw input first
(:mod:`~piko.plugins.modes.interactive.terminal_input`), ``open_terminal`` runs a command in a new
tmux pane or window (:mod:`~piko.plugins.modes.interactive.terminal_launch`).
"""

from __future__ import annotations

from typing import Any

from piko.extensions.ui import NoOpUI
from piko.platform.dispatch import paused_budget
from piko.plugins.modes.interactive.dialogs import EditorPanel
from piko.plugins.modes.interactive.dialogs import InputPanel
from piko.plugins.modes.interactive.dialogs import Panel
from piko.plugins.modes.interactive.dialogs import SelectPanel
from piko.plugins.modes.interactive.dialogs import pick_items


class _CustomPanel(Panel):
    def __init__(self, factory: Any, **options: Any) -> None:
        super().__init__(**options)
        from prompt_toolkit.layout import to_container

        container = factory(self.close)
        self.container = to_container(container)
        from prompt_toolkit.layout import walk

        windows: list[Any] = [w for w in walk(self.container) if getattr(w, "content", None) is not None]
        focusable = [w for w in windows if w.content.is_focusable()]
        self.focus = focusable[0] if focusable else (windows[0] if windows else self.container)


class InteractiveUI(NoOpUI):
    """The extension UI bound to the running interactive mode; what it does not override
    (``ask_dialog``) is :class:`NoOpUI`'s nothing."""

    has_ui = True
    supports_editor = True

    def __init__(self, mode: Any) -> None:
        self._mode = mode

    # -- dialogs ---------------------------------------------------------------------------------

    async def _show(self, panel: Any) -> Any:
        """Show a dialog; the budget of the handler that opened it stands still meanwhile."""
        with paused_budget():
            return await self._mode.show_panel(panel)

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        panel = SelectPanel(
            title,
            pick_items(list(options)),
            filterable=bool(opts.get("filterable", False)),
            initial=opts.get("initial"),
            on_highlight=opts.get("on_highlight"),
            timeout=opts.get("timeout"),
            signal=opts.get("signal"),
            on_change=self._mode.invalidate,
        )
        return await self._show(panel)

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        text = f"{title}\n{message}" if message else title
        answer = await self.select(text, ["Yes", "No"], **opts)
        return answer == "Yes"

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        panel = InputPanel(
            title,
            placeholder,
            prefill=str(opts.get("prefill") or ""),
            password=bool(opts.get("password")),
            timeout=opts.get("timeout"),
            signal=opts.get("signal"),
            on_change=self._mode.invalidate,
        )
        value = await self._show(panel)
        return value if isinstance(value, str) else None

    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None:
        panel = EditorPanel(
            title,
            prefill,
            external=self._mode.edit_buffer_externally,
            timeout=opts.get("timeout"),
            signal=opts.get("signal"),
            on_change=self._mode.invalidate,
        )
        value = await self._show(panel)
        return value if isinstance(value, str) else None

    async def custom(self, component: Any, **opts: Any) -> Any:
        if not callable(component):
            return None
        try:
            panel = _CustomPanel(component, signal=opts.get("signal"), on_change=self._mode.invalidate)
        except Exception as exc:
            self._mode.show_error(f"Custom component failed: {exc}")
            return None
        if opts.get("overlay"):  # over the transcript in fullscreen; in place of the editor otherwise
            with paused_budget():
                return await self._mode.screen.show_overlay(panel)
        return await self._show(panel)

    # -- notices ---------------------------------------------------------------------------------

    def notify(self, message: str, level: str = "info") -> None:
        if level == "error":
            self._mode.show_error(message)
        elif level == "warning":
            self._mode.show_warning(message)
        else:
            self._mode.show_status(message)

    def set_status(self, key: str, text: str | None = None) -> None:
        self._mode.set_extension_status(key, text)

    def set_working_message(self, message: str | None = None) -> None:
        self._mode.screen.working_message = message
        self._mode.invalidate()

    def set_working_visible(self, visible: bool = True) -> None:
        self._mode.screen.working_visible = bool(visible)
        self._mode.invalidate()

    def set_working_indicator(self, indicator: Any = None) -> None:
        """``{"frames": [...], "interval_ms"/"intervalMs": n}``: the working line's frames, drawn
        verbatim (``[]``: no indicator); ``None`` restores pi's spinner."""
        if indicator is None:
            self._mode.screen.set_working_indicator(None, None)
            return
        get = indicator.get if isinstance(indicator, dict) else lambda name: getattr(indicator, name, None)
        frames = get("frames")
        interval = get("interval_ms") or get("intervalMs")
        self._mode.screen.set_working_indicator(
            tuple(str(f) for f in frames) if isinstance(frames, (list, tuple)) else None,
            float(interval) / 1000 if isinstance(interval, (int, float)) else None,
        )

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        self._mode.render_context.hidden_thinking_label = label or "Thinking..."
        self._mode.invalidate()

    def set_widget(self, key: str, content: Any = None, **opts: Any) -> None:
        placement = opts.get("placement") or "aboveEditor"
        self._mode.set_widget(key, content, below=placement == "belowEditor")

    def set_footer(self, factory: Any = None) -> None:
        self._mode.screen.custom_footer = factory
        self._mode.invalidate()

    def set_header(self, factory: Any = None) -> None:
        self._mode.custom_header = factory

    def set_title(self, title: str) -> None:
        self._mode.set_terminal_title(title)

    # -- the editor ------------------------------------------------------------------------------

    def set_editor_text(self, text: str) -> None:
        self._mode.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self._mode.get_editor_text()

    def paste_to_editor(self, text: str) -> None:
        self._mode.paste(text)

    def set_editor_component(self, factory: Any = None) -> None:
        """``factory(buffer, theme)`` returns a prompt_toolkit container around the editor's buffer
        (the mode's keys keep working on it); ``None`` restores pi's editor."""
        self._previous_editor_component = self.get_editor_component()
        NoOpUI.set_editor_component(self, factory)  # get_editor_component() gives it back
        self._mode.screen.set_editor_component(factory if callable(factory) else None)

    def get_editor_component(self) -> Any:
        """The factory in use (``None``: pi's editor); inside that factory, the one before it."""
        if getattr(self._mode.screen, "building_editor", False):
            return getattr(self, "_previous_editor_component", None)
        return NoOpUI.get_editor_component(self)

    def add_autocomplete_provider(self, factory: Any) -> None:
        self._mode.screen.add_autocomplete_provider(factory)

    def on_terminal_input(self, handler: Any) -> Any:
        return self._mode.screen.input_listeners.add(handler)

    async def open_terminal(self, request: Any) -> Any:
        from piko.plugins.modes.interactive.terminal_launch import open_terminal

        return await open_terminal(request)

    def get_tools_expanded(self) -> bool:
        return bool(self._mode.render_context.expanded)

    def set_tools_expanded(self, expanded: bool) -> None:
        self._mode.set_tools_expanded(bool(expanded))

    # -- themes ----------------------------------------------------------------------------------

    def get_all_themes(self) -> list[Any]:
        themes = self._mode.themes
        return [{"name": t.name, "path": t.path} for t in themes.themes.values()]

    def get_theme(self, name: str) -> Any:
        return self._mode.themes.get(name)

    def set_theme(self, theme: Any) -> Any:
        return self._mode.set_theme(theme)

    @property
    def theme(self) -> Any:
        return self._mode.theme
