"""The interactive mode: start-up, input and slash-command dispatch, and what the other parts share.

The screen is the terminal's normal scrollback plus a small prompt_toolkit application at the
bottom (not full screen). Whatever is final (a user message, a finished markdown block, a tool
that completed, a notice) is printed once above that application and never redrawn, so
nothing is ever wiped from the scrollback; only what still changes (the markdown block being
streamed, running tools, the spinner, queued messages) lives in the bottom region with the
editor and the footer. The parts: :mod:`.screen` (drawing), :mod:`.keymap` (keys),
:mod:`.events` (session events to transcript items), :mod:`.transcript` (what is final),
:mod:`.ui` (``ctx.ui``), :mod:`.context` (what built-in commands get).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any

from piko.extensions.extension_api import CUSTOM_ENTRY_CHANNEL
from piko.lib.exit_signals import on_exit_signals
from piko.plugins.modes.interactive.completion import CommandEntry
from piko.plugins.modes.interactive.context import CommandContext
from piko.plugins.modes.interactive.dialogs import Panel
from piko.plugins.modes.interactive.editor import Pastes
from piko.plugins.modes.interactive.events import SessionEvents
from piko.plugins.modes.interactive.footer import FooterData
from piko.plugins.modes.interactive.footer import GitBranch
from piko.plugins.modes.interactive.keymap import KeyActions
from piko.plugins.modes.interactive.render import color_system
from piko.plugins.modes.interactive.screen import Screen
from piko.plugins.modes.interactive.theme import Theme
from piko.plugins.modes.interactive.theme import ThemeSet
from piko.plugins.modes.interactive.transcript import BashItem
from piko.plugins.modes.interactive.transcript import RenderContext
from piko.plugins.modes.interactive.transcript import StaticItem
from piko.plugins.modes.interactive.transcript import Transcript
from piko.plugins.modes.interactive.ui import InteractiveUI

TUI_MODES = ("fullscreen", "regular")
DEFAULT_TUI_MODE = "fullscreen"  # pi 1.6's default


def views() -> Any:
    """The message views (imported on first use: they need rich)."""
    from piko.plugins.modes.interactive import views as module

    return module


def load_builtin_commands() -> list[Any]:
    """The built-in slash commands (``BUILTIN_COMMANDS`` of the ``commands`` package), if present."""
    try:
        from piko.plugins.modes.interactive.commands import BUILTIN_COMMANDS
    except ImportError:
        return []
    return list(BUILTIN_COMMANDS)


def default_bindings(app: Any) -> dict[str, list[str]]:
    """pi's key bindings with the user's ``keybindings.json`` over them."""
    from piko.plugins.modes.interactive.commands.keybindings import effective_bindings

    return effective_bindings(app)


class InteractiveMode:
    """One interactive run (see the module docstring)."""

    def __init__(self, app: Any, *, builtin_commands: list[Any] | None = None) -> None:
        self.app = app
        self.settings = app.settings
        self.session: Any = None
        self._session_manager: Any = None  # opened before the screen, handed to the session
        self.ui = InteractiveUI(self)
        self.commands = builtin_commands if builtin_commands is not None else load_builtin_commands()
        self.command_context = CommandContext(self)
        self.themes = ThemeSet()
        self.theme, theme_error = self.themes.choose(self._theme_setting())
        self.notices: list[tuple[str, str]] = [("error", theme_error)] if theme_error else []
        self.bindings = default_bindings(app)
        self.render_context = RenderContext(
            theme=self.theme,
            expand_key=self.key_text("app.tools.expand"),
            cwd=str(app.cwd),
            color_system=color_system(),
            hide_thinking=bool(self.settings.get("hideThinkingBlock", False)),
        )
        self.transcript = Transcript()
        self.pastes = Pastes()
        self.footer_data = FooterData()
        self.git = GitBranch(str(app.cwd))
        self.screen = Screen(self)
        self.keys = KeyActions(self)
        self.events = SessionEvents(self)
        self.custom_header: Any = None
        self.queued: tuple[list[str], list[str]] = ([], [])
        self.compaction_queue: list[tuple[str, str]] = []
        self.exit_code = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._run_task: asyncio.Task[None] | None = None
        self._fatal: str | None = None
        self.session_ready = asyncio.Event()
        self._switch_to: str | None = None

    # ------------------------------------------------------------------------------------------
    # Shared helpers
    # ------------------------------------------------------------------------------------------

    def _theme_setting(self) -> str | None:
        value = self.settings.get("theme")
        return value if isinstance(value, str) and value else None

    def key_text(self, action: str) -> str:
        """The keys of ``action`` as pi's hints write them (``ctrl+c``, ``left/ctrl+b``)."""
        return "/".join(self.bindings.get(action, []))

    def key_map(self) -> dict[str, str]:
        return {action: self.key_text(action) for action in self.bindings}

    @property
    def version(self) -> str:
        from piko.version import __version__

        return __version__

    def spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        """Run ``coroutine`` in the background; its errors are shown, not raised."""
        task = asyncio.get_running_loop().create_task(self._guarded(coroutine))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guarded(self, coroutine: Any) -> Any:
        try:
            return await coroutine
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.show_error(str(exc) or type(exc).__name__)
            return None

    def invalidate(self) -> None:
        self.screen.invalidate()

    # ------------------------------------------------------------------------------------------
    # What others show
    # ------------------------------------------------------------------------------------------

    def add_item(self, item: Any) -> Any:
        self.transcript.add(item)
        self.screen.refresh()
        return item

    def show_renderable(self, renderable: Any) -> None:
        if isinstance(renderable, str):
            from rich.padding import Padding
            from rich.text import Text

            renderable = Padding(Text.from_ansi(renderable), (0, 1))
        self.add_item(StaticItem(renderable))

    def show_status(self, text: str) -> None:
        """A dim status line; a status right after another replaces it (as pi's)."""
        self.transcript.status(text, lambda theme, t: views().status_line(theme, t))
        self.screen.refresh()

    def show_warning(self, text: str) -> None:
        self.add_item(StaticItem(lambda ctx: views().warning_line(ctx.theme, text)))

    def show_error(self, text: str) -> None:
        self.add_item(StaticItem(lambda ctx: views().error_line(ctx.theme, text)))

    async def show_panel(self, panel: Panel) -> Any:
        return await self.screen.show_panel(panel)

    def render_conversation(self, *, replace: bool = True) -> None:
        """Show the session's conversation; ``replace``: in place of the one shown (after /new,
        /resume, /tree, /fork), the screen drawn again from the header."""
        self.render_context.hide_thinking = bool(self.settings.get("hideThinkingBlock", False))
        if replace:
            self.transcript.clear_conversation()
            self.events.reset()
        self.events.render_conversation()
        if replace:
            self.screen.redraw()

    def set_editor_text(self, text: str) -> None:
        buffer = self.screen.buffer
        buffer.text = text
        buffer.cursor_position = len(text)
        self.invalidate()

    def get_editor_text(self) -> str:
        return self.pastes.expand(self.screen.buffer.text)

    def paste(self, text: str) -> None:
        self.keys.paste(text)

    def edit_buffer_externally(self, buffer: Any) -> None:
        self.keys.edit_buffer_externally(buffer)

    def set_extension_status(self, key: str, text: str | None) -> None:
        statuses = self.screen.statuses
        if text is None:
            statuses.pop(key, None)
        else:
            statuses[key] = str(text)
        self.invalidate()

    def set_widget(self, key: str, content: Any, *, below: bool) -> None:
        screen = self.screen
        screen.widgets_above.pop(key, None)
        screen.widgets_below.pop(key, None)
        if content is not None:
            (screen.widgets_below if below else screen.widgets_above)[key] = content
        self.invalidate()

    def set_terminal_title(self, title: str) -> None:
        self.screen.write_raw(f"\x1b]0;{title}\x07")

    def update_title(self) -> None:
        """pi's title: ``π - <session name> - <folder>``."""
        if self.session is None:
            return
        base = os.path.basename(str(self.session.cwd)) or str(self.session.cwd)
        name = self.session.session_manager.get_session_name()
        self.set_terminal_title(f"π - {name} - {base}" if name else f"π - {base}")

    def set_tools_expanded(self, expanded: bool) -> None:
        """Expand or collapse tool output (and the start-up help) in place, and say so as pi does."""
        if expanded == bool(self.render_context.expanded):
            return
        self.render_context.expanded = expanded
        self.screen.redraw()
        self.show_status(f"Tool output: {'expanded' if expanded else 'collapsed'}")

    def set_hide_thinking(self, hide: bool) -> None:
        """Hide or show thinking blocks in place."""
        self.render_context.hide_thinking = hide
        self.screen.redraw()

    def copy_selection_or_message(self) -> None:
        """Ctrl+X: the transcript selection (fullscreen), else the last agent message (``/copy``)."""
        if self.screen.copy_selection():
            return
        self.run_builtin_by_name("copy", "")

    def set_theme(self, theme: Any) -> dict[str, Any]:
        """Switch to a :class:`Theme` or a theme name (a name is saved as the ``theme`` setting)."""
        if isinstance(theme, Theme):
            chosen = theme
        else:
            found = self.themes.get(str(theme))
            if found is None:
                return {"success": False, "error": f"Theme not found: {theme}"}
            chosen = found
            if self._theme_setting() != chosen.name:
                with contextlib.suppress(OSError):
                    self.settings.set_global("theme", chosen.name)
        self.theme = chosen
        self.render_context.set_theme(chosen)
        if self.screen.application is not None:
            self.screen.application.style = self.screen.style()
        self.invalidate()
        return {"success": True}

    # ------------------------------------------------------------------------------------------
    # Commands and input
    # ------------------------------------------------------------------------------------------

    def find_builtin(self, name: str) -> Any:
        for command in self.commands:
            if command.name == name or name in (command.aliases or []):
                return command
        return None

    def run_builtin_by_name(self, name: str, args: str) -> None:
        if self.session is None:
            return
        command = self.find_builtin(name)
        if command is None:
            self.show_warning(f"/{name} is not available")
            return
        self.spawn(self.run_builtin(command, args))

    async def run_builtin(self, command: Any, args: str) -> None:
        try:
            await command.handler(self.command_context, args)
        except Exception as exc:
            self.show_error(f"/{command.name} failed: {exc}")

    def command_entries(self) -> list[CommandEntry]:
        """What ``/`` completes: built-in commands, extension commands, templates, ``skill:`` names."""
        entries = [
            CommandEntry(
                name=c.name, description=c.description, argument_completions=c.get_argument_completions
            )
            for c in self.commands
        ]
        taken = {e.name for e in entries}
        for command in list(self.app.registries.commands):
            if command.name not in taken:
                taken.add(command.name)
                entries.append(
                    CommandEntry(
                        name=command.name,
                        description=command.description or "",
                        source="extension",
                        argument_completions=command.get_argument_completions,
                    )
                )
        resources = self.session.resources if self.session else None
        if resources is not None:
            for template in resources.prompt_templates:
                if template.name not in taken:
                    taken.add(template.name)
                    entries.append(
                        CommandEntry(name=template.name, description=template.description, source="template")
                    )
            if self.settings.get("enableSkillCommands", True):
                for skill in resources.skills:
                    entries.append(
                        CommandEntry(
                            name=f"skill:{skill.name}", description=skill.description, source="skill"
                        )
                    )
        return entries

    @property
    def run_active(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    async def handle_input(self, text: str, *, follow_up: bool = False) -> None:
        """What Enter (or Alt+Enter) with ``text`` does: pi's submit handler."""
        await self.session_ready.wait()
        session = self.session
        text = text.strip()
        if not text:
            return
        if text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            command = self.find_builtin(name)
            if command is not None:
                await self.run_builtin(command, args.strip())
                return
        if text.startswith("!"):
            exclude = text.startswith("!!")
            command_text = text[2:].strip() if exclude else text[1:].strip()
            if command_text:
                if session.shell.is_running:
                    self.show_warning("A bash command is already running. Press Esc to cancel it first.")
                    self.set_editor_text(text)
                    return
                await self.run_bash(command_text, exclude)
                return
        extension_command = text.startswith("/") and text[1:].split(" ", 1)[0] in self.app.registries.commands
        if session.compaction.running:
            if extension_command:
                await session.prompt(text)
            else:
                self.compaction_queue.append((text, "followUp" if follow_up else "steer"))
                self.show_status("Queued message for after compaction")
            return
        if session.is_streaming:
            await session.prompt(text, streaming_behavior="followUp" if follow_up else "steer")
        elif extension_command:
            await session.prompt(text)
        elif self.run_active:  # a prompt is being prepared: queue behind it
            await (session.follow_up(text) if follow_up else session.steer(text))
        else:
            self.start_run(text)

    def start_run(self, text: str, images: Any = None) -> None:
        """Send ``text`` to the model in the background (errors shown as pi's red line)."""

        async def run() -> None:
            try:
                await self.session.prompt(text, images)
            except Exception as exc:
                self.show_error(str(exc) or type(exc).__name__)
            if self.session.shutdown_requested:
                self.request_exit()

        self._run_task = self.spawn(run())

    async def run_bash(self, command: str, exclude: bool) -> None:
        """``!command`` (``!!``: not sent to the model), its output streamed into a box."""
        item = self.add_item(BashItem(command, exclude=exclude, spinner=self.screen.spinner_frame))
        self.screen.start_spinner()

        def on_chunk(chunk: str) -> None:
            item.append(chunk)
            self.invalidate()

        try:
            result = await self.session.shell.execute(
                command, exclude_from_context=exclude, on_chunk=on_chunk
            )
            item.complete(result)
        except Exception as exc:
            item.fail()
            self.show_error(f"Bash command failed: {exc}")
        self.screen.refresh()

    def request_exit(self) -> None:
        self.screen.exiting = True
        app = self.screen.application
        if app is not None and app.is_running:
            with contextlib.suppress(Exception):
                app.exit()

    # ------------------------------------------------------------------------------------------
    # Start-up
    # ------------------------------------------------------------------------------------------

    def _quiet(self, part: str) -> bool:
        """Whether ``quietStartup`` hides ``part`` (``header`` or ``listing``): ``true`` hides both,
        ``"header"`` only the listing (pi 1.6); ``--verbose`` shows both whatever it says."""
        value = self.settings.get("quietStartup", False)
        if self.app.options.get("verbose"):
            return False
        return value is True or (value == "header" and part == "listing")

    def _header(self) -> list[Any]:
        """The start-up header (nothing with ``quietStartup: true``): expands in place with Ctrl+O."""
        if self._quiet("header"):
            return []
        header = None
        if self.custom_header is not None:
            with contextlib.suppress(Exception):
                header = (
                    self.custom_header(self.theme) if callable(self.custom_header) else self.custom_header
                )
        if header is not None:
            return [header]
        return [lambda ctx: views().header(ctx.theme, self.version, self.key_map(), expanded=ctx.expanded)]

    def _loaded_resources(self) -> list[Any]:
        """The model scope and pi's ``[Context]``, ``[Skills]``, ``[Prompts]``, ``[Extensions]``, ``[Themes]``."""
        from rich.text import Text

        app = self.app
        session = self.session
        out: list[Any] = []
        if self._quiet("listing"):
            return out
        if session.models.scoped_models:
            scope = ", ".join(
                f"{s.model.id}{':' + s.thinking_level if s.thinking_level else ''}"
                for s in session.models.scoped_models
            )
            out.append(Text(f"Model scope: {scope} (Ctrl+P to cycle)", style=self.theme.fg_style("dim")))
        resources = session.resources
        sections: list[tuple[str, list[str]]] = []
        if resources.context_files:
            sections.append(
                ("Context", [_display_path(f.path, str(app.cwd)) for f in resources.context_files])
            )
        if resources.skills:
            sections.append(("Skills", sorted(s.name for s in resources.skills)))
        if resources.prompt_templates:
            sections.append(("Prompts", sorted(f"/{t.name}" for t in resources.prompt_templates)))
        extensions = sorted(
            info.label or info.name
            for info in app.pm.infos.values()
            if info.origin in ("file", "distribution") and not info.blocked and not info.error
        )
        if extensions:
            sections.append(("Extensions", extensions))
        custom_themes = [
            t.name for t in self.themes.themes.values() if t.path and t.name not in ("dark", "light")
        ]
        if custom_themes:
            sections.append(("Themes", custom_themes))
        out.extend(views().resource_section(self.theme, name, items) for name, items in sections)
        return out

    def _startup_notices(self) -> None:
        """Warnings (plugins, settings, models, themes, keys), and guidance when there is no model."""
        app = self.app
        _ = list(app.registries.shortcuts)  # fill the registry so its diagnostics are known
        reported: set[str] = getattr(app, "_reported", set())
        from piko.lib.redaction import redact

        for line in [*app.diagnostics(), *app.notices]:
            if line not in reported:
                reported.add(line)
                self.show_warning(redact(line))
        app._reported = reported
        for message in self.themes.errors:
            self.show_warning(message)
        for level, message in self.notices:
            (self.show_error if level == "error" else self.show_warning)(message)
        self.notices = []
        if self.session.model is None:
            from piko.models.guidance import no_models_message

            self.show_warning(no_models_message())

    def _load_themes(self) -> None:
        self.themes = ThemeSet(list(self.session.resources.themes) if self.session else [])
        theme, error = self.themes.choose(self._theme_setting())
        if error:
            self.notices.append(("error", error))
        if theme is not self.theme:
            self.set_theme(theme)

    def _session_user_texts(self) -> list[str]:
        from piko.data.messages import UserMessage
        from piko.data.messages import text_of

        return [text_of(m.content) for m in self.session.messages if isinstance(m, UserMessage)]

    async def run(self) -> int:
        """Run until the user quits; the exit code.

        The editor opens first (so ``session_start`` handlers can already use dialogs, as in pi),
        then the header is printed and the session is created; what is typed meanwhile waits.
        """
        from prompt_toolkit.patch_stdout import patch_stdout

        from piko.engine.initial_message import InitialMessageError
        from piko.engine.initial_message import build_initial_message
        from piko.engine.setup import SetupError
        from piko.engine.setup import open_session_manager
        from piko.plugins.modes.interactive.keys import install_extended_keys

        if not _is_terminal(sys.stdin):
            sys.stderr.write("Error: the interactive mode needs a terminal; use -p or --mode json|rpc\n")
            return 1
        given = self._tui_mode_flag()
        if given is not None and given not in TUI_MODES:
            sys.stderr.write(f'Error: Invalid TUI mode "{given}". Valid values: regular, fullscreen\n')
            return 1
        try:  # as pi: the session is looked up first, before the screen and the @files
            self._session_manager = open_session_manager(self.app)
        except SetupError as exc:
            sys.stderr.write(f"{exc}\n" if getattr(exc, "bare", False) else f"Error: {exc}\n")
            return 1
        try:
            first, images, rest = build_initial_message(self.app, None)
        except InitialMessageError as exc:
            sys.stderr.write(f"Error: {exc}\n")
            return 1
        install_extended_keys()
        key_bindings, problems = self.keys.bindings()
        self.notices.extend(("warning", f"keybindings: {p}") for p in problems)
        self.screen.fullscreen = self.tui_mode() == "fullscreen"
        self.app.dispatcher.error_listeners.append(self._on_extension_error)
        loop = asyncio.get_running_loop()
        # SIGTERM, SIGHUP: quit cleanly, the terminal restored and the session closed
        on_exit_signals(lambda _code: self.request_exit())
        if not self.screen.fullscreen:
            # pi's blank first line, written now: the region is then never drawn from the screen's
            # top corner, where erasing it would count as clearing the screen (tmux's scroll-on-clear
            # would push a copy of the editor into the scrollback)
            sys.stdout.write("\n")
            sys.stdout.flush()
        first_run = True
        try:
            with patch_stdout(raw=True):
                while True:
                    application = self.screen.build(key_bindings)
                    ready: asyncio.Future[None] = loop.create_future()

                    def pre_run(ready: asyncio.Future[None] = ready) -> None:
                        if not ready.done():
                            ready.set_result(None)

                    app_task = loop.create_task(application.run_async(pre_run=pre_run))
                    await asyncio.wait([app_task, ready], return_when=asyncio.FIRST_COMPLETED)
                    if not app_task.done():
                        if first_run:
                            self.spawn(self._start(first, images, rest))
                        else:  # switched: the new screen shows the whole transcript
                            loop.call_soon(self.screen.redraw)
                    first_run = False
                    await app_task
                    if self._switch_to is None or self.screen.exiting:
                        break
                    self.screen.fullscreen = self._switch_to == "fullscreen"
                    self._switch_to = None
            self.screen.print_remaining()
            self._print_resume_hint()
        finally:
            await self._shutdown()
        if self._fatal:
            sys.stderr.write(f"Error: {self._fatal}\n")
        return self.exit_code

    def _tui_mode_flag(self) -> str | None:
        value = getattr(self.app, "flag_values", {}).get("tui-mode")
        return str(value) if value else None

    def tui_mode(self) -> str:
        """``--tui-mode``, else the ``tuiMode`` setting (only ``regular`` counts, as in pi), else fullscreen."""
        given = self._tui_mode_flag() or self.settings.get("tuiMode")
        return given if given in TUI_MODES else DEFAULT_TUI_MODE

    def set_tui_mode(self, tui_mode: str) -> bool:
        """Switch between ``fullscreen`` and ``regular`` now (the application is built again)."""
        if tui_mode not in TUI_MODES:
            return False
        if (tui_mode == "fullscreen") == self.screen.fullscreen:
            return True
        if self.screen.overlays:  # as pi: not while an overlay floats over the transcript
            return False
        if self.screen.searching:
            self.screen.close_search()
        self._switch_to = tui_mode
        app = self.screen.application
        if app is not None and app.is_running:
            with contextlib.suppress(Exception):
                app.exit()
        return True

    def current_tui_mode(self) -> str:
        """The mode in effect, or the one being switched to."""
        return self._switch_to or ("fullscreen" if self.screen.fullscreen else "regular")

    def _print_resume_hint(self) -> None:
        """pi's last words: how to come back to this session (when it was saved)."""
        session = self.session
        if session is None or not _is_terminal(sys.stdout):
            return
        path = session.session_file
        if not path or not os.path.exists(path):
            return
        dim = "\x1b[2m" if self.render_context.color_system != "standard" else ""
        command = (
            f"{os.path.basename(sys.argv[0]) or 'pi'} --session {session.session_manager.get_session_id()}"
        )
        sys.stdout.write(
            f"{dim}To resume this session:\x1b[0m\n{command}\n"
            if dim
            else f"To resume this session:\n{command}\n"
        )
        sys.stdout.flush()

    async def _start(self, first: str | None, images: Any, rest: list[str]) -> None:
        """After the first frame: the header, the session, what was loaded, then the first prompts."""
        from piko.engine.setup import SetupError

        screen = self.screen
        try:
            # what session_start handlers show waits in the live region until the header is out
            self.session = await self.app.create_agent_session(
                ui=self.ui, mode="tui", session_manager=self._session_manager
            )
        except SetupError as exc:
            self._fatal = str(exc)
            self.exit_code = 1
            screen.history_ready([])
            self.request_exit()
            return
        screen.invalidate()
        await asyncio.sleep(0.001)  # let the footer show the model before the header is drawn
        self._add_preamble(self._header())
        screen.started = True
        session = self.session
        session.subscribe(self.events.on_event)
        self.app.event_bus.on(CUSTOM_ENTRY_CHANNEL, self.events.on_custom_entry)
        self.render_context.tool_definitions = self.app.registries.tools
        self._load_themes()
        screen.history_ready(self._session_user_texts())
        self._add_preamble(self._loaded_resources())
        self._startup_notices()
        if session.messages:
            self.render_conversation(replace=False)
        screen.refresh()
        self.update_title()
        self.session_ready.set()
        if self.app.options.get("resume"):
            command = self.find_builtin("resume")
            if command is not None:
                await self.run_builtin(command, "")
        for index, text in enumerate([first, *rest]):
            if text is None:
                continue
            try:
                await session.prompt(text, images if index == 0 else None)
            except Exception as exc:
                self.show_error(str(exc) or "Unknown error occurred")
            if screen.exiting:
                return

    def _add_preamble(self, renderables: list[Any]) -> None:
        """The header and what was loaded: kept on top when the conversation is cleared."""
        for renderable in renderables:
            self.transcript.add_preamble(StaticItem(renderable))

    async def _shutdown(self) -> None:
        self.screen.exiting = True
        for task in list(self._tasks):
            task.cancel()
        self.screen.stop()
        if self.session is not None:
            with contextlib.suppress(Exception):
                await self.session.shutdown()
        with contextlib.suppress(ValueError):
            self.app.dispatcher.error_listeners.remove(self._on_extension_error)

    def _on_extension_error(self, error: Any) -> None:
        self.show_error(f'Extension "{error.extension_path}" error: {error.error}')


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _display_path(path: str, cwd: str) -> str:
    home = os.path.expanduser("~")
    if path.startswith(cwd + os.sep):
        return path[len(cwd) + 1 :]
    if home and path.startswith(home):
        return "~" + path[len(home) :]
    return path


async def run_interactive(app: Any) -> int:
    """The ``interactive`` mode's entry point."""
    return await InteractiveMode(app).run()
