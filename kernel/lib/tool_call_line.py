"""pi's one-line form of a tool call (``[read: src/a.py:10-19]``, ``[bash: ls -la]``), shown in the
session tree of the interactive mode and of the HTML export alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["read_range", "tool_call_line"]

BASH_WIDTH = 50
"""How many characters of a bash command the line shows."""

ARGUMENTS_WIDTH = 40
"""How many characters of another tool's JSON arguments the line shows."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _js_text(value: Any) -> str:
    """``String(value)`` for the values an offset takes: numbers as JavaScript writes them."""
    from piko.lib.jsnumbers import js_string

    return js_string(value) if _is_number(value) else str(value)


def read_range(args: dict[str, Any]) -> str:
    """``:start-end`` from ``offset``/``limit`` (``:start`` without a limit, nothing without either)."""
    offset, limit = args.get("offset"), args.get("limit")
    if offset is None and limit is None:
        return ""
    start: Any = offset if offset is not None else 1
    end = start + limit - 1 if _is_number(start) and _is_number(limit) else None
    return f":{_js_text(start)}" + (f"-{_js_text(end)}" if end else "")


def _arguments(args: dict[str, Any]) -> str:
    from piko.lib import jsonio

    try:
        text = jsonio.dumps(args)
    except (TypeError, ValueError):
        text = str(args)
    return text[:ARGUMENTS_WIDTH] + ("..." if len(text) > ARGUMENTS_WIDTH else "")


def tool_call_line(name: str, args: Any, shorten_path: Callable[[str], str]) -> str:
    """The call as one line; ``shorten_path`` writes a path shorter (the tree and the export each
    put ``~`` for the home folder their own way)."""
    args = args if isinstance(args, dict) else {}
    if name in ("read", "write", "edit"):
        path = shorten_path(str(args.get("path") or args.get("file_path") or ""))
        return f"[{name}: {path}{read_range(args) if name == 'read' else ''}]"
    if name == "bash":
        raw = str(args.get("command") or "")
        command = raw.replace("\n", " ").replace("\t", " ").strip()[:BASH_WIDTH]
        return f"[bash: {command}{'...' if len(raw) > BASH_WIDTH else ''}]"
    where = shorten_path(str(args.get("path") or "."))
    if name == "grep":
        return f"[grep: /{args.get('pattern') or ''}/ in {where}]"
    if name == "find":
        return f"[find: {args.get('pattern') or ''} in {where}]"
    if name == "ls":
        return f"[ls: {where}]"
    return f"[{name}: {_arguments(args)}]"
