"""The bottom region and the printing above it: layout, live region, spinner, footer, panels.

:class:`Screen` builds the prompt_toolkit application (not full screen): the live part of the
transcript, queued messages, the spinner line, widgets, the editor between two rules (or a
dialog in its place), the completion list and the footer. :meth:`Screen.print_lines` puts
final lines into the terminal's scrollback above it: the region is erased, the lines written
and the region drawn again in one synchronized update, so nothing flickers and nothing that
was printed is ever redrawn or wiped.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import ThreadedCompleter
from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text import to_formatted_text
from prompt_toolkit.key_binding import merge_key_bindings
from prompt_toolkit.key_binding.bindings.basic import load_basic_bindings
from prompt_toolkit.key_binding.bindings.emacs import load_emacs_bindings
from prompt_toolkit.layout import BufferControl
from prompt_toolkit.layout import ConditionalContainer
from prompt_toolkit.layout import Dimension
from prompt_toolkit.layout import DynamicContainer
from prompt_toolkit.layout import FormattedTextControl
from prompt_toolkit.layout import HSplit
from prompt_toolkit.layout import Layout
from prompt_toolkit.layout import Window
from prompt_toolkit.styles import Style

from piko.plugins.modes.interactive.autocomplete import StackedCompleter
from piko.plugins.modes.interactive.completion import EditorCompleter
from piko.plugins.modes.interactive.dialogs import Panel
from piko.plugins.modes.interactive.editor import HISTORY_FILE
from piko.plugins.modes.interactive.editor import PromptHistory
from piko.plugins.modes.interactive.footer import Subscription
from piko.plugins.modes.interactive.footer import footer_fragments
from piko.plugins.modes.interactive.terminal_input import TerminalInputListeners
from piko.plugins.modes.interactive.theme import TOKENS
from piko.plugins.modes.interactive.theme import xterm_hex
from piko.plugins.modes.interactive.transcript import join_pieces

SPINNER = ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")
MAX_WIDGET_LINES = 10
"""A widget given as lines shows this many of them, then :data:`WIDGET_TRUNCATED`."""
WIDGET_TRUNCATED = "... (widget truncated)"
WORKING = "__working__"
RETRYING = "__retry__"


FRAME_S = 1 / 60
"""How long streamed deltas may gather before the screen shows them (one frame at 60 Hz)."""


@contextlib.contextmanager
def _one_write(output: Any) -> Iterator[None]:
    """Everything written to ``output`` meanwhile reaches the terminal in one write at the end."""
    output.flush()
    output.flush = lambda: None  # the renderer flushes as it goes; hold that back
    try:
        yield
    finally:
        del output.flush  # the class's own flush again
        output.flush()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _BelowTheTop(HSplit):
    """The bottom region, never as tall as the terminal.

    A region that fills the terminal starts on its top row, and erasing it from there (before
    printing above it) counts as clearing the screen: tmux then copies the whole screen, a stale
    editor and footer included, into the scrollback. One row is always left above the region.
    """

    def preferred_height(self, width: int, max_available_height: int) -> Dimension:
        wanted = super().preferred_height(width, max_available_height)
        cap = max(1, max_available_height - 1)
        return Dimension(
            min=min(wanted.min, cap), max=min(wanted.max, cap), preferred=min(wanted.preferred, cap)
        )


class Screen:
    """The prompt_toolkit application of one interactive run and everything drawn on the terminal."""

    def __init__(self, mode: Any) -> None:
        self.mode = mode
        self.application: Application[Any] | None = None
        self.buffer = Buffer()  # the editor's buffer; replaced by build()
        self.editor_window: Any = None
        self.panels: list[Panel] = []
        self.statuses: dict[str, str] = {}
        self.widgets_above: dict[str, Any] = {}
        self.widgets_below: dict[str, Any] = {}
        self.custom_footer: Any = None
        self.working_message: str | None = None
        self.working_visible = True
        self.spinner_frames: tuple[str, ...] = SPINNER  # ctx.ui.set_working_indicator's, verbatim
        self.spinner_interval = 0.08
        self.loader: str | None = None  # the spinner's message: WORKING, RETRYING, or a text
        self.loader_token = "accent"
        self.retry_deadline: float | None = None
        self.retry_attempt: tuple[int, int] = (0, 0)
        self.frame = 0
        self.started = False  # printing is held back until the start-up output is out
        self.exiting = False
        self._pending: list[str] = []
        self._flush_scheduled = False
        self._refresh_handle: asyncio.TimerHandle | None = None
        self._spinner_task: asyncio.Task[None] | None = None
        self._provider_count: int | None = None
        self._live_line_count = 0
        self._at_top = True  # nothing printed yet: the first print has no blank line before it
        self.fullscreen = False  # the tuiMode in effect
        self.view: Any = None  # the fullscreen transcript viewport (fullscreen.TranscriptView)
        self.overlays: list[Panel] = []
        self.custom_editor: Any = None
        self._custom_editor_built: tuple[Any, Any] | None = None
        self.building_editor = False
        self._default_editor_area: Any = None
        self._buffer_made = False
        self.completer: StackedCompleter | None = None  # made with the buffer
        self._pending_providers: list[Any] = []
        self.input_listeners = TerminalInputListeners()  # ctx.ui.on_terminal_input's
        self.searching = False
        self.search_buffer = Buffer(multiline=False, on_text_changed=self._on_search_text)
        self.search_window: Any = None
        self.subscription = Subscription(Path(mode.app.agent_dir))

    # -- sizes -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        app = self.application
        return app is not None and app.is_running

    def _terminal_size(self) -> tuple[int, int]:
        """Columns and rows: the running application's output, else the terminal's (80x24 unknown)."""
        if self.running:
            assert self.application is not None
            with contextlib.suppress(Exception):
                size = self.application.output.get_size()
                return size.columns, size.rows
        fallback = shutil.get_terminal_size((80, 24))
        return fallback.columns, fallback.lines

    @property
    def width(self) -> int:
        return max(20, self._terminal_size()[0])

    @property
    def height(self) -> int:
        return max(8, self._terminal_size()[1])

    def invalidate(self) -> None:
        if self.running:
            assert self.application is not None
            self.application.invalidate()

    # -- printing --------------------------------------------------------------------------------

    def refresh_soon(self) -> None:
        """Refresh within a frame (``FRAME_S``), once for however many deltas arrive meanwhile:
        a streamed block is read and split at most once a frame, not once a delta."""
        if self._refresh_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.refresh()
            return
        self._refresh_handle = loop.call_later(FRAME_S, self.refresh)

    def refresh(self) -> None:
        """Print what became final in the transcript, then redraw the live region."""
        if self._refresh_handle is not None:
            self._refresh_handle.cancel()
            self._refresh_handle = None
        if not self.started:
            return
        mode = self.mode
        ctx = mode.render_context
        ctx.width = self.width
        # in fullscreen the viewport draws the items in view itself
        pieces = mode.transcript.pump(ctx, draw=not self.fullscreen)
        if pieces:
            self.print_lines(self._spaced(join_pieces(pieces)))
        self.invalidate()

    def _spaced(self, lines: list[str]) -> list[str]:
        """``lines`` (from :func:`join_pieces`) without the blank line before the very first print."""
        if self._at_top and lines and lines[0] == "":
            lines = lines[1:]
        if lines:
            self._at_top = False
        return lines

    def redraw(self) -> None:
        """Draw the whole transcript again as it looks now (after Ctrl+O, Ctrl+T, a session switch).

        The screen and the scrollback are cleared and everything printed so far is printed again,
        in one synchronized update; what is still live stays in the bottom region.
        """
        if not self.started:
            return
        if self.fullscreen:
            self.invalidate()  # the viewport draws items as they look now
            return
        ctx = self.mode.render_context
        ctx.width = self.width
        transcript = self.mode.transcript
        transcript.pump(ctx)  # what became final is part of the reprint
        self._pending = []
        self._at_top = True
        lines = self._spaced(join_pieces(transcript.printed_pieces(ctx)))
        text = "\n".join(lines) + "\n" if lines else ""
        app = self.application
        if app is None or not app.is_running or self.exiting:
            return
        output = app.output
        with _one_write(output):
            output.write_raw("\x1b[?2026h")
            output.reset_attributes()
            # home, clear the screen, then the scrollback (tmux copies a cleared screen into it first)
            output.write_raw("\x1b[H\x1b[2J\x1b[3J\n" + text)
            self._draw_region_here(app)
            output.write_raw("\x1b[?2026l")

    def print_remaining(self) -> None:
        """After the application ended: what was still live is printed (the last status, say).

        Leaving fullscreen, the whole transcript is printed into the normal screen, unless the
        ``fullscreenExitOutput`` setting is ``resume-hint``."""
        mode = self.mode
        mode.transcript.seal()
        ctx = mode.render_context
        ctx.width = self.width
        pieces = mode.transcript.pump(ctx, draw=not self.fullscreen)
        if self.fullscreen:
            if str(mode.settings.get("fullscreenExitOutput") or "transcript") == "resume-hint":
                return
            self._at_top = True
            pieces = [piece for item in mode.transcript.all for piece in item.full(ctx)]
        lines = self._pending + self._spaced(join_pieces(pieces))
        self._pending = []
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()

    def print_lines(self, lines: list[str]) -> None:
        """Put ``lines`` into the scrollback (batched; the live region shows them until then)."""
        if not self.running or self.exiting:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            return
        self._pending.extend(lines)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Print the pending lines over the bottom region and draw it again below them: one frame.

        The region is not erased first: an erased region would show for a moment (where the
        terminal has no synchronized updates, as tmux 3.3) as an editor and footer gone. The lines
        overwrite it from its top, each cleared to its end, and drawing the region again clears
        what is left of the old one; all of it goes to the terminal in one write.
        """
        self._flush_scheduled = False
        lines, self._pending = self._pending, []
        if not lines:
            return
        app = self.application
        if app is None or not app.is_running:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            return
        output = app.output
        renderer = app.renderer
        with _one_write(output):
            output.write_raw("\x1b[?2026h")  # synchronized update (ignored where unsupported)
            output.cursor_backward(renderer._cursor_pos.x)
            output.cursor_up(renderer._cursor_pos.y)
            output.reset_attributes()
            output.write_raw("".join(f"{line}\x1b[0m\x1b[K\n" for line in lines))
            self._draw_region_here(app)
            output.write_raw("\x1b[?2026l")

    @staticmethod
    def _draw_region_here(app: Application[Any]) -> None:
        """Draw the bottom region anew from the cursor (the old one is forgotten, not erased)."""
        app.renderer.reset(leave_alternate_screen=False)
        try:
            app._redraw()  # at once, so the region is never missing from a frame
        except Exception:
            app.invalidate()

    def copy_selection(self) -> bool:
        """Copy what is selected in the fullscreen transcript; False when nothing is."""
        return bool(self.fullscreen and self.view is not None and self.view.copy())

    def write_raw(self, sequence: str) -> None:
        """A control sequence for the terminal (a title)."""
        if self.running:
            assert self.application is not None
            self.application.output.write_raw(sequence)
            self.application.output.flush()
        elif sys.stdout.isatty():
            sys.stdout.write(sequence)
            sys.stdout.flush()

    # -- the spinner -----------------------------------------------------------------------------

    def set_loader(self, message: str | None, token: str = "accent") -> None:
        self.loader = message
        self.loader_token = token
        if message is not None:
            self.start_spinner()
        self.invalidate()

    def start_spinner(self) -> None:
        if self._spinner_task is None or self._spinner_task.done():
            self._spinner_task = asyncio.get_running_loop().create_task(self._spin())

    async def _spin(self) -> None:
        while self.loader is not None or self.mode.transcript.animated():
            await asyncio.sleep(self.spinner_interval)
            self.frame += 1
            self.invalidate()

    def spinner_frame(self) -> str:
        frames = self.spinner_frames
        return frames[self.frame % len(frames)] if frames else ""

    def set_working_indicator(self, frames: tuple[str, ...] | None, interval: float | None) -> None:
        """The working line's frames (``()``: none shown) and their interval; ``None``: pi's spinner."""
        self.spinner_frames = SPINNER if frames is None else frames
        self.spinner_interval = 0.08 if frames is None or not interval or interval <= 0 else interval
        self.invalidate()

    def stop(self) -> None:
        if self._spinner_task is not None:
            self._spinner_task.cancel()

    # -- panels ----------------------------------------------------------------------------------

    async def show_panel(self, panel: Panel) -> Any:
        """Show ``panel`` in place of the editor until it is answered; its answer."""
        return await self._answer_from(self.panels, panel, self._focus_top)

    async def _answer_from(self, stack: list[Panel], panel: Panel, focus: Callable[[], None]) -> Any:
        """Keep ``panel`` on ``stack`` (focused by ``focus``) until it is answered; its answer."""
        if panel.closed:
            return panel.future.result()
        stack.append(panel)
        focus()
        try:
            return await panel.result()
        finally:
            if panel in stack:
                stack.remove(panel)
            self._focus_top()

    def _focus_top(self) -> None:
        """Focus the newest overlay or panel, else the editor (or the custom editor's window)."""
        self._focus(self._focus_target())

    def _focus_target(self) -> Any:
        if self.overlays and self.fullscreen:
            return self.overlays[-1].focus
        if self.panels:
            return self.panels[-1].focus
        if self.searching and self.fullscreen:
            return self.search_window
        return self._editor_focus()

    def _editor_focus(self) -> Any:
        if self.custom_editor is not None:
            container = self._custom_editor_container()
            if container is not None:
                from prompt_toolkit.layout import walk

                for window in walk(container):
                    content = getattr(window, "content", None)
                    if getattr(content, "buffer", None) is self.buffer:
                        return window
        return self.editor_window

    # -- the application -------------------------------------------------------------------------

    def style(self) -> Style:
        theme = self.mode.theme
        rules: dict[str, str] = {}
        for token in TOKENS:
            rules[f"t-{token.lower()}"] = theme.pt_color(token)
            rules[f"bg-{token.lower()}"] = theme.pt_color(token, bg=True)
        rules["border"] = theme.pt_color("borderMuted")
        return Style.from_dict(rules)

    def _border_style(self) -> str:
        mode = self.mode
        if self.buffer.text.lstrip().startswith("!"):
            color = mode.theme.color("bashMode")
        else:
            color = mode.theme.thinking_border(mode.session.thinking_level if mode.session else "off")
        if color is None:
            return ""
        if color.startswith("color("):
            color = xterm_hex(int(color[6:-1]))
        return f"fg:{color}"

    def history_ready(self, session_entries: list[str]) -> None:
        """The session is known: Up browses its user messages first, then the saved history."""
        history = self.buffer.history
        if isinstance(history, PromptHistory):
            history.release(session_entries)

    def _make_buffer(self) -> Buffer:
        """The editor's buffer (made once: it survives a switch between the two modes)."""
        mode = self.mode
        loop = asyncio.get_running_loop() if _loop_running() else None
        completer = self.completer = StackedCompleter(
            EditorCompleter(mode.command_entries, str(mode.app.cwd)), loop
        )

        def completing_context() -> bool:
            before = self.buffer.document.text_before_cursor
            if before.startswith("/") and "\n" not in before:
                return True
            word = before.split()[-1] if before and not before[-1].isspace() else ""
            return word.startswith("@") or word[:1] in completer.trigger_characters

        for factory in self._pending_providers:
            try:
                completer.add(factory)
            except Exception as exc:
                mode.show_error(f"Autocomplete provider failed: {exc}")
        self._pending_providers.clear()

        return Buffer(
            multiline=True,
            history=PromptHistory(mode.app.agent_dir / HISTORY_FILE, held=True),
            completer=ThreadedCompleter(completer),
            complete_while_typing=Condition(completing_context),
            enable_history_search=False,
            on_text_changed=lambda _b: self.invalidate(),
        )

    def _editor_area(self) -> Any:
        """The editor between two rules, or what ``ctx.ui.set_editor_component`` put in its place."""
        if self.custom_editor is not None:
            container = self._custom_editor_container()
            if container is not None:
                return container
        return self._default_editor_area

    def _custom_editor_container(self) -> Any:
        factory = self.custom_editor
        if self._custom_editor_built is not None and self._custom_editor_built[0] is factory:
            return self._custom_editor_built[1]
        from prompt_toolkit.layout import to_container

        self.building_editor = True  # get_editor_component() gives the one before meanwhile
        try:
            container = to_container(factory(self.buffer, self.mode.theme))
        except Exception as exc:
            self.custom_editor = None
            self.mode.show_error(f"Custom editor failed: {exc}")
            return None
        finally:
            self.building_editor = False
        self._custom_editor_built = (factory, container)
        return container

    def add_autocomplete_provider(self, factory: Any) -> None:
        """Stack an extension's autocomplete provider on the editor's (kept until the buffer exists)."""
        if self.completer is None:
            self._pending_providers.append(factory)
        else:
            self.completer.add(factory)

    def set_editor_component(self, factory: Any) -> None:
        """``factory(buffer, theme)`` returns a container holding the editor's buffer; None restores."""
        self.custom_editor = factory
        self._custom_editor_built = None
        self.invalidate()
        self._focus_top()

    def build(self, key_bindings: Any) -> Application[Any]:
        """The application of the mode in effect: the transcript (a viewport in fullscreen, the
        live region in regular mode), queue, spinner, widgets, editor or dialog, completions, footer."""
        from prompt_toolkit.layout import Float
        from prompt_toolkit.layout import FloatContainer

        mode = self.mode
        if self._buffer_made is False:
            self.buffer = self._make_buffer()
            self._buffer_made = True
        self.editor_window = Window(
            BufferControl(self.buffer),
            height=lambda: Dimension(min=1, max=max(3, self.height // 2)),
            wrap_lines=True,
            dont_extend_height=True,
        )
        self._default_editor_area = HSplit(
            [
                Window(char="─", height=1, style=self._border_style),
                self.editor_window,
                Window(char="─", height=1, style=self._border_style),
            ]
        )
        self._custom_editor_built = None
        bottom: list[Any] = [
            ConditionalContainer(
                Window(FormattedTextControl(self._queue_fragments), dont_extend_height=True),
                filter=Condition(lambda: bool(mode.queued[0] or mode.queued[1] or mode.compaction_queue)),
            ),
            ConditionalContainer(
                Window(FormattedTextControl(self._loader_fragments), dont_extend_height=True),
                filter=Condition(lambda: self.loader is not None and self.working_visible),
            ),
            Window(
                FormattedTextControl(lambda: self._widget_fragments(self.widgets_above, True)),
                dont_extend_height=True,
            ),
            DynamicContainer(lambda: self.panels[-1].container if self.panels else self._editor_area()),
            ConditionalContainer(
                Window(FormattedTextControl(self._completion_fragments), dont_extend_height=True),
                filter=Condition(lambda: not self.panels and self.buffer.complete_state is not None),
            ),
            ConditionalContainer(
                Window(
                    FormattedTextControl(lambda: self._widget_fragments(self.widgets_below, False)),
                    dont_extend_height=True,
                ),
                filter=Condition(lambda: bool(self.widgets_below)),
            ),
            Window(FormattedTextControl(self._footer_fragments), dont_extend_height=True),
        ]
        if self.fullscreen:
            body: Any = HSplit([self._viewport(), self._search_bar(), *bottom])
            body = FloatContainer(
                body,
                floats=[
                    Float(
                        content=DynamicContainer(
                            lambda: self.overlays[-1].container if self.overlays else Window(height=0)
                        ),
                        top=1,
                    )
                ],
            )
        else:
            live = ConditionalContainer(
                Window(
                    FormattedTextControl(self._live_fragments, get_cursor_position=self._live_end),
                    dont_extend_height=True,
                    wrap_lines=False,
                ),
                filter=Condition(lambda: bool(self._pending) or len(mode.transcript) > 0),
            )
            body = _BelowTheTop([live, *bottom])
        from prompt_toolkit.output.color_depth import ColorDepth

        truecolor = mode.render_context.color_system == "truecolor"
        application: Application[Any] = Application(
            layout=Layout(body, focused_element=self._focus_target()),  # a dialog stays open across a switch
            key_bindings=merge_key_bindings([load_basic_bindings(), load_emacs_bindings(), key_bindings]),
            style=self.style(),
            include_default_pygments_style=False,
            full_screen=self.fullscreen,
            mouse_support=self.fullscreen,
            erase_when_done=not self.fullscreen,
            color_depth=ColorDepth.TRUE_COLOR if truecolor else ColorDepth.DEPTH_8_BIT,
            min_redraw_interval=0.03,
            enable_page_navigation_bindings=False,
        )
        application.timeoutlen = 0.05  # a lone Escape is not kept waiting for a key sequence
        application.ttimeoutlen = 0.05
        self.input_listeners.install(application.key_processor)
        self.application = application
        return application

    # -- fullscreen ------------------------------------------------------------------------------

    def _viewport(self) -> Any:
        from prompt_toolkit.layout import VSplit

        from piko.plugins.modes.interactive.fullscreen import TranscriptView

        if self.view is None:
            self.view = TranscriptView(self.mode, on_change=self.invalidate)
        view = self.view
        settings = self.mode.settings
        view.copy_on_select = settings.get("fullscreenCopyOnSelect", True) is not False
        wheel = settings.get("fullscreenWheelScrollLines", "auto")
        view.wheel_lines = int(wheel) if isinstance(wheel, int) and 1 <= wheel <= 100 else 3
        scrollbar_setting = str(settings.get("fullscreenScrollbar") or "auto")

        def show_scrollbar() -> bool:
            if scrollbar_setting == "hidden":
                return False
            return scrollbar_setting == "always" or not view.follow

        scrollbar = Window(
            FormattedTextControl(lambda: view.scrollbar_fragments(max(1, view.height))), width=1
        )
        return VSplit(
            [
                Window(view, wrap_lines=False),
                ConditionalContainer(scrollbar, filter=Condition(show_scrollbar)),
            ]
        )

    def _search_bar(self) -> Any:
        """``Search:`` and the query, with the match count, while searching the transcript."""
        from prompt_toolkit.layout.processors import BeforeInput

        self.search_window = Window(
            BufferControl(
                self.search_buffer,
                input_processors=[BeforeInput(" Search: ", style="class:t-accent")],
            ),
            height=1,
        )
        status = Window(
            FormattedTextControl(
                lambda: [
                    ("class:t-muted", f" {self.view.search_status() if self.view else ''}  "),
                    ("class:t-dim", "enter previous · shift+enter next · escape close"),
                ]
            ),
            height=1,
            dont_extend_width=True,
        )
        from prompt_toolkit.layout import VSplit

        return ConditionalContainer(
            VSplit([self.search_window, status]), filter=Condition(lambda: self.searching)
        )

    def open_search(self) -> None:
        if not self.fullscreen or self.view is None:
            return
        self.searching = True
        self.search_buffer.reset()
        app = self.application
        if app is not None:
            with contextlib.suppress(ValueError):
                app.layout.focus(self.search_window)
        self.invalidate()

    def close_search(self) -> None:
        self.searching = False
        if self.view is not None:
            self.view.close_search()
        self._focus_top()

    def _on_search_text(self, _buffer: Any) -> None:
        if self.view is not None and self.searching:
            self.view.search(self.search_buffer.text)

    async def show_overlay(self, panel: Panel) -> Any:
        """``panel`` floating over the transcript (fullscreen), else in place of the editor."""
        if not self.fullscreen:
            return await self.show_panel(panel)
        return await self._answer_from(self.overlays, panel, lambda: self._focus(panel.focus))

    def _focus(self, target: Any) -> None:
        self.invalidate()
        app = self.application
        if app is not None:
            with contextlib.suppress(ValueError):
                app.layout.focus(target)

    # -- fragments -------------------------------------------------------------------------------

    def _live_fragments(self) -> StyleAndTextTuples:
        mode = self.mode
        ctx = mode.render_context
        ctx.width = self.width
        budget = max(3, self.height - self._bottom_height())
        ctx.live_lines = budget
        lines = list(self._pending) + join_pieces(mode.transcript.live_pieces(ctx))
        if len(lines) > budget:
            lines = lines[-budget:]
        self._live_line_count = len(lines)
        if not lines:
            return []
        return to_formatted_text(ANSI("\n".join(lines)))

    def _live_end(self) -> Point:
        """The live region's last line: when the region must shrink, its end stays in view."""
        return Point(0, max(0, self._live_line_count - 1))

    def _bottom_height(self) -> int:
        """About how many rows everything under the live region takes."""
        mode = self.mode
        height = min(self.buffer.document.line_count, max(3, self.height // 2)) + 2 + 2 + 1
        height += 1 if self.statuses else 0
        if self.loader is not None:
            height += 2
        if mode.queued[0] or mode.queued[1]:
            height += 2 + len(mode.queued[0]) + len(mode.queued[1])
        if self.buffer.complete_state is not None:
            height += 6
        return height

    def _queue_fragments(self) -> StyleAndTextTuples:
        mode = self.mode
        steering, follow_up = mode.queued
        rows = [("Steering", t) for t in steering] + [("Follow-up", t) for t in follow_up]
        rows += [("Follow-up" if m == "followUp" else "Steering", t) for t, m in mode.compaction_queue]
        width = self.width - 2
        out: StyleAndTextTuples = [("", "\n")]
        for prefix, text in rows:
            line = f" {prefix}: {text}".replace("\n", " ")
            out.append(("class:t-dim", (line[: width - 3] + "..." if len(line) > width else line) + "\n"))
        out.append(("class:t-dim", f" ↳ {mode.key_text('app.message.dequeue')} to edit all queued messages"))
        return out

    def _loader_fragments(self) -> StyleAndTextTuples:
        mode = self.mode
        message = self.loader or ""
        if self.loader == RETRYING and self.retry_deadline is not None:
            left = max(0, int(self.retry_deadline - time.monotonic() + 0.999))
            attempt, total = self.retry_attempt
            message = (
                f"Retrying ({attempt}/{total}) in {left}s... ({mode.key_text('app.interrupt')} to cancel)"
            )
        elif self.loader == WORKING:
            message = self.working_message or f"Working... ({mode.key_text('app.interrupt')} to interrupt)"
        if self.spinner_frames is SPINNER:
            frame: StyleAndTextTuples = [(f"class:t-{self.loader_token}", self.spinner_frame() + " ")]
        else:  # an extension's frames, drawn verbatim (their own colours); none: no indicator
            frame = to_formatted_text(ANSI(self.spinner_frame() + " ")) if self.spinner_frames else []
        return [("", "\n "), *frame, ("class:t-muted", message)]

    def _widget_fragments(self, widgets: dict[str, Any], above: bool) -> StyleAndTextTuples:
        if not widgets:
            return [("", "")] if above else []  # above the editor: a blank line when empty (pi's spacer)
        out: StyleAndTextTuples = [("", "\n")] if above else []
        for index, content in enumerate(widgets.values()):
            lines = self.widget_lines(content)
            truncated = isinstance(content, (list, tuple)) and len(lines) > MAX_WIDGET_LINES
            if index:
                out.append(("", "\n"))
            out.extend(to_formatted_text(ANSI("\n".join(lines[:MAX_WIDGET_LINES] if truncated else lines))))
            if truncated:  # pi's notice under a list of lines cut at ten
                out.append(("class:t-muted", "\n" + WIDGET_TRUNCATED))
        return out

    def widget_lines(self, content: Any) -> list[str]:
        """A widget's lines: text, a list of lines, a rich renderable, or a callable giving one."""
        mode = self.mode
        try:
            if callable(content):
                content = content(mode.theme)
            if content is None:
                return []
            if isinstance(content, str):
                return content.split("\n")
            if isinstance(content, (list, tuple)):
                return [str(line) for line in content]
            return list(mode.render_context.painter.lines(content, self.width))
        except Exception as exc:
            return [f"[widget error: {exc}]"]

    def _completion_fragments(self) -> StyleAndTextTuples:
        state = self.buffer.complete_state
        if state is None or not state.completions:
            return []
        completions = state.completions
        maximum = max(3, min(20, int(self.mode.settings.get("autocompleteMaxVisible", 5) or 5)))
        index = state.complete_index if state.complete_index is not None else 0
        start = max(0, min(index - maximum // 2, len(completions) - maximum))
        visible = completions[start : start + maximum]
        name_width = min(32, max(len(c.display_text) for c in visible) + 2)
        out: StyleAndTextTuples = []
        for offset, completion in enumerate(visible):
            selected = start + offset == index
            if out:
                out.append(("", "\n"))
            style = "class:t-accent" if selected else ""
            out.append((style, ("→ " if selected else "  ") + completion.display_text.ljust(name_width)))
            meta = completion.display_meta_text
            if meta:
                room = max(0, self.width - name_width - 4)
                out.append((style or "class:t-muted", meta[:room]))
        if len(completions) > maximum:
            out.append(("", "\n"))
            out.append(("class:t-dim", f"  ({index + 1}/{len(completions)})"))
        return out

    def _footer_fragments(self) -> StyleAndTextTuples:
        mode = self.mode
        if mode.session is None:
            return [("class:t-dim", str(mode.app.cwd))]
        if self.custom_footer is not None:
            with contextlib.suppress(Exception):
                value = self.custom_footer(self.width) if callable(self.custom_footer) else self.custom_footer
                if value is not None:
                    lines = value if isinstance(value, list) else self.widget_lines(value)
                    return to_formatted_text(ANSI("\n".join(str(x) for x in lines)))
        if self._provider_count is None:
            try:
                self._provider_count = len({m.provider for m in mode.app.model_registry.available_models()})
            except Exception:
                self._provider_count = 1
        model = mode.session.model
        return footer_fragments(
            mode.session,
            self.width,
            data=mode.footer_data,
            branch=mode.git.get(),
            statuses=self.statuses,
            provider_count=self._provider_count,
            using_subscription=bool(model is not None and self.subscription.uses(model.provider)),
        )
