"""``/new``, ``/fork``, ``/clone``, ``/tree`` and ``/resume``: moving between sessions and within one."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.command_api import PickItem
from piko.plugins.modes.interactive.commands.common import error_text
from piko.plugins.modes.interactive.commands.common import one_line

SUMMARY_CHOICES = ["No summary", "Summarize", "Summarize with custom prompt"]


async def _switched(ctx: InteractiveContext, switch: Awaitable[Any], failure: str = "") -> Any:
    """The result of a move to another session, the conversation redrawn; ``None`` when it was
    cancelled or failed (the error shown, after ``failure``)."""
    try:
        result = await switch
    except Exception as exc:
        ctx.show_error(f"{failure}{error_text(exc)}")
        return None
    if result.cancelled:
        return None
    ctx.redraw_conversation()
    return result


async def new_command(ctx: InteractiveContext, args: str) -> None:
    """``/new``: start a fresh session."""
    from rich.text import Text

    if await _switched(ctx, ctx.session.new_session(), "Failed to create session: ") is None:
        return
    ctx.show(Text("✓ New session started", style="cyan"))


async def fork_command(ctx: InteractiveContext, args: str) -> None:
    """``/fork``: a new session holding the history before a chosen user message, whose text goes to the editor."""
    session = ctx.session
    messages = session.get_fork_messages()
    if not messages:
        ctx.show_info("No messages to fork from")
        return
    items = [PickItem(label=one_line(m.text, 200), value=m.entry_id) for m in messages]
    entry_id = await ctx.pick(
        "Fork from Message\nSelect a user message to copy the active path up to that point into a new session",
        items,
        initial=messages[-1].entry_id,
    )
    if entry_id is None:
        return
    result = await _switched(ctx, session.fork(str(entry_id)))
    if result is None:
        return
    ctx.set_editor_text(result.text or "")
    ctx.show_info("Forked to new session")


async def clone_command(ctx: InteractiveContext, args: str) -> None:
    """``/clone``: a new session with the whole current branch (pi's fork "at" the leaf)."""
    session = ctx.session
    leaf = session.session_manager.get_leaf_id()
    if not leaf:
        ctx.show_info("Nothing to clone yet")
        return
    if await _switched(ctx, session.fork(leaf, "at")) is None:
        return
    ctx.set_editor_text("")
    ctx.show_info("Cloned to new session")


async def _summary_choice(ctx: InteractiveContext) -> tuple[bool, str | None] | None:
    """``(summarize, custom instructions)``; ``None`` when the user backs out to the tree."""
    while True:
        choice = await ctx.ui.select("Summarize branch?", list(SUMMARY_CHOICES))
        if choice is None:
            return None
        if choice == "Summarize with custom prompt":
            instructions = await ctx.ui.editor("Custom summarization instructions")
            if instructions is None:
                continue
            return True, instructions
        return choice != "No summary", None


TREE_ACTIONS = {  # action -> keybinding id (pi's app.tree.* actions)
    "fold": "app.tree.foldOrUp",
    "unfold": "app.tree.unfoldOrDown",
    "label": "app.tree.editLabel",
    "filter:default": "app.tree.filter.default",
    "filter:no-tools": "app.tree.filter.noTools",
    "filter:user-only": "app.tree.filter.userOnly",
    "filter:labeled-only": "app.tree.filter.labeledOnly",
    "filter:all": "app.tree.filter.all",
    "filter:next": "app.tree.filter.cycleForward",
    "filter:previous": "app.tree.filter.cycleBackward",
}


TREE_FILTER_LABELS = {
    "no-tools": " [no-tools]",
    "user-only": " [user]",
    "labeled-only": " [labeled]",
    "all": " [all]",
}
TREE_HINT_ROWS = (  # pi 1.6's tree help: (label, keybinding ids, label first), one list per line
    (
        ("move", ("tui.select.up", "tui.select.down"), False),
        ("page", ("tui.select.pageUp", "tui.select.pageDown"), False),
        ("branch", ("app.tree.foldOrUp", "app.tree.unfoldOrDown"), False),
        ("label", ("app.tree.editLabel",), False),
    ),
    (
        (
            "filters",
            tuple(
                TREE_ACTIONS[f"filter:{m}"]
                for m in ("default", "no-tools", "user-only", "labeled-only", "all")
            ),
            True,
        ),
        ("cycle", (TREE_ACTIONS["filter:next"], TREE_ACTIONS["filter:previous"]), True),
    ),
)
_KEY_WORDS = {"pageUp": "pgup", "pageDown": "pgdn", "up": "↑", "down": "↓", "left": "←", "right": "→"}


def _hint_keys(keys: list[str]) -> str:
    """Keys as pi's tree help writes them: a shared modifier once (``ctrl+d/t``), arrows as arrows."""
    if len(keys) > 1:
        prefixes = {key.rpartition("+")[0] for key in keys}
        prefix = prefixes.pop() if len(prefixes) == 1 else ""
        text = f"{prefix}+" + "/".join(k.rpartition("+")[2] for k in keys) if prefix else "/".join(keys)
    else:
        text = keys[0] if keys else ""
    return "+".join("/".join(_KEY_WORDS.get(w, w) for w in part.split("/")) for part in text.split("+"))


def _tree_header(bindings: dict[str, list[str]]) -> str:
    """pi 1.6's help lines under the tree's title (each action's first key; unbound ones left out)."""
    lines = []
    for row in TREE_HINT_ROWS:
        items = []
        for label, actions, label_first in row:
            keys = [bindings[a][0] for a in actions if bindings.get(a)]
            if not keys:
                continue
            text = _hint_keys(keys)
            items.append(f"{label} {text}" if label_first else f"{text} {label}")
        lines.append(" " + " · ".join(items))
    return "\n".join(lines)


def _filter_label(mode: str) -> str:
    """What pi 1.6 writes after the tree's counter for a filter (nothing for the default one)."""
    return TREE_FILTER_LABELS.get(mode, "")


def _entry_ancestors(manager: Any, entry_id: Any) -> list[str]:
    """The ids above ``entry_id`` in the session tree, nearest first (its branch, which stops at
    a parent cycle, read backwards)."""
    return [entry.id for entry in reversed(manager.get_branch(entry_id)[:-1])]


async def _pick_tree_entry(ctx: InteractiveContext, selected: str | None) -> str | None:
    """The tree selector with pi's keys: fold/unfold branches, edit labels, switch filters."""
    from piko.plugins.modes.interactive.command_api import PickAction
    from piko.plugins.modes.interactive.commands.session_picker import _bindings
    from piko.plugins.modes.interactive.commands.tree_view import FILTER_MODES
    from piko.plugins.modes.interactive.commands.tree_view import initial_row
    from piko.plugins.modes.interactive.commands.tree_view import tree_rows

    manager = ctx.session.session_manager
    bindings = _bindings(ctx.app)
    actions = {name: bindings.get(action, []) for name, action in TREE_ACTIONS.items()}
    mode = str(ctx.app.settings.get("treeFilterMode") or "default")
    if mode not in FILTER_MODES:
        mode = "default"
    folded: set[str] = set()
    query = ""
    while True:
        rows = tree_rows(manager, mode, folded)
        if not rows and mode != "all":
            rows = tree_rows(manager, "all", folded)
        items = [
            PickItem(label=row.text, value=row.entry_id, depth=row.depth, current=row.is_leaf) for row in rows
        ]
        choice = await ctx.pick(
            "Session Tree",
            items,
            initial=selected or initial_row(manager, rows),
            actions=actions,
            header=functools.partial(_tree_header, bindings),
            query=query,
            search_prompt="  Type to search: ",
            status=functools.partial(_filter_label, mode),
            ancestors=functools.partial(_entry_ancestors, manager),
        )
        if not isinstance(choice, PickAction):
            return None if choice is None else str(choice)
        query = choice.query
        selected = str(choice.value) if choice.value is not None else None
        index = next((i for i, r in enumerate(rows) if r.entry_id == selected), -1)
        row = rows[index] if index >= 0 else None
        if choice.name.startswith("filter:"):
            wanted = choice.name.split(":", 1)[1]
            if wanted in ("next", "previous"):
                step = 1 if wanted == "next" else -1
                mode = FILTER_MODES[(FILTER_MODES.index(mode) + step) % len(FILTER_MODES)]
            else:
                mode = "default" if wanted == mode else wanted  # pi: the same key again toggles back
        elif choice.name == "fold" and row is not None:
            has_children = index + 1 < len(rows) and rows[index + 1].parent_row == row.entry_id
            if row.entry_id not in folded and has_children:
                folded.add(row.entry_id)
            elif row.parent_row is not None:
                selected = row.parent_row  # already folded (or a leaf): up to where the segment starts
        elif choice.name == "unfold" and row is not None:
            if row.entry_id in folded:
                folded.discard(row.entry_id)
            elif index + 1 < len(rows):
                selected = rows[index + 1].entry_id
        elif choice.name == "label" and row is not None:
            current = manager.get_label(row.entry_id) or ""
            text = await ctx.ui.input("Label", "empty to remove the label", prefill=current)
            if text is not None:
                ctx.session.set_label(row.entry_id, text.strip() or None)


async def tree_command(ctx: InteractiveContext, args: str) -> None:
    """``/tree``: choose an entry of the session tree and continue from there (optionally summarizing)."""
    session = ctx.session
    manager = session.session_manager
    if not manager.get_entries():
        ctx.show_info("No entries in session")
        return
    selected: str | None = None
    while True:
        leaf = manager.get_leaf_id()
        target = await _pick_tree_entry(ctx, selected)
        if target is None:
            return
        if target == leaf:
            ctx.show_info("Already at this point")
            return
        summarize, instructions = False, None
        if not ctx.app.settings.get("branchSummary.skipPrompt"):
            answer = await _summary_choice(ctx)
            if answer is None:
                selected = target  # back to the tree, on the same entry
                continue
            summarize, instructions = answer
        if summarize:
            ctx.show_info("Summarizing branch...")
        try:
            result = await session.navigate_tree(
                target, summarize=summarize, custom_instructions=instructions
            )
        except Exception as exc:
            ctx.show_error(error_text(exc))
            return
        if result.aborted:
            ctx.show_info("Branch summarization cancelled")
            selected = target
            continue
        if result.cancelled:
            ctx.show_info("Navigation cancelled")
            return
        ctx.redraw_conversation()
        editor_text = result.editor_text
        if editor_text and not ctx.get_editor_text().strip():
            ctx.set_editor_text(editor_text)
        ctx.show_info("Navigated to selected point")
        for warning in result.warnings:
            ctx.show_warning(warning)
        return


async def resume_command(ctx: InteractiveContext, args: str) -> None:
    """``/resume``: choose a session (this project or all) and switch to it."""
    from piko.plugins.modes.interactive.commands.session_picker import choose_session

    session = ctx.session
    manager = session.session_manager
    try:
        directory = manager.get_session_dir() if session.session_file else None
    except Exception:
        directory = None
    path = await choose_session(
        ctx.app,
        ctx.pick,
        current_file=session.session_file,
        session_dir=directory,
        cwd=session.cwd,
        on_empty=ctx.show_info,
        ui=ctx.ui,
    )
    if path is None:
        return
    result = await _switched(ctx, session.switch_session(path), "Failed to resume session: ")
    if result is None:
        return
    ctx.show_info("Resumed session")
    for warning in result.warnings:
        ctx.show_warning(warning)


async def import_command(ctx: InteractiveContext, args: str) -> None:
    """``/import <path.jsonl>``: copy a session file into this project's sessions and switch to it
    (its id and working directory kept)."""
    import asyncio
    import os

    from piko.plugins.modes.interactive.commands.common import path_argument

    given = path_argument(args)
    if not given:
        ctx.show_error("Usage: /import <path.jsonl>")
        return
    source = os.path.abspath(os.path.join(ctx.session.cwd, os.path.expanduser(given)))
    if not os.path.isfile(source):
        ctx.show_error(f"Failed to import session: File not found: {source}")
        return
    if not await ctx.ui.confirm("Import session", f"Replace current session with {given}?"):
        ctx.show_info("Import cancelled")
        return
    try:
        destination = await asyncio.to_thread(_copy_into_session_dir, ctx.session, source)
    except OSError as exc:
        ctx.show_error(f"Failed to import session: {error_text(exc)}")
        return
    result = await _switched(ctx, ctx.session.switch_session(destination), "Failed to import session: ")
    if result is None:
        return
    ctx.show_info(f"Session imported from: {given}")
    for warning in result.warnings:
        ctx.show_warning(warning)


def _copy_into_session_dir(session: Any, source: str) -> str:
    """``source`` copied into the session directory under a free name (as it is when already there)."""
    import os
    import shutil

    directory = session.session_manager.get_session_dir()
    os.makedirs(directory, exist_ok=True)
    destination = os.path.join(directory, os.path.basename(source))
    if os.path.abspath(destination) == os.path.abspath(source):
        return destination
    stem, ext = os.path.splitext(destination)
    suffix = 1
    while os.path.exists(destination):
        destination = f"{stem}-{suffix}{ext}"
        suffix += 1
    with open(source, "rb") as reader, open(destination, "xb") as writer:
        shutil.copyfileobj(reader, writer)
    return destination
