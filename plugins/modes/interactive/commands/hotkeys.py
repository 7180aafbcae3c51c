"""``/hotkeys``: the keyboard shortcuts in effect, as pi's markdown tables."""

from __future__ import annotations

import re
import sys
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.commands.keybindings import capitalize_key
from piko.plugins.modes.interactive.commands.keybindings import effective_bindings
from piko.plugins.modes.interactive.commands.keybindings import key_text


def _rows(header: str, rows: list[tuple[str, str]]) -> str:
    lines = [f"**{header}**", "| Key | Action |", "|-----|--------|"]
    lines.extend(f"| {keys} | {action} |" for keys, action in rows)
    return "\n".join(lines)


def describe_hotkeys(app: Any, bindings: dict[str, list[str]] | None = None) -> str:
    """The shortcuts in effect as markdown (pi's ``/hotkeys`` tables, plus extension shortcuts).

    ``bindings`` (action id -> keys) defaults to ``keybindings.json`` of ``app``'s agent dir
    over pi's defaults.
    """
    kb = bindings if bindings is not None else effective_bindings(app)

    def k(*actions: str) -> str:
        return " / ".join(f"`{capitalize_key(key_text(kb, a))}`" for a in actions)

    new_line = "New line" + (" (Ctrl+Enter on Windows Terminal)" if sys.platform == "win32" else "")
    navigation = [
        (
            k(
                "tui.editor.cursorUp",
                "tui.editor.cursorDown",
                "tui.editor.cursorLeft",
                "tui.editor.cursorRight",
            ),
            "Move cursor / browse history (Up when empty)",
        ),
        (k("tui.editor.cursorWordLeft", "tui.editor.cursorWordRight"), "Move by word"),
        (k("tui.editor.cursorLineStart"), "Start of line"),
        (k("tui.editor.cursorLineEnd"), "End of line"),
        (k("tui.editor.jumpForward"), "Jump forward to character"),
        (k("tui.editor.jumpBackward"), "Jump backward to character"),
        (k("tui.editor.pageUp", "tui.editor.pageDown"), "Scroll by page"),
    ]
    editing = [
        (k("tui.input.submit"), "Send message"),
        (k("tui.input.newLine"), new_line),
        (k("tui.editor.deleteWordBackward"), "Delete word backwards"),
        (k("tui.editor.deleteWordForward"), "Delete word forwards"),
        (k("tui.editor.deleteToLineStart"), "Delete to start of line"),
        (k("tui.editor.deleteToLineEnd"), "Delete to end of line"),
        (k("tui.editor.yank"), "Paste the most-recently-deleted text"),
        (k("tui.editor.yankPop"), "Cycle through the deleted text after pasting"),
        (k("tui.editor.undo"), "Undo"),
    ]
    other = [
        (k("tui.input.tab"), "Path completion / accept autocomplete"),
        (k("app.interrupt"), "Cancel autocomplete / abort streaming"),
        (k("app.clear"), "Clear editor (first) / exit (second)"),
        (k("app.exit"), "Exit (when editor is empty)"),
        (k("app.suspend"), "Suspend to background"),
        (k("app.thinking.cycle"), "Cycle thinking level"),
        (k("app.model.cycleForward", "app.model.cycleBackward"), "Cycle models"),
        (k("app.model.select"), "Open model selector"),
        (k("app.tools.expand"), "Toggle tool output expansion"),
        (k("app.thinking.toggle"), "Toggle thinking block visibility"),
        (k("app.editor.external"), "Edit message in external editor"),
        (k("app.message.followUp"), "Queue follow-up message"),
        (k("app.message.dequeue"), "Restore queued messages"),
        (k("app.clipboard.pasteImage"), "Paste image from clipboard"),
        ("`/`", "Slash commands"),
        ("`!`", "Run bash command"),
        ("`!!`", "Run bash command (excluded from context)"),
    ]
    parts = [_rows("Navigation", navigation), _rows("Editing", editing), _rows("Other", other)]
    shortcuts = _extension_shortcuts(app)
    if shortcuts:
        parts.append(_rows("Extensions", shortcuts))
    return "\n\n".join(parts)


def _extension_shortcuts(app: Any) -> list[tuple[str, str]]:
    registries = getattr(app, "registries", None)
    if registries is None:
        return []
    try:
        definitions = list(registries.shortcuts)
    except Exception:  # a broken registration must not break /hotkeys
        return []
    rows = []
    for definition in definitions:
        if definition.reserved:  # the mode's own keys, listed in their own sections
            continue
        key = re.sub(r"\b\w", lambda m: m.group(0).upper(), str(definition.key))
        description = definition.description or app.plugin_source(definition.plugin)
        rows.append((f"`{key}`", description))
    return rows


async def hotkeys_command(ctx: InteractiveContext, args: str) -> None:
    """Show the shortcuts in effect."""
    from rich.console import Group
    from rich.markdown import Markdown
    from rich.rule import Rule
    from rich.text import Text

    ctx.show(
        Group(
            Rule(style="dim"),
            Text("Keyboard Shortcuts", style="bold cyan"),
            Text(""),
            Markdown(describe_hotkeys(ctx.app)),
            Rule(style="dim"),
        )
    )
