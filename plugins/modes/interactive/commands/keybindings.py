"""pi's key bindings: the default keys of every action, ``keybindings.json`` over them, and display text.

The action ids, their default keys and descriptions are pi 0.73.1's (``pi-tui`` and
``pi-coding-agent``'s ``KEYBINDINGS``); old un-namespaced ids in ``keybindings.json``
(``cursorUp``, ``expandTools``...) are read under their new names, as pi migrates them.
A user entry replaces the defaults of its action (one key or a list of keys).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_WINDOWS = sys.platform == "win32"

# action id -> (default keys, description)
KEYBINDINGS: dict[str, tuple[tuple[str, ...], str]] = {
    "tui.editor.cursorUp": (("up",), "Move cursor up"),
    "tui.editor.cursorDown": (("down",), "Move cursor down"),
    "tui.editor.cursorLeft": (("left", "ctrl+b"), "Move cursor left"),
    "tui.editor.cursorRight": (("right", "ctrl+f"), "Move cursor right"),
    "tui.editor.cursorWordLeft": (("alt+left", "ctrl+left", "alt+b"), "Move cursor word left"),
    "tui.editor.cursorWordRight": (("alt+right", "ctrl+right", "alt+f"), "Move cursor word right"),
    "tui.editor.cursorLineStart": (("home", "ctrl+a"), "Move to line start"),
    "tui.editor.cursorLineEnd": (("end", "ctrl+e"), "Move to line end"),
    "tui.editor.jumpForward": (("ctrl+]",), "Jump forward to character"),
    "tui.editor.jumpBackward": (("ctrl+alt+]",), "Jump backward to character"),
    "tui.editor.pageUp": (("pageUp",), "Page up"),
    "tui.editor.pageDown": (("pageDown",), "Page down"),
    "tui.editor.deleteCharBackward": (("backspace",), "Delete character backward"),
    "tui.editor.deleteCharForward": (("delete", "ctrl+d"), "Delete character forward"),
    "tui.editor.deleteWordBackward": (("ctrl+w", "alt+backspace"), "Delete word backward"),
    "tui.editor.deleteWordForward": (("alt+d", "alt+delete"), "Delete word forward"),
    "tui.editor.deleteToLineStart": (("ctrl+u",), "Delete to line start"),
    "tui.editor.deleteToLineEnd": (("ctrl+k",), "Delete to line end"),
    "tui.editor.yank": (("ctrl+y",), "Yank"),
    "tui.editor.yankPop": (("alt+y",), "Yank pop"),
    "tui.editor.undo": (("ctrl+-",), "Undo"),
    "tui.input.newLine": (("shift+enter",), "Insert newline"),
    "tui.input.submit": (("enter",), "Submit input"),
    "tui.input.tab": (("tab",), "Tab / autocomplete"),
    "tui.input.copy": (("ctrl+c",), "Copy selection"),
    "tui.select.up": (("up",), "Move selection up"),
    "tui.select.down": (("down",), "Move selection down"),
    "tui.select.pageUp": (("pageUp",), "Selection page up"),
    "tui.select.pageDown": (("pageDown",), "Selection page down"),
    "tui.select.confirm": (("enter",), "Confirm selection"),
    "tui.select.cancel": (("escape", "ctrl+c"), "Cancel selection"),
    "tui.altScreen.pageUp": (("pageUp",), "Scroll the transcript up by one page"),
    "tui.altScreen.pageDown": (("pageDown",), "Scroll the transcript down by one page"),
    "tui.altScreen.halfPageUp": ((), "Scroll the transcript up by half a page"),
    "tui.altScreen.halfPageDown": ((), "Scroll the transcript down by half a page"),
    "tui.altScreen.lineUp": ((), "Scroll the transcript up by one line"),
    "tui.altScreen.lineDown": ((), "Scroll the transcript down by one line"),
    "tui.altScreen.previousPrompt": (("ctrl+shift+up",), "Jump to the previous marked message"),
    "tui.altScreen.nextPrompt": (("ctrl+shift+down",), "Jump to the next marked message"),
    "tui.altScreen.search": (("ctrl+shift+f",), "Search the rendered transcript"),
    "tui.altScreen.searchNext": (("enter", "ctrl+g"), "Select the next search match while searching"),
    "tui.altScreen.searchPrevious": (("shift+enter", "ctrl+shift+g"), "Select the previous search match"),
    "tui.altScreen.searchClose": (("escape",), "Close transcript search"),
    "tui.altScreen.top": (("ctrl+home",), "Scroll to the beginning of the transcript"),
    "tui.altScreen.bottom": (("ctrl+end",), "Scroll to the transcript end and follow new output"),
    "app.interrupt": (("escape",), "Cancel or abort"),
    "app.clear": (("ctrl+c",), "Clear editor"),
    "app.exit": (("ctrl+d",), "Exit when editor is empty"),
    "app.suspend": ((() if _WINDOWS else ("ctrl+z",)), "Suspend to background"),
    "app.thinking.cycle": (("shift+tab",), "Cycle thinking level"),
    "app.model.cycleForward": (("ctrl+p",), "Cycle to next model"),
    "app.model.cycleBackward": (("shift+ctrl+p",), "Cycle to previous model"),
    "app.model.select": (("ctrl+l",), "Open model selector"),
    "app.tools.expand": (("ctrl+o",), "Toggle tool output"),
    "app.thinking.toggle": (("ctrl+t",), "Toggle thinking blocks"),
    "app.session.toggleNamedFilter": (("ctrl+n",), "Toggle named session filter"),
    "app.editor.external": (("ctrl+g",), "Open external editor"),
    "app.message.copy": (("ctrl+x",), "Copy the selection or the last agent message"),
    "app.message.followUp": (("alt+enter",), "Queue follow-up message"),
    "app.message.dequeue": (("alt+up",), "Restore queued messages"),
    "app.clipboard.pasteImage": ((("alt+v",) if _WINDOWS else ("ctrl+v",)), "Paste image from clipboard"),
    "app.session.new": ((), "Start a new session"),
    "app.session.tree": ((), "Open session tree"),
    "app.session.fork": ((), "Fork current session"),
    "app.session.resume": ((), "Resume a session"),
    "app.tree.foldOrUp": (("ctrl+left", "alt+left"), "Fold tree branch or move up"),
    "app.tree.unfoldOrDown": (("ctrl+right", "alt+right"), "Unfold tree branch or move down"),
    "app.tree.editLabel": (("shift+l",), "Edit tree label"),
    "app.tree.toggleLabelTimestamp": (("shift+t",), "Toggle tree label timestamps"),
    "app.session.togglePath": (("ctrl+p",), "Toggle session path display"),
    "app.session.toggleSort": (("ctrl+s",), "Toggle session sort mode"),
    "app.session.rename": (("ctrl+r",), "Rename session"),
    "app.session.delete": (("ctrl+d",), "Delete session"),
    "app.session.deleteNoninvasive": (("ctrl+backspace",), "Delete session when query is empty"),
    "app.models.save": (("ctrl+s",), "Save model selection"),
    "app.models.enableAll": (("ctrl+a",), "Enable all models"),
    "app.models.clearAll": (("ctrl+x",), "Clear all models"),
    "app.models.toggleProvider": (("ctrl+p",), "Toggle all models for provider"),
    "app.models.reorderUp": (("alt+up",), "Move model up in order"),
    "app.models.reorderDown": (("alt+down",), "Move model down in order"),
    "app.tree.filter.default": (("ctrl+d",), "Tree filter: default view"),
    "app.tree.filter.noTools": (("ctrl+t",), "Tree filter: hide tool results"),
    "app.tree.filter.userOnly": (("ctrl+u",), "Tree filter: user messages only"),
    "app.tree.filter.labeledOnly": (("ctrl+l",), "Tree filter: labeled entries only"),
    "app.tree.filter.all": (("ctrl+a",), "Tree filter: show all entries"),
    "app.tree.filter.cycleForward": (("ctrl+o",), "Tree filter: cycle forward"),
    "app.tree.filter.cycleBackward": (("shift+ctrl+o",), "Tree filter: cycle backward"),
}

# Names older pi versions used in keybindings.json.
LEGACY_NAMES: dict[str, str] = {
    "cursorUp": "tui.editor.cursorUp",
    "cursorDown": "tui.editor.cursorDown",
    "cursorLeft": "tui.editor.cursorLeft",
    "cursorRight": "tui.editor.cursorRight",
    "cursorWordLeft": "tui.editor.cursorWordLeft",
    "cursorWordRight": "tui.editor.cursorWordRight",
    "cursorLineStart": "tui.editor.cursorLineStart",
    "cursorLineEnd": "tui.editor.cursorLineEnd",
    "jumpForward": "tui.editor.jumpForward",
    "jumpBackward": "tui.editor.jumpBackward",
    "pageUp": "tui.editor.pageUp",
    "pageDown": "tui.editor.pageDown",
    "deleteCharBackward": "tui.editor.deleteCharBackward",
    "deleteCharForward": "tui.editor.deleteCharForward",
    "deleteWordBackward": "tui.editor.deleteWordBackward",
    "deleteWordForward": "tui.editor.deleteWordForward",
    "deleteToLineStart": "tui.editor.deleteToLineStart",
    "deleteToLineEnd": "tui.editor.deleteToLineEnd",
    "yank": "tui.editor.yank",
    "yankPop": "tui.editor.yankPop",
    "undo": "tui.editor.undo",
    "newLine": "tui.input.newLine",
    "submit": "tui.input.submit",
    "tab": "tui.input.tab",
    "copy": "tui.input.copy",
    "selectUp": "tui.select.up",
    "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp",
    "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel",
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "suspend": "app.suspend",
    "cycleThinkingLevel": "app.thinking.cycle",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "selectModel": "app.model.select",
    "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter",
    "externalEditor": "app.editor.external",
    "followUp": "app.message.followUp",
    "dequeue": "app.message.dequeue",
    "pasteImage": "app.clipboard.pasteImage",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
    "treeFoldOrUp": "app.tree.foldOrUp",
    "treeUnfoldOrDown": "app.tree.unfoldOrDown",
    "treeEditLabel": "app.tree.editLabel",
    "treeToggleLabelTimestamp": "app.tree.toggleLabelTimestamp",
    "toggleSessionPath": "app.session.togglePath",
    "toggleSessionSort": "app.session.toggleSort",
    "renameSession": "app.session.rename",
    "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
}


def keybindings_path(agent_dir: str | Path) -> Path:
    """``<agent dir>/keybindings.json``."""
    return Path(agent_dir) / "keybindings.json"


def load_user_bindings(path: str | Path) -> dict[str, list[str]]:
    """The user's bindings from ``keybindings.json`` (legacy names renamed; bad values ignored).

    A missing or unreadable file, or one that is not a JSON object, gives ``{}`` (as pi).
    When both a legacy name and its new name are present, the new name wins.
    """
    from piko.lib import jsonio

    try:
        raw = jsonio.read_json_file(path)
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    out: dict[str, list[str]] = {}
    for key, value in raw.items():
        key = str(key)
        name = LEGACY_NAMES.get(key, key)
        if name != key and name in raw:
            continue
        if isinstance(value, str):
            out[name] = [value]
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[name] = list(value)
    return out


def _unique(keys: Any) -> list[str]:
    seen: list[str] = []
    for key in keys:
        if key not in seen:
            seen.append(key)
    return seen


def resolve_bindings(user: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Every action's keys in effect: the user's where given, else pi's defaults."""
    user = user or {}
    return {
        action: _unique(user[action] if action in user else defaults)
        for action, (defaults, _description) in KEYBINDINGS.items()
    }


def conflicts(user: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """Keys the user bound to more than one action: ``[(key, [actions...])]``."""
    claims: dict[str, list[str]] = {}
    for action, keys in user.items():
        if action not in KEYBINDINGS:
            continue
        for key in _unique(keys):
            claims.setdefault(key, []).append(action)
    return [(key, actions) for key, actions in claims.items() if len(actions) > 1]


def effective_bindings(app: Any) -> dict[str, list[str]]:
    """The bindings in effect for ``app`` (its agent dir's ``keybindings.json`` over the defaults)."""
    from piko.config.paths import agent_dir

    base = getattr(app, "agent_dir", None) or agent_dir()
    return resolve_bindings(load_user_bindings(keybindings_path(base)))


def capitalize_key(key: str) -> str:
    """``ctrl+c`` -> ``Ctrl+C``; alternatives separated by ``/`` are capitalised each."""
    return "/".join(
        "+".join(part[:1].upper() + part[1:] for part in alternative.split("+"))
        for alternative in key.split("/")
    )


def key_text(bindings: dict[str, list[str]], action: str) -> str:
    """The keys of ``action`` as pi writes them in hints (``left/ctrl+b``); ``""`` when unbound."""
    return "/".join(bindings.get(action, []))
