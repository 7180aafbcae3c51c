"""Tool-name lists as pi 1.6 reads them: ``*`` patterns, ``+name``/``-name`` modifiers, layer merging.

``--tools``, ``--exclude-tools`` and the ``defaultTools`` setting take lists of tool names. An
entry with ``*`` is a pattern (``*`` matches any characters, nothing else is special). A list of
only ``+name``/``-name`` entries changes an inherited selection instead of replacing it; such
entries take exact names, and they cannot be mixed with plain names in ``--tools``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

# the tools on when nothing changes the selection
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")


def split_tool_list(value: str) -> list[str]:
    """``"read, grep,,"`` -> ``["read", "grep"]`` (a command-line list)."""
    return [part.strip() for part in value.split(",") if part.strip()]


def is_modifier(entry: Any) -> bool:
    """Whether ``entry`` is a ``+name`` or ``-name`` entry."""
    return isinstance(entry, str) and entry.startswith(("+", "-"))


def is_pattern(entry: str) -> bool:
    return "*" in entry


def tool_list_error(entries: Sequence[str]) -> str | None:
    """What is wrong with a ``--tools`` list (pi's wording), or None when it is valid."""
    modifiers = [e for e in entries if is_modifier(e)]
    if not modifiers:
        return None
    if len(modifiers) < len(entries):
        return "tool names cannot be mixed with +name or -name entries"
    pattern = next((e for e in modifiers if is_pattern(e)), None)
    if pattern is not None:
        return f"+name and -name entries take exact tool names, not patterns: {pattern}"
    return None


def apply_modifiers(base: Iterable[str], entries: Iterable[str]) -> list[str]:
    """``base`` with the ``+name`` entries added and ``-name`` removed, in order (others ignored)."""
    tools = list(base)
    for entry in entries:
        if not is_modifier(entry):
            continue
        name = entry[1:]
        if entry.startswith("+") and name and name not in tools:
            tools.append(name)
        elif entry.startswith("-") and name in tools:
            tools.remove(name)
    return tools


def merge_default_tools(base: Any, top: Any) -> Any:
    """Two settings layers' ``defaultTools``: a list of only modifiers extends the one below, any
    other value replaces it (``None``: the layer does not set it)."""
    if top is None:
        return base
    if not isinstance(base, list) or not isinstance(top, list) or not all(is_modifier(e) for e in top):
        return top
    return [*base, *top]


def resolve_default_tools(entries: Sequence[Any]) -> list[str]:
    """A merged ``defaultTools`` list as tool names: its plain names (or pi's defaults when it has
    only modifiers), then each ``+name``/``-name`` in order. ``[]`` is no tools."""
    names = [e for e in entries if isinstance(e, str)]
    plain = [e for e in names if not is_modifier(e)]
    base = plain if plain or not names else list(DEFAULT_TOOL_NAMES)
    return apply_modifiers(base, names)


def _pattern(entry: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in entry.split("*")) + "$", re.DOTALL)


def name_matcher(entries: Iterable[str]) -> Callable[[str], bool]:
    """Whether a tool name is one of ``entries`` or matches one of their patterns."""
    listed = list(entries)
    names = {e for e in listed if not is_pattern(e)}
    patterns = [_pattern(e) for e in listed if is_pattern(e)]
    return lambda name: name in names or any(p.match(name) for p in patterns)


def unmatched(entries: Iterable[str], registered: Iterable[str]) -> list[str]:
    """The entries (names, ``+``/``-`` names) that name no registered tool. A pattern is never
    unmatched: it may name tools a plugin registers later (MCP servers as they connect)."""
    known = list(registered)
    out: list[str] = []
    for entry in entries:
        name = entry[1:] if is_modifier(entry) else entry
        hit = True if is_pattern(name) else name in known
        if not hit and entry not in out:
            out.append(entry)
    return out
