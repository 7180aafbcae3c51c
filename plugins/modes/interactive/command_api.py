"""The contract between the interactive mode and its built-in slash commands.

Built-in commands (``/model``, ``/tree``, ``/resume`` ...) are plain async functions that get an
:class:`InteractiveContext` and the argument text. The interactive mode implements the context;
the commands use only what it offers plus the :class:`~piko.engine.session.AgentSession`.
Keeping this small lets commands be tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import Protocol

from attrs import define
from attrs import field


@define(kw_only=True)
class PickItem:
    """One choice of a selector: what is shown, what is returned, and optional detail text."""

    label: str
    value: Any
    detail: str = ""
    depth: int = 0  # indentation level (tree views)
    current: bool = False  # marked as the current choice


@define(kw_only=True)
class PickAction:
    """A selector closed by one of its action keys: which action, on which row, with what query."""

    name: str
    value: Any = None  # the selected row's value (None when no row is shown)
    query: str = ""


class InteractiveContext(Protocol):
    """What the interactive mode offers to built-in commands."""

    app: Any  # piko.app.application.App
    session: Any  # piko.engine.session.AgentSession
    ui: Any  # the extension UI (select/confirm/input/editor/notify/...), same object as ctx.ui

    def show(self, renderable: Any) -> None:
        """Print a rich renderable (or text) into the scrollback, above the editor."""

    def show_info(self, text: str) -> None:
        """A dim informational line."""

    def show_warning(self, text: str) -> None:
        """A yellow warning line."""

    def show_error(self, text: str) -> None:
        """A red error line."""

    async def pick(
        self,
        title: str,
        items: list[PickItem],
        *,
        filterable: bool = True,
        initial: Any = None,
        actions: dict[str, list[str]] | None = None,
        header: Callable[[], str] | None = None,
        query: str = "",
        search_prompt: str = " Search: ",
        status: Callable[[], str] | None = None,
        ancestors: Callable[[Any], Iterable[Any]] | None = None,
    ) -> Any:
        """A filterable list selector; the chosen item's value, or None when cancelled.

        ``actions`` maps an action name to pi key names (``{"delete": ["ctrl+d"]}``): such a key
        closes the selector with a :class:`PickAction`. ``header`` gives lines shown under the
        title (state and key hints); ``query`` starts the filter with that text, which follows
        ``search_prompt``. ``status`` (pi's /tree) always shows the ``(n/N)`` counter, its text
        after it. ``ancestors(value)`` (pi's /tree: the values above a row, nearest first) makes
        the search keep tree order and the selection: on its row, else the nearest ancestor
        shown, else the last row, remembered while nothing matches.
        """

    def set_editor_text(self, text: str) -> None:
        """Replace what the editor holds."""

    def get_editor_text(self) -> str:
        """What the editor holds."""

    def redraw_conversation(self) -> None:
        """Print the current session's conversation again (after /resume, /fork, /tree)."""

    def request_exit(self) -> None:
        """Leave the interactive mode after the current command."""

    async def run_prompt(self, text: str) -> None:
        """Submit ``text`` as if the user typed it (used by commands that re-prompt)."""

    def get_tui_mode(self) -> str:
        """``fullscreen`` or ``regular``: the terminal UI in effect."""

    def set_tui_mode(self, tui_mode: str) -> None:
        """Switch the terminal UI to ``fullscreen`` or ``regular`` now."""


CommandHandler = Callable[[InteractiveContext, str], Awaitable[None]]


@define(kw_only=True)
class BuiltinCommand:
    """A built-in slash command of the interactive mode."""

    name: str
    description: str
    handler: CommandHandler
    get_argument_completions: Callable[[str], list[str]] | None = None
    aliases: list[str] = field(factory=list)
