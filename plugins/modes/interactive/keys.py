"""pi's key names (``ctrl+p``, ``alt+enter``, ``shift+tab``) translated to prompt_toolkit key sequences.

Terminals send some keys pi knows only in extended encodings (``shift+enter``, ``ctrl+shift+p``
as ``CSI 13;2u`` / ``CSI 27;2;13~``); those sequences are taught to prompt_toolkit's input
parser and mapped to spare function keys (F13-F24), so they work where the terminal sends
them and are harmless where it does not.
"""

from __future__ import annotations

import string
from typing import Any

_SPECIAL = {
    "escape": "escape", "esc": "escape", "enter": "enter", "return": "enter", "tab": "tab",
    "space": "space", "backspace": "backspace", "delete": "delete", "insert": "insert",
    "clear": "c-l", "home": "home", "end": "end", "pageup": "pageup", "pagedown": "pagedown",
    "up": "up", "down": "down", "left": "left", "right": "right",
}  # fmt: skip
_CTRL_SYMBOLS = {"-": "c-_", "_": "c-_", "]": "c-]", "\\": "c-\\", "^": "c-^", "@": "c-@", "space": "c-@"}
_ARROWS = ("up", "down", "left", "right", "home", "end", "delete", "pageup", "pagedown", "insert")

# xterm key codes for the extended encodings (CSI-u and modifyOtherKeys)
_CODES = {"enter": 13, "tab": 9, "space": 32, "backspace": 127, "escape": 27}

_SPARE: list[str] = [f"f{n}" for n in range(24, 12, -1)]
_ALLOCATED: dict[str, str] = {}


class KeyNameError(ValueError):
    """A key name that cannot be bound (the message says why)."""


def _modifier_value(mods: set[str]) -> int:
    return 1 + (1 if "shift" in mods else 0) + (2 if "alt" in mods else 0) + (4 if "ctrl" in mods else 0)


def _extended(mods: set[str], base: str) -> str:
    """A spare key standing for an extended-encoding key; its sequences are added to the parser."""
    name = "+".join(sorted(mods)) + "+" + base
    if name in _ALLOCATED:
        return _ALLOCATED[name]
    if not _SPARE:
        raise KeyNameError(f"too many extended keys; cannot bind {name}")
    spare = _SPARE.pop(0)
    _ALLOCATED[name] = spare
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    key = Keys(spare)
    modifier = _modifier_value(mods)
    codes: list[int] = []
    if base in _CODES:
        codes.append(_CODES[base])
    elif len(base) == 1:
        codes.extend({ord(base.lower()), ord(base.upper())})
    for code in codes:
        ANSI_SEQUENCES.setdefault(f"\x1b[{code};{modifier}u", key)
        ANSI_SEQUENCES.setdefault(f"\x1b[27;{modifier};{code}~", key)
    return spare


def to_prompt_toolkit(key: str) -> tuple[str, ...]:
    """pi's ``key`` (``ctrl+shift+p``, ``alt+enter``, ``shift+l``) as a prompt_toolkit key sequence."""
    parts = [p for p in key.strip().lower().split("+")]
    if key.endswith("++"):  # "ctrl++"
        parts = [*[p for p in key[:-2].lower().split("+") if p], "+"]
    if not parts or not parts[-1]:
        raise KeyNameError(f"empty key: {key!r}")
    base = parts[-1]
    mods = set(parts[:-1])
    unknown = mods - {"ctrl", "shift", "alt"}
    if unknown:
        raise KeyNameError(f"unknown modifier {sorted(unknown)[0]!r} in {key!r}")
    base = _SPECIAL.get(base, base)
    if base.startswith("f") and base[1:].isdigit() and 1 <= int(base[1:]) <= 12:
        name = base
    elif base in _SPECIAL.values() or len(base) == 1:
        name = base
    else:
        raise KeyNameError(f"unknown key {parts[-1]!r} in {key!r}")
    alt = "alt" in mods
    mods.discard("alt")
    if mods == {"ctrl"}:
        if len(name) == 1 and name in string.ascii_lowercase:
            name = f"c-{name}"
        elif name in _CTRL_SYMBOLS:
            name = _CTRL_SYMBOLS[name]
        elif name in _ARROWS:
            name = f"c-{name}"
        elif name == "backspace":
            name = "c-h" if not alt else "backspace"
        else:
            name = _extended({"ctrl", *(["alt"] if alt else [])}, name)
            alt = False
    elif mods == {"shift"}:
        if name == "tab":
            name = "s-tab"
        elif name in _ARROWS:
            name = f"s-{name}"
        elif len(name) == 1 and name in string.ascii_lowercase:
            name = name.upper()
        else:
            name = _extended({"shift", *(["alt"] if alt else [])}, name)
            alt = False
    elif mods == {"ctrl", "shift"}:
        if name in _ARROWS:
            name = f"c-s-{name}"
        else:
            name = _extended({"ctrl", "shift", *(["alt"] if alt else [])}, name)
            alt = False
    elif mods:
        raise KeyNameError(f"cannot bind {key!r}")
    if name == "space":
        name = " "
    if name == "backspace":
        name = "c-h"
    return ("escape", name) if alt else (name,)


def bind(kb: Any, keys: list[str], handler: Any, *, filter: Any = True, eager: bool = False) -> list[str]:
    """Bind each of pi's ``keys`` to ``handler``; returns problems (unbindable keys)."""
    problems = []
    for key in keys:
        try:
            sequence = to_prompt_toolkit(key)
        except KeyNameError as exc:
            problems.append(str(exc))
            continue
        kb.add(*sequence, filter=filter, eager=eager)(handler)
    return problems


def install_extended_keys() -> None:
    """Teach the input parser the extended encodings of keys pi uses by default."""
    for key in ("shift+enter", "ctrl+enter", "alt+enter", "shift+ctrl+p"):
        try:
            to_prompt_toolkit(key)
        except KeyNameError:
            pass
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    ANSI_SEQUENCES.setdefault("\x1b[13;3u", (Keys.Escape, Keys.ControlM))
    ANSI_SEQUENCES.setdefault("\x1b[27;3;13~", (Keys.Escape, Keys.ControlM))
