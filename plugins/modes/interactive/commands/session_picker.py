"""Choosing a session to resume as pi's selector: this project's or all, threaded, sorted, filtered.

Used by ``/resume`` (through the interactive mode's ``pick``) and by ``pi --resume`` before any
session exists (:func:`pick_session_at_startup`, with a small terminal selector of its own when
no ``pick`` function is given).
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from attrs import define

from piko.plugins.modes.interactive.command_api import PickAction
from piko.plugins.modes.interactive.command_api import PickItem
from piko.plugins.modes.interactive.commands.common import one_line
from piko.plugins.modes.interactive.tool_view import shorten_path

PickFunction = Callable[..., Awaitable[Any]]


def format_age(modified: datetime.datetime, now: datetime.datetime | None = None) -> str:
    """pi's short age of a session: ``now``, ``5m``, ``3h``, ``2d``, ``1w``, ``4mo``, ``1y``."""
    now = now or datetime.datetime.now(datetime.UTC)
    seconds = (now - modified).total_seconds()
    if seconds < 60:
        return "now"
    for unit, below, suffix in _AGE_UNITS:
        if seconds < below:
            return f"{int(seconds // unit)}{suffix}"
    return f"{int(seconds // _YEAR)}y"


_DAY = 86400
_YEAR = 365 * _DAY
# (unit in seconds, ages it is used below, suffix), smallest first; older ages count years.
_AGE_UNITS = (
    (60, 3600, "m"),
    (3600, _DAY, "h"),
    (_DAY, 7 * _DAY, "d"),
    (7 * _DAY, 30 * _DAY, "w"),
    (30 * _DAY, _YEAR, "mo"),
)


def current_sessions(app: Any, session_dir: str | None = None, cwd: str | None = None) -> list[Any]:
    """This project's sessions (``session_dir``, else the configured or default one), newest first."""
    from piko.engine.setup import session_dir as configured_dir
    from piko.sessions.listing import list_sessions

    directory = session_dir or configured_dir(app)
    return list_sessions(str(cwd or app.cwd), directory)


def all_sessions(app: Any) -> list[Any]:
    """Every project's sessions under ``<agent dir>/sessions``, newest first."""
    from piko.sessions.listing import list_all_sessions

    return list_all_sessions(os.path.join(str(app.agent_dir), "sessions"))


SORTS = ("threaded", "recent", "relevance")
SORT_LABELS = {"threaded": "Threaded", "recent": "Recent", "relevance": "Fuzzy"}
ACTION_KEYS = {  # action -> keybinding id (pi's app.session.* actions)
    "scope": "tui.input.tab",
    "sort": "app.session.toggleSort",
    "named": "app.session.toggleNamedFilter",
    "path": "app.session.togglePath",
    "rename": "app.session.rename",
    "delete": "app.session.delete",
}


@define(kw_only=True)
class SelectorState:
    """What the session selector shows: scope, sort, the named-only filter, paths, query, selection."""

    scope: str = "current"
    sort: str = "threaded"
    named_only: bool = False
    show_path: bool = False
    query: str = ""
    selected: str | None = None


def _threaded(sessions: list[Any]) -> list[tuple[Any, int]]:
    """Sessions under the session they were forked from, newest activity first at each level."""
    by_path = {os.path.abspath(s.path): s for s in sessions}
    children: dict[str | None, list[Any]] = {}
    for info in sessions:
        parent = os.path.abspath(info.parent_session_path) if info.parent_session_path else None
        children.setdefault(parent if parent in by_path else None, []).append(info)

    def latest(info: Any) -> datetime.datetime:
        newest = info.modified
        for child in children.get(os.path.abspath(info.path), []):
            newest = max(newest, latest(child))
        return newest

    out: list[tuple[Any, int]] = []

    def walk(parent: str | None, depth: int) -> None:
        for info in sorted(children.get(parent, []), key=latest, reverse=True):
            out.append((info, depth))
            walk(os.path.abspath(info.path), depth + 1)

    walk(None, 0)
    return out


def session_items(
    sessions: list[Any],
    state: SelectorState | str,
    current_file: str | None = None,
    now: datetime.datetime | None = None,
) -> list[PickItem]:
    """Selector rows: each session (name or first message; count and age), threaded or by date."""
    if isinstance(state, str):
        state = SelectorState(scope=state)
    shown = [s for s in sessions if s.name] if state.named_only else list(sessions)
    if state.sort == "threaded" and not state.query.strip():
        rows = _threaded(shown)
    else:
        rows = [(s, 0) for s in sorted(shown, key=lambda s: s.modified, reverse=True)]
    items = []
    for info, depth in rows:
        right = f"{info.message_count} {format_age(info.modified, now)}"
        if state.scope == "all" and info.cwd:
            right = f"{shorten_path(info.cwd)} {right}"
        if state.show_path:
            right = f"{right} {shorten_path(info.path)}"
        items.append(
            PickItem(
                label=one_line(info.name or info.first_message, 200),
                value=info.path,
                detail=right,
                depth=depth,
                current=bool(current_file)
                and os.path.abspath(info.path) == os.path.abspath(str(current_file)),
            )
        )
    return items


def _header(state: SelectorState, keys: dict[str, str]) -> str:
    scope = "◉ Current Folder | ○ All" if state.scope == "current" else "○ Current Folder | ◉ All"
    name = "Named" if state.named_only else "All"
    hints = " · ".join(
        f"{keys[action]} {text}"
        for action, text in (
            ("scope", "scope"),
            ("sort", "sort"),
            ("named", "named"),
            ("delete", "delete"),
            ("path", f"path ({'on' if state.show_path else 'off'})"),
            ("rename", "rename"),
        )
        if keys.get(action)
    )
    return f"{scope}  Name: {name}  Sort: {SORT_LABELS[state.sort]}\n{hints}"


def _bindings(app: Any) -> dict[str, list[str]]:
    from piko.plugins.modes.interactive.commands.keybindings import effective_bindings

    try:
        return effective_bindings(app)
    except Exception:
        from piko.plugins.modes.interactive.commands.keybindings import KEYBINDINGS

        return {action: list(keys) for action, (keys, _d) in KEYBINDINGS.items()}


async def choose_session(
    app: Any,
    pick: PickFunction,
    *,
    current_file: str | None = None,
    session_dir: str | None = None,
    cwd: str | None = None,
    on_empty: Callable[[str], None] | None = None,
    ui: Any = None,
) -> str | None:
    """Let the user choose a session file with ``pick`` (pi's selector: Tab switches the scope,
    Ctrl+S the sort, Ctrl+N named only, Ctrl+P paths, Ctrl+R renames, Ctrl+D deletes)."""
    bindings = _bindings(app)
    actions = {name: bindings.get(action, []) for name, action in ACTION_KEYS.items()}
    if ui is None:
        actions.pop("rename")
        actions.pop("delete")
    keys = {name: "/".join(k) for name, k in actions.items()}
    state = SelectorState()
    listed: dict[str, list[Any]] = {}
    while True:
        if state.scope not in listed:
            listed[state.scope] = (
                current_sessions(app, session_dir, cwd) if state.scope == "current" else all_sessions(app)
            )
        sessions = listed[state.scope]
        if not sessions and state.scope == "current":
            listed["all"] = listed.get("all") or all_sessions(app)
            if not listed["all"]:
                if on_empty is not None:
                    on_empty("No sessions found")
                return None
        title = "Resume Session (Current Folder)" if state.scope == "current" else "Resume Session (All)"
        if not sessions:
            title += f"\nNo sessions in current folder. Press {keys.get('scope') or 'tab'} to view all."
        items = session_items(sessions, state, current_file)
        choice = await pick(
            title,
            items,
            initial=state.selected,
            actions=actions,
            header=lambda: _header(state, keys),
            query=state.query,
        )
        if choice is None:
            return None
        if not isinstance(choice, PickAction):
            return str(choice)
        state.query = choice.query
        state.selected = choice.value
        if choice.name == "scope":
            state.scope = "all" if state.scope == "current" else "current"
        elif choice.name == "sort":
            state.sort = SORTS[(SORTS.index(state.sort) + 1) % len(SORTS)]
        elif choice.name == "named":
            state.named_only = not state.named_only
        elif choice.name == "path":
            state.show_path = not state.show_path
        elif choice.name == "rename" and choice.value:
            await _rename(ui, str(choice.value), sessions)
            listed.clear()
        elif choice.name == "delete" and choice.value:
            if current_file and os.path.abspath(str(choice.value)) == os.path.abspath(current_file):
                ui.notify("Cannot delete the currently active session", "error")
            elif await ui.confirm("Delete session?", one_line(str(choice.value))):
                with contextlib.suppress(OSError):
                    os.remove(str(choice.value))
                listed.clear()
                state.selected = None


async def _rename(ui: Any, path: str, sessions: list[Any]) -> None:
    """Ask for a new name and append it to the session file (an empty name clears it)."""
    from piko.sessions.manager import SessionManager

    info = next((s for s in sessions if s.path == path), None)
    name = await ui.input(
        "Rename session", "a name for the session", prefill=(info.name if info else "") or ""
    )
    if name is None:
        return
    try:
        manager = SessionManager.open(path)
        manager.append_session_info(name)
    except Exception as exc:
        ui.notify(f"Could not rename the session: {exc}", "error")


async def pick_session_at_startup(
    app: Any, pick: PickFunction | None = None, on_empty: Callable[[str], None] | None = None
) -> str | None:
    """``pi --resume``: the session file the user chose, or ``None`` (cancelled, or none exists).

    ``pick(title, items, *, filterable=True, initial=None)`` is the interactive mode's selector; without
    one a minimal terminal selector is used. ``on_empty`` is told when there is no session at all
    (default: a line on stderr).
    """
    import sys

    def say(text: str) -> None:
        print(text, file=sys.stderr)

    return await choose_session(app, pick or terminal_pick, on_empty=on_empty or say)


async def terminal_pick(
    title: str,
    items: list[PickItem],
    *,
    filterable: bool = True,
    initial: Any = None,
    input: Any = None,
    output: Any = None,
    **_options: Any,
) -> Any:
    """A small inline selector on the terminal (type to filter, arrows, Enter, Esc); the value or None.

    It has no action keys (``actions``, ``header`` and ``query`` of ``pick`` are ignored)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.layout import Window
    from prompt_toolkit.layout.controls import BufferControl
    from prompt_toolkit.layout.controls import FormattedTextControl

    from piko.lib.fuzzy import fuzzy_filter

    query = Buffer()
    state = {"index": next((i for i, it in enumerate(items) if it.value == initial), 0)}
    max_rows = 10

    def visible() -> list[PickItem]:
        text = query.text if filterable else ""
        return fuzzy_filter(items, text, lambda it: it.label) if text.strip() else list(items)

    def rows() -> list[tuple[str, str]]:
        shown = visible()
        if not shown:
            return [("class:muted", "  No matches\n")]
        index = min(state["index"], len(shown) - 1)
        start = max(0, min(index - max_rows // 2, len(shown) - max_rows))
        out: list[tuple[str, str]] = []
        for i, item in enumerate(shown[start : start + max_rows], start):
            cursor = "› " if i == index else "  "
            style = "reverse" if i == index else ""
            mark = " ✓" if item.current else ""
            out.append((style, f"{cursor}{'  ' * item.depth}{item.label}{mark}"))
            if item.detail:
                out.append(("fg:ansibrightblack", f"  {item.detail}"))
            out.append(("", "\n"))
        if len(shown) > max_rows:
            out.append(("fg:ansibrightblack", f"  ({index + 1}/{len(shown)})\n"))
        return out

    keys = KeyBindings()

    @keys.add("up")
    def _up(event: Any) -> None:
        count = len(visible())
        if count:
            state["index"] = (min(state["index"], count - 1) - 1) % count

    @keys.add("down")
    def _down(event: Any) -> None:
        count = len(visible())
        if count:
            state["index"] = (min(state["index"], count - 1) + 1) % count

    @keys.add("enter")
    def _enter(event: Any) -> None:
        shown = visible()
        event.app.exit(result=shown[min(state["index"], len(shown) - 1)].value if shown else None)

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    def _cancel(event: Any) -> None:
        event.app.exit(result=None)

    def on_change(_buffer: Any) -> None:
        state["index"] = 0

    query.on_text_changed += on_change
    parts: list[Any] = [Window(FormattedTextControl(title), dont_extend_height=True)]
    if filterable:
        parts.append(Window(BufferControl(query), height=1))
    rows_text: Any = rows  # a callable is valid formatted text (re-evaluated on each render)
    parts.append(Window(FormattedTextControl(rows_text), dont_extend_height=True))
    application: Application[Any] = Application(
        layout=Layout(HSplit(parts)),
        key_bindings=keys,
        full_screen=False,
        erase_when_done=True,
        input=input,
        output=output,
    )
    return await application.run_async()
