"""A test stand-in for the interactive mode: scripted selectors and dialogs, recorded output.

:class:`ScriptedContext` implements :class:`InteractiveContext`. Each ``pick`` takes the next
scripted answer: a value, ``None`` (cancel), ``label("text")`` (the first row whose label
contains ``text``), ``current()`` (the row marked current) or any ``callable(title, items)``.
:class:`ScriptedUI` does the same for ``ctx.ui`` dialogs (``select``, ``input``, ``editor``,
``confirm``); ``WAIT`` makes a dialog wait until its ``signal`` is aborted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piko.plugins.modes.interactive.command_api import PickAction
from piko.plugins.modes.interactive.command_api import PickItem
from piko.plugins.modes.interactive.commands import BUILTIN_COMMANDS

WAIT = object()


def label(text: str) -> Callable[[str, list[PickItem]], Any]:
    """Answer a selector with the first row whose label contains ``text``."""

    def choose(title: str, items: list[PickItem]) -> Any:
        for item in items:
            if text in item.label:
                return item.value
        raise AssertionError(f"no row contains {text!r} in {title!r}: {[i.label for i in items]}")

    return choose


def current() -> Callable[[str, list[PickItem]], Any]:
    def choose(title: str, items: list[PickItem]) -> Any:
        marked = [i for i in items if i.current]
        assert len(marked) == 1, [i.label for i in items]
        return marked[0].value

    return choose


def plain(renderable: Any) -> str:
    """The text of a rich renderable (rendered without colours), or ``str`` of anything else."""
    if isinstance(renderable, str):
        return renderable
    if isinstance(getattr(renderable, "plain", None), str):
        return str(renderable.plain)
    import io

    from rich.console import Console

    console = Console(width=200, color_system=None, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


class ScriptedUI:
    """``ctx.ui`` with scripted dialog answers; records every call, notice and theme change."""

    has_ui = True

    def __init__(self) -> None:
        self.answers: dict[str, list[Any]] = {"select": [], "input": [], "editor": [], "confirm": []}
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.notices: list[tuple[str, str]] = []
        self.themes_set: list[Any] = []
        self.theme_result: Any = True

    def script(self, kind: str, *answers: Any) -> None:
        self.answers[kind].extend(answers)

    async def _answer(self, kind: str, title: str, options: Any, opts: dict[str, Any]) -> Any:
        self.calls.append((kind, title, dict(opts)))
        queue = self.answers[kind]
        assert queue, f"unexpected {kind} dialog: {title!r}"
        answer = queue.pop(0)
        if answer is WAIT:
            signal = opts.get("signal")
            assert signal is not None, f"{kind} dialog {title!r} cannot be dismissed"
            await signal.wait()
            return None
        if callable(answer):
            answer = answer(title, options)
            if asyncio.iscoroutine(answer):
                answer = await answer
        return answer

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        return await self._answer("select", title, options, opts)

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        return bool(await self._answer("confirm", title, message, opts))

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        return await self._answer("input", title, placeholder, opts)  # type: ignore[no-any-return]

    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None:
        return await self._answer("editor", title, prefill, opts)  # type: ignore[no-any-return]

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append((level, message))

    def get_all_themes(self) -> list[dict[str, Any]]:
        return [
            {"name": "dark", "path": None},
            {"name": "light", "path": None},
            {"name": "solarized", "path": "/x"},
        ]

    def set_theme(self, theme: Any) -> Any:
        self.themes_set.append(theme)
        return self.theme_result


class ScriptedContext:
    """An :class:`InteractiveContext` for tests (see the module docstring)."""

    def __init__(self, app: Any, session: Any, ui: ScriptedUI | None = None) -> None:
        self.app = app
        self.session = session
        self.ui = ui or ScriptedUI()
        self.picks: list[Any] = []
        self.pick_calls: list[tuple[str, list[PickItem], dict[str, Any]]] = []
        self.output: list[tuple[str, Any]] = []
        self.editor = ""
        self.redraws = 0
        self.exit_requested = False
        self.prompts: list[str] = []
        self.on_show: Callable[[Any], None] | None = None

    # -- InteractiveContext --------------------------------------------------------------------

    def show(self, renderable: Any) -> None:
        self.output.append(("show", renderable))
        if self.on_show is not None:
            self.on_show(renderable)

    def show_info(self, text: str) -> None:
        self.output.append(("info", text))

    def show_warning(self, text: str) -> None:
        self.output.append(("warning", text))

    def show_error(self, text: str) -> None:
        self.output.append(("error", text))

    async def pick(self, title: str, items: list[PickItem], **options: Any) -> Any:
        header = options.get("header")
        recorded = {"filterable": True, "initial": None, **options}
        recorded["header_text"] = header() if callable(header) else None
        self.pick_calls.append((title, list(items), recorded))
        assert self.picks, f"unexpected selector: {title!r}: {[i.label for i in items]}"
        answer = self.picks.pop(0)
        if callable(answer):
            answer = answer(title, items)
        if isinstance(answer, PickAction):  # an action key pressed in the selector
            assert answer.name in (options.get("actions") or {}), (answer.name, title)
            return answer
        if answer is not None:
            assert any(i.value == answer for i in items), f"{answer!r} is not a row of {title!r}"
        return answer

    def set_editor_text(self, text: str) -> None:
        self.editor = text

    def get_editor_text(self) -> str:
        return self.editor

    def redraw_conversation(self) -> None:
        self.redraws += 1

    def request_exit(self) -> None:
        self.exit_requested = True

    async def run_prompt(self, text: str) -> None:
        self.prompts.append(text)
        await self.session.prompt(text)

    tui_mode = "regular"

    def get_tui_mode(self) -> str:
        return self.tui_mode

    def set_tui_mode(self, tui_mode: str) -> None:
        self.tui_mode = tui_mode

    # -- helpers -------------------------------------------------------------------------------

    async def run(self, line: str) -> None:
        """Run a slash command line as the interactive mode would."""
        assert line.startswith("/")
        name, _, args = line[1:].partition(" ")
        for command in BUILTIN_COMMANDS:
            if name == command.name or name in command.aliases:
                await command.handler(self, args.strip())
                return
        raise AssertionError(f"no built-in command /{name}")

    def texts(self, kind: str | None = None) -> list[str]:
        return [plain(value) for k, value in self.output if kind is None or k == kind]

    def all_text(self) -> str:
        return "\n".join(self.texts()) + "\n" + "\n".join(m for _l, m in self.ui.notices)


def lines_of(path: str | Path) -> list[dict[str, Any]]:
    """The JSON lines of a session file."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
