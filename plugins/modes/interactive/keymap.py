"""The editor's keys: pi's actions bound to the keys in effect, and what each action does.

Keys come from pi's defaults with ``~/.pi/agent/keybindings.json`` over them (the table in
``commands/keybindings.py``). Escape aborts (or cancels completion, a retry, a compaction, a
``!`` command; twice on an empty editor opens ``/tree``), Ctrl+C clears then quits, Ctrl+D
quits on an empty editor, Enter sends (steers while streaming), Alt+Enter queues a follow-up,
Ctrl+P / Shift+Ctrl+P cycle models, Shift+Tab the thinking level, Ctrl+L opens ``/model``,
Ctrl+O and Ctrl+T expand tools and thinking, Ctrl+G opens ``$EDITOR``, Ctrl+Z suspends.
Extension shortcuts (``register_shortcut``) are bound last.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any

from prompt_toolkit.application import get_app
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding import KeyPressEvent
from prompt_toolkit.keys import Keys

from piko.plugins.modes.interactive.editor import edit_externally
from piko.plugins.modes.interactive.editor import editor_command
from piko.plugins.modes.interactive.keys import bind


def views() -> Any:
    """The message views (imported on first use: they need rich)."""
    from piko.plugins.modes.interactive import views as module

    return module


DOUBLE_PRESS_S = 0.5

# tui.editor actions -> prompt_toolkit's named commands (bound only when the user rebinds them)
EDITOR_COMMANDS = {
    "tui.editor.cursorLeft": "backward-char",
    "tui.editor.cursorRight": "forward-char",
    "tui.editor.cursorWordLeft": "backward-word",
    "tui.editor.cursorWordRight": "forward-word",
    "tui.editor.cursorLineStart": "beginning-of-line",
    "tui.editor.cursorLineEnd": "end-of-line",
    "tui.editor.deleteCharBackward": "backward-delete-char",
    "tui.editor.deleteCharForward": "delete-char",
    "tui.editor.deleteWordBackward": "unix-word-rubout",
    "tui.editor.deleteWordForward": "kill-word",
    "tui.editor.deleteToLineStart": "unix-line-discard",
    "tui.editor.deleteToLineEnd": "kill-line",
    "tui.editor.yank": "yank",
    "tui.editor.yankPop": "yank-pop",
    "tui.editor.undo": "undo",
}


class KeyActions:
    """The key bindings of the editor and the actions behind them."""

    def __init__(self, mode: Any) -> None:
        self.mode = mode
        self._last_ctrl_c = 0.0
        self._last_escape = 0.0

    @property
    def buffer(self) -> Buffer:
        return self.mode.screen.buffer

    # -- bindings --------------------------------------------------------------------------------

    def bindings(self) -> tuple[KeyBindings, list[str]]:
        """The key bindings, and the keys that could not be bound (reported as warnings)."""
        mode = self.mode
        kb = KeyBindings()
        editor = Condition(
            lambda: (
                not mode.screen.panels
                and not mode.screen.overlays
                and get_app().layout.current_buffer is self.buffer
            )
        )
        completing = Condition(lambda: self.buffer.complete_state is not None)
        problems: list[str] = []

        def on(action: str, handler: Any, *, session: bool = True) -> None:
            """Bind ``action``; most actions wait for the session (created after the first frame)."""

            def run(event: KeyPressEvent) -> None:
                if not session or mode.session is not None:
                    handler(event)

            problems.extend(bind(kb, mode.bindings.get(action, []), run, filter=editor))

        on("app.interrupt", lambda e: self.escape())
        on("app.clear", lambda e: self.ctrl_c(), session=False)
        on("app.exit", lambda e: self.ctrl_d(), session=False)
        on("app.suspend", lambda e: self.suspend(e), session=False)
        on("app.thinking.cycle", lambda e: self.cycle_thinking())
        on("app.model.cycleForward", lambda e: mode.spawn(self.cycle_model("forward")))
        on("app.model.cycleBackward", lambda e: mode.spawn(self.cycle_model("backward")))
        on("app.model.select", lambda e: mode.run_builtin_by_name("model", ""))
        on("app.tools.expand", lambda e: mode.set_tools_expanded(not mode.render_context.expanded))
        on("app.thinking.toggle", lambda e: self.toggle_thinking())
        on("app.editor.external", lambda e: mode.spawn(self.external_edit()))
        on("app.message.followUp", lambda e: self.follow_up())
        on("app.message.dequeue", lambda e: self.dequeue())
        on("app.message.copy", lambda e: mode.copy_selection_or_message())
        on("app.clipboard.pasteImage", lambda e: mode.spawn(self.paste_image()))
        on("app.session.new", lambda e: mode.run_builtin_by_name("new", ""))
        on("app.session.tree", lambda e: mode.run_builtin_by_name("tree", ""))
        on("app.session.fork", lambda e: mode.run_builtin_by_name("fork", ""))
        on("app.session.resume", lambda e: mode.run_builtin_by_name("resume", ""))
        on("tui.input.submit", lambda e: self.enter(), session=False)
        on("tui.input.newLine", lambda e: self.buffer.newline(copy_margin=False), session=False)
        on("tui.input.tab", lambda e: self.tab(), session=False)
        kb.add("c-j", filter=editor)(lambda e: self.buffer.newline(copy_margin=False))
        kb.add("up", filter=editor & completing)(lambda e: self.buffer.complete_previous())
        kb.add("down", filter=editor & completing)(lambda e: self.buffer.complete_next())
        kb.add(Keys.BracketedPaste, filter=editor)(lambda e: self.paste(e.data))
        self._fullscreen_keys(kb, problems)
        self._editor_overrides(kb, editor, problems)
        for definition in list(mode.app.registries.shortcuts):
            if not definition.reserved:  # the mode's own keys, bound above
                problems.extend(bind(kb, [definition.key], self._shortcut(definition), filter=editor))
        return kb, problems

    def _fullscreen_keys(self, kb: KeyBindings, problems: list[str]) -> None:
        """Scrolling, prompt jumps and search of the fullscreen transcript (pi's ``tui.altScreen.*``);
        they come before the editor's keys, not before a dialog's."""
        mode = self.mode
        screen = mode.screen
        transcript = Condition(lambda: screen.fullscreen and screen.view is not None and not screen.panels
                               and not screen.overlays)  # fmt: skip
        searching = Condition(
            lambda: screen.searching and get_app().layout.current_buffer is screen.search_buffer
        )

        def view() -> Any:
            return screen.view

        def prompt(item: Any) -> bool:
            return bool(getattr(item, "prompt", False))

        actions: dict[str, Any] = {
            "tui.altScreen.pageUp": lambda e: view().page(-1),
            "tui.altScreen.pageDown": lambda e: view().page(1),
            "tui.altScreen.halfPageUp": lambda e: view().scroll(-max(1, view().height // 2)),
            "tui.altScreen.halfPageDown": lambda e: view().scroll(max(1, view().height // 2)),
            "tui.altScreen.lineUp": lambda e: view().scroll(-1),
            "tui.altScreen.lineDown": lambda e: view().scroll(1),
            "tui.altScreen.previousPrompt": lambda e: view().jump_prompt(-1, prompt),
            "tui.altScreen.nextPrompt": lambda e: view().jump_prompt(1, prompt),
            "tui.altScreen.top": lambda e: view().top(),
            "tui.altScreen.bottom": lambda e: view().bottom(),
            "tui.altScreen.search": lambda e: screen.open_search(),
        }
        for action, handler in actions.items():
            problems.extend(bind(kb, mode.bindings.get(action, []), handler, filter=transcript & ~searching))
        for action, handler in (
            ("tui.altScreen.searchNext", lambda e: view().next_match(-1)),
            ("tui.altScreen.searchPrevious", lambda e: view().next_match(1)),
            ("tui.altScreen.searchClose", lambda e: screen.close_search()),
            ("tui.altScreen.search", lambda e: screen.close_search()),
        ):
            problems.extend(bind(kb, mode.bindings.get(action, []), handler, filter=searching, eager=True))
        kb.add("c-c", filter=searching, eager=True)(lambda e: screen.close_search())

    def _editor_overrides(self, kb: KeyBindings, editor: Any, problems: list[str]) -> None:
        """``tui.editor.*`` actions rebound in keybindings.json (their defaults are the emacs keys)."""
        from prompt_toolkit.key_binding.bindings.named_commands import get_by_name

        from piko.plugins.modes.interactive.commands.keybindings import KEYBINDINGS

        bindings = self.mode.bindings
        for action, name in EDITOR_COMMANDS.items():
            keys = bindings.get(action, [])
            if keys != list(KEYBINDINGS[action][0]):
                problems.extend(bind(kb, keys, get_by_name(name), filter=editor))
        for action, method in (("tui.editor.cursorUp", "auto_up"), ("tui.editor.cursorDown", "auto_down")):
            keys = bindings.get(action, [])
            if keys != list(KEYBINDINGS[action][0]):
                problems.extend(bind(kb, keys, lambda e, m=method: getattr(self.buffer, m)(), filter=editor))

    def _shortcut(self, definition: Any) -> Any:
        mode = self.mode

        async def run() -> None:
            await mode.session_ready.wait()
            try:
                result = definition.handler(mode.session.ctx)
                if hasattr(result, "__await__"):
                    await result
            except Exception as exc:
                mode.show_error(f"Shortcut handler error: {exc}")

        return lambda event: mode.spawn(run())

    # -- actions ---------------------------------------------------------------------------------

    def escape(self) -> None:
        mode = self.mode
        session = mode.session
        if self.buffer.complete_state is not None:
            self.buffer.cancel_completion()
        elif session.retry.is_waiting:
            session.retry.abort()
        elif session.compaction.running:
            session.compaction.abort()
        elif session.is_streaming or mode.run_active:
            self.restore_queued()
            mode.spawn(session.abort())
        elif session.shell.is_running:
            session.shell.abort()
        elif self.buffer.text.lstrip().startswith("!"):
            self.buffer.reset()
        elif not self.buffer.text.strip():
            action = str(mode.settings.get("doubleEscapeAction", "tree") or "tree")
            if action == "none":
                return
            now = time.monotonic()
            if now - self._last_escape < DOUBLE_PRESS_S:
                self._last_escape = 0.0
                mode.run_builtin_by_name("tree" if action == "tree" else "fork", "")
            else:
                self._last_escape = now

    def ctrl_c(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS_S:
            self.mode.request_exit()
        else:
            self.buffer.reset()
            self.mode.pastes.clear()
            self._last_ctrl_c = now

    def ctrl_d(self) -> None:
        if not self.buffer.text:
            self.mode.request_exit()
        else:
            self.buffer.delete()

    def suspend(self, event: KeyPressEvent) -> None:
        if sys.platform == "win32":
            self.mode.show_status("Suspend to background is not supported on Windows")
            return
        event.app.suspend_to_background()

    def tab(self) -> None:
        buffer = self.buffer
        state = buffer.complete_state
        if state is not None and state.completions:
            buffer.apply_completion(state.current_completion or state.completions[0])
            buffer.cancel_completion()
        else:
            buffer.start_completion(select_first=False)

    def enter(self) -> None:
        """Accept a completion (and send a slash command), continue a line ending in ``\\``, or send."""
        buffer = self.buffer
        state = buffer.complete_state
        if state is not None and state.completions:
            slash = buffer.document.text_before_cursor.startswith("/")
            buffer.apply_completion(state.current_completion or state.completions[0])
            buffer.cancel_completion()
            if not slash:
                return
        before = buffer.document.text_before_cursor
        if before.endswith("\\") and not buffer.document.text_after_cursor.strip():
            buffer.delete_before_cursor(1)
            buffer.newline(copy_margin=False)
            return
        self._send(follow_up=False)

    def follow_up(self) -> None:
        self._send(follow_up=True)

    def _send(self, *, follow_up: bool) -> None:
        mode = self.mode
        text = mode.pastes.expand(self.buffer.text)
        if not text.strip():
            return
        self.remember(text)
        if mode.screen.view is not None:
            mode.screen.view.bottom()  # what is sent is shown, in fullscreen too
        self.buffer.reset()
        mode.pastes.clear()
        mode.spawn(mode.handle_input(text, follow_up=follow_up))

    def remember(self, text: str) -> None:
        """Add ``text`` to the prompt history (not twice in a row)."""
        text = text.strip()
        history = self.buffer.history
        strings = history.get_strings()
        if text and (not strings or strings[-1] != text):
            history.append_string(text)

    def dequeue(self) -> None:
        restored = self.restore_queued()
        if restored == 0:
            self.mode.show_status("No queued messages to restore")
        else:
            self.mode.show_status(
                f"Restored {restored} queued message{'s' if restored > 1 else ''} to editor"
            )

    def restore_queued(self) -> int:
        """Queued steering and follow-up messages back into the editor (before what it holds)."""
        mode = self.mode
        cleared = mode.session.queues.clear() if mode.session else None
        queued = [*cleared.steering, *cleared.follow_up] if cleared else []
        queued += [text for text, _mode in mode.compaction_queue]
        mode.compaction_queue = []
        mode.queued = ([], [])
        if queued:
            combined = [t for t in ("\n\n".join(queued), self.buffer.text) if t.strip()]
            mode.set_editor_text("\n\n".join(combined))
        mode.invalidate()
        return len(queued)

    def cycle_thinking(self) -> None:
        level = self.mode.session.models.cycle_thinking_level()
        if level is None:
            self.mode.show_status("Current model does not support thinking")
        else:
            self.mode.show_status(f"Thinking level: {level}")

    async def cycle_model(self, direction: str) -> None:
        session = self.mode.session
        result = await session.models.cycle(direction)
        if result is None:
            self.mode.show_status(
                "Only one model in scope" if session.models.scoped_models else "Only one model available"
            )
            return
        model = result.model
        level = result.thinking_level
        thinking = f" (thinking: {level})" if model.reasoning and level and level != "off" else ""
        self.mode.show_status(f"Switched to {model.name or model.id}{thinking}")

    def toggle_thinking(self) -> None:
        mode = self.mode
        hide = not mode.render_context.hide_thinking
        with contextlib.suppress(OSError):
            mode.settings.set_global("hideThinkingBlock", hide)
        mode.set_hide_thinking(hide)
        mode.show_status(f"Thinking blocks: {'hidden' if hide else 'visible'}")

    async def external_edit(self) -> None:
        if not editor_command():
            self.mode.show_warning("No editor configured. Set $VISUAL or $EDITOR environment variable.")
            return
        text = self.mode.get_editor_text()
        result = await run_in_terminal(lambda: edit_externally(text), in_executor=False)
        if result is not None:
            self.mode.set_editor_text(result)

    def edit_buffer_externally(self, buffer: Buffer) -> None:
        """Ctrl+G in a dialog's editor."""

        async def run() -> None:
            if not editor_command():
                return
            text = buffer.text
            result = await run_in_terminal(lambda: edit_externally(text, ".md"), in_executor=False)
            if result is not None:
                buffer.text = result
                buffer.cursor_position = len(result)

        self.mode.spawn(run())

    async def paste_image(self) -> None:
        """Ctrl+V: an image on the clipboard is saved to a temporary file whose path is inserted."""
        from piko.plugins.modes.interactive.clipboard import read_clipboard_image

        path = await asyncio.to_thread(read_clipboard_image)
        if path:
            self.buffer.insert_text(path)

    def paste(self, text: str) -> None:
        before = self.buffer.document.text_before_cursor
        self.buffer.insert_text(self.mode.pastes.insert_text(text, before))
