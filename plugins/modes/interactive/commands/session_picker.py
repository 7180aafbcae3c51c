"""Choosing a session to resume: this project's sessions or all of them, most recent first.

Used by ``/resume`` (through the interactive mode's ``pick``) and by ``pi --resume`` before any
session exists (:func:`pick_session_at_startup`, with a small terminal selector of its own when
no ``pick`` function is given).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Awaitable, Callable
from typing import Any

from piko.plugins.modes.interactive.command_api import PickItem
from piko.plugins.modes.interactive.commands.common import one_line
from piko.plugins.modes.interactive.tool_view import shorten_path

PickFunction = Callable[..., Awaitable[Any]]
_TOGGLE = ("scope", "toggle")


def format_age(modified: datetime.datetime, now: datetime.datetime | None = None) -> str:
    """pi's short age of a session: ``now``, ``5m``, ``3h``, ``2d``, ``1w``, ``4mo``, ``1y``."""
    now = now or datetime.datetime.now(datetime.UTC)
    seconds = (now - modified).total_seconds()
    minutes, hours, days = int(seconds // 60), int(seconds // 3600), int(seconds // 86400)
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{minutes}m"
    if hours < 24:
        return f"{hours}h"
    if days < 7:
        return f"{days}d"
    if days < 30:
        return f"{days // 7}w"
    if days < 365:
        return f"{days // 30}mo"
    return f"{days // 365}y"


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


def session_items(
    sessions: list[Any], scope: str, current_file: str | None = None, now: datetime.datetime | None = None
) -> list[PickItem]:
    """Selector rows: the scope switch, then each session (name or first message; count and age)."""
    switch = "◉ Current Folder | ○ All" if scope == "current" else "○ Current Folder | ◉ All"
    items = [PickItem(label=switch, value=_TOGGLE, detail="choose to switch")]
    for info in sessions:
        right = f"{info.message_count} {format_age(info.modified, now)}"
        if scope == "all" and info.cwd:
            right = f"{shorten_path(info.cwd)} {right}"
        items.append(
            PickItem(
                label=one_line(info.name or info.first_message, 200),
                value=info.path,
                detail=right,
                current=bool(current_file)
                and os.path.abspath(info.path) == os.path.abspath(str(current_file)),
            )
        )
    return items


async def choose_session(
    app: Any,
    pick: PickFunction,
    *,
    current_file: str | None = None,
    session_dir: str | None = None,
    cwd: str | None = None,
    on_empty: Callable[[str], None] | None = None,
) -> str | None:
    """Let the user choose a session file with ``pick``; Tab-like scope switching is a row."""
    scope = "current"
    listed: dict[str, list[Any]] = {}
    while True:
        if scope not in listed:
            listed[scope] = (
                current_sessions(app, session_dir, cwd) if scope == "current" else all_sessions(app)
            )
        sessions = listed[scope]
        if not sessions and scope == "current":
            listed["all"] = listed.get("all") or all_sessions(app)
            if not listed["all"]:
                if on_empty is not None:
                    on_empty("No sessions found")
                return None
        title = "Resume Session (Current Folder)" if scope == "current" else "Resume Session (All)"
        if not sessions:
            title += "\nNo sessions in current folder. Choose the first row to view all."
        choice = await pick(title, session_items(sessions, scope, current_file), initial=current_file)
        if choice is None:
            return None
        if choice == _TOGGLE:
            scope = "all" if scope == "current" else "current"
            continue
        return str(choice)


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
) -> Any:
    """A small inline selector on the terminal (type to filter, arrows, Enter, Esc); the value or None."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

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
