"""``/new``, ``/fork``, ``/clone``, ``/tree`` and ``/resume``: moving between sessions and within one."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext, PickItem
from piko.plugins.modes.interactive.commands.common import error_text, one_line

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


async def tree_command(ctx: InteractiveContext, args: str) -> None:
    """``/tree``: choose an entry of the session tree and continue from there (optionally summarizing)."""
    from piko.plugins.modes.interactive.commands.tree_view import initial_row, tree_rows

    session = ctx.session
    manager = session.session_manager
    if not manager.get_entries():
        ctx.show_info("No entries in session")
        return
    mode = str(ctx.app.settings.get("treeFilterMode") or "default")
    selected: str | None = None
    while True:
        rows = tree_rows(manager, mode)
        if not rows:
            rows = tree_rows(manager, "all")
        leaf = manager.get_leaf_id()
        items = [
            PickItem(label=row.text, value=row.entry_id, depth=row.depth, current=row.is_leaf) for row in rows
        ]
        target = await ctx.pick("Session Tree", items, initial=selected or initial_row(manager, rows))
        if target is None:
            return
        target = str(target)
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
    )
    if path is None:
        return
    result = await _switched(ctx, session.switch_session(path), "Failed to resume session: ")
    if result is None:
        return
    ctx.show_info("Resumed session")
    for warning in result.warnings:
        ctx.show_warning(warning)
