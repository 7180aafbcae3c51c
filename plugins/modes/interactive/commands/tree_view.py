"""The session tree as selector rows: pi's ordering, indentation, filters and one-line entry texts.

Rows follow pi's tree selector: the branch holding the current leaf comes first among
siblings, a chain of single children stays at one indentation level, a branching point
indents its children. Entries hidden by the filter are skipped (their children hang on the
nearest shown ancestor). Each row names the entry as pi does (``user: ...``,
``assistant: ...``, ``[read: file]``, ``[compaction: 12k tokens]``...), prefixed with ``• `` on the
active path and ``[label] `` when labelled.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from attrs import define
from attrs import field

from piko.lib.tool_call_line import tool_call_line
from piko.plugins.modes.interactive.commands.common import one_line
from piko.sessions.entries import readable_message

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")
_BOOKKEEPING = {"label", "custom", "model_change", "thinking_level_change", "session_info", "context_edit"}


@define(kw_only=True)
class TreeRow:
    """One shown entry: its id, text, display indentation, and whether it is on the active path."""

    entry_id: str
    text: str
    depth: int
    on_path: bool
    is_leaf: bool
    parent_row: str | None = field(default=None)  # the row this one hangs under


def _text_content(content: Any, limit: int = 200) -> str:
    if isinstance(content, str):
        return content[:limit]
    from piko.data.messages import TextContent

    out = ""
    for block in content or []:
        if isinstance(block, TextContent):
            out += block.text
            if len(out) >= limit:
                return out[:limit]
    return out


def _role(message: Any) -> str:
    from piko.data.messages import message_role

    try:
        return message_role(message)
    except Exception:
        return str(getattr(message, "role", ""))


def _shorten_home(path: str) -> str:
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
    return "~" + path[len(home) :] if home and path.startswith(home) else path


def format_tool_call(name: str, args: dict[str, Any]) -> str:
    """pi's one-line form of a tool call (``[read: src/a.py:10-19]``, ``[bash: ls -la]``...)."""
    return tool_call_line(name, args, _shorten_home)


def entry_text(entry: Any, tool_calls: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """How the tree names one entry."""
    kind = entry.type
    if kind == "message":
        message = readable_message(entry)
        if message is None:
            return "[unreadable line]"
        role = _role(message)
        if role == "user":
            return "user: " + one_line(_text_content(message.content))
        if role == "assistant":
            text = one_line(_text_content(message.content))
            if text:
                return "assistant: " + text
            if message.stop_reason == "aborted":
                return "assistant: (aborted)"
            if message.error_message:
                return "assistant: " + one_line(message.error_message)[:80]
            return "assistant: (no content)"
        if role == "toolResult":
            call = tool_calls.get(message.tool_call_id) if message.tool_call_id else None
            if call is not None:
                return format_tool_call(call[0], call[1])
            return f"[{message.tool_name or 'tool'}]"
        if role == "bashExecution":
            return f"[bash]: {one_line(message.command or '')}"
        return f"[{role}]"
    describe = _ENTRY_TEXTS.get(kind)
    return describe(entry) if describe is not None else ""


# How the tree names each entry type other than messages.
_ENTRY_TEXTS: dict[str, Callable[[Any], str]] = {
    "custom_message": lambda e: f"[{e.custom_type}]: " + one_line(_text_content(e.content, 10**9)),
    "compaction": lambda e: f"[compaction: {round(e.tokens_before / 1000)}k tokens]",
    "branch_summary": lambda e: "[branch summary]: " + one_line(e.summary),
    "model_change": lambda e: f"[model: {e.model_id}]",
    "thinking_level_change": lambda e: f"[thinking: {e.thinking_level}]",
    "custom": lambda e: f"[custom: {e.custom_type}]",
    "label": lambda e: f"[label: {e.label if e.label is not None else '(cleared)'}]",
    "session_info": lambda e: f"[title: {e.name or 'empty'}]",
    "context_edit": lambda e: f"[context {'omit' if e.removes else 'replace'}: {e.target_id}]",  # pi 1.6
}


def _has_text(content: Any) -> bool:
    return bool(_text_content(content).strip())


def _shown(node: Any, mode: str, leaf_id: str | None) -> bool:
    entry = node.entry
    if entry.type == "usage":  # pi 1.6 never shows its usage records in the tree
        return False
    message: Any = readable_message(entry) if entry.type == "message" else None
    role = _role(message) if message is not None else ""
    if role == "assistant" and entry.id != leaf_id:
        if not _has_text(message.content) and message.stop_reason in ("stop", "toolUse"):
            return False
    if mode == "user-only":
        return role == "user"
    if mode == "no-tools":
        return entry.type not in _BOOKKEEPING and role != "toolResult"
    if mode == "labeled-only":
        return node.label is not None
    if mode == "all":
        return True
    return entry.type not in _BOOKKEEPING


def tree_rows(
    manager: Any, mode: str = "default", folded: set[str] | frozenset[str] = frozenset()
) -> list[TreeRow]:
    """The rows of the session tree of ``manager`` under filter ``mode``; the descendants of
    ``folded`` entries are left out (those rows are marked ``⊞``)."""
    if mode not in FILTER_MODES:
        mode = "default"
    roots = list(manager.get_tree())
    leaf_id = manager.get_leaf_id()
    on_path = {e.id for e in manager.get_branch()} if leaf_id else set()
    tool_calls: dict[str, tuple[str, dict[str, Any]]] = {}

    # visible forest: hidden nodes are skipped, their shown descendants rise to the nearest shown ancestor
    def visible(nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        stack = list(reversed(nodes))
        while stack:
            child = stack.pop()
            if _shown(child, mode, leaf_id):
                out.append(child)
            else:
                stack.extend(reversed(child.children))
        return out

    def collect_calls(node: Any) -> None:
        from piko.data.messages import ToolCall

        entry = node.entry
        if entry.type == "message" and getattr(entry, "role", "") in ("assistant", ""):
            message = readable_message(entry)
            if message is not None and _role(message) == "assistant":
                for block in message.content:
                    if isinstance(block, ToolCall):
                        tool_calls[block.id] = (block.name, dict(block.arguments or {}))

    top = visible(roots)

    def holds_path(node: Any) -> bool:
        return node.entry.id in on_path

    rows: list[TreeRow] = []
    multiple_roots = len(top) > 1
    ordered_roots = sorted(top, key=lambda n: not holds_path(n))
    work: list[tuple[Any, int, bool, str | None]] = [
        (n, 1 if multiple_roots else 0, multiple_roots, None) for n in reversed(ordered_roots)
    ]
    # tool calls are looked up from any assistant entry, whether shown or not
    every = list(roots)
    while every:
        node = every.pop()
        collect_calls(node)
        every.extend(node.children)
    while work:
        node, indent, just_branched, parent_row = work.pop()
        entry = node.entry
        text = entry_text(entry, tool_calls)
        children = visible(node.children)
        fold = entry.id in folded and bool(children)
        prefix = ("⊞ " if fold else "") + ("• " if entry.id in on_path else "")
        prefix += f"[{node.label}] " if node.label else ""
        depth = max(0, indent - 1) if multiple_roots else indent
        rows.append(TreeRow(entry_id=entry.id, text=prefix + text, depth=depth,
                            on_path=entry.id in on_path, is_leaf=entry.id == leaf_id,
                            parent_row=parent_row))  # fmt: skip
        if fold:
            continue
        children.sort(key=lambda n: not holds_path(n))
        branching = len(children) > 1
        child_indent = indent + 1 if branching or (just_branched and indent > 0) else indent
        for child in reversed(children):
            work.append((child, child_indent, branching, entry.id))
    return rows


def initial_row(manager: Any, rows: list[TreeRow]) -> str | None:
    """The row to start on: the current leaf, else its nearest shown ancestor, else the last row."""
    shown = {r.entry_id for r in rows}
    current = manager.get_leaf_id()
    while current is not None:
        if current in shown:
            return current
        entry = manager.get_entry(current)
        current = entry.parent_id if entry is not None else None
    return rows[-1].entry_id if rows else None
