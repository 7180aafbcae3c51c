"""What an export shows of a session: header, entries, leaf, labels, name, tree and totals.

Built from a session file or from the entries a running session hands over; never writes the
file. Every derived fact (labels, the current branch, tool results by call id, token totals)
is computed here once, so the renderer only formats.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from attrs import define
from attrs import field

from piko.data.messages import AssistantMessage
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.sessions.entries import EntryParseError
from piko.sessions.entries import LabelEntry
from piko.sessions.entries import MessageEntry
from piko.sessions.entries import SessionEntry
from piko.sessions.entries import SessionHeader
from piko.sessions.entries import SessionInfoEntry
from piko.sessions.reading import branch_path
from piko.sessions.reading import entry_from_dict

__all__ = ["ExportError", "SessionView", "Stats", "TreeRow", "load_session_file", "view_from_entries"]


class ExportError(Exception):
    """An export that cannot be made; the message is shown to the user as ``Error: <message>``."""


@define
class Stats:
    """Totals over every entry (all branches), as pi's export header shows them."""

    user: int = 0
    assistant: int = 0
    tool_results: int = 0
    custom: int = 0
    compactions: int = 0
    branch_summaries: int = 0
    tool_calls: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    models: list[str] = field(factory=list)


@define
class TreeRow:
    """One line of the flattened tree: the entry, its indentation and whether it is on the branch."""

    entry: SessionEntry
    depth: int
    on_branch: bool
    is_leaf: bool


@define(eq=False)
class SessionView:
    """The session as the page shows it."""

    header: dict[str, Any]
    entries: list[SessionEntry]
    leaf_id: str | None
    source: str | None = None
    system_prompt: str | None = None
    diagnostics: list[str] = field(factory=list)
    labels: dict[str, str] = field(factory=dict)
    name: str | None = None
    branch_ids: set[str] = field(factory=set)
    tool_results: dict[str, ToolResultMessage] = field(factory=dict)
    tool_calls: dict[str, ToolCall] = field(factory=dict)
    message_errors: dict[str, str] = field(factory=dict)
    by_id: dict[str, SessionEntry] = field(factory=dict)

    def __attrs_post_init__(self) -> None:
        self._index()

    # -- derived facts -------------------------------------------------------------------------

    def message(self, entry: SessionEntry) -> Any:
        """The structured message of a message entry, or ``None`` when it cannot be read."""
        if not isinstance(entry, MessageEntry) or entry.id in self.message_errors:
            return None
        try:
            message = entry.message
        except Exception as exc:  # a hand-edited or foreign line: shown as unreadable, export goes on
            self.message_errors[entry.id] = str(exc) or type(exc).__name__
            return None
        content = getattr(message, "content", [])
        if not isinstance(content, (list, str)) or (
            isinstance(message, (AssistantMessage, ToolResultMessage)) and not isinstance(content, list)
        ):
            self.message_errors[entry.id] = f"its content is a {type(content).__name__}, not a list of blocks"
            return None
        return message

    def _index(self) -> None:
        labels: dict[str, str] = {}
        name: str | None = None
        for entry in self.entries:
            if isinstance(entry, LabelEntry):
                label = entry.label
                if label:
                    labels[entry.target_id] = label
                else:
                    labels.pop(entry.target_id, None)
            elif isinstance(entry, SessionInfoEntry):
                value = entry.name
                name = value.strip() or None if value else None
            elif isinstance(entry, MessageEntry):
                message = self.message(entry)
                if isinstance(message, ToolResultMessage) and message.tool_call_id:
                    self.tool_results.setdefault(message.tool_call_id, message)
                elif isinstance(message, AssistantMessage):
                    for block in message.content:
                        if isinstance(block, ToolCall) and block.id:
                            self.tool_calls.setdefault(block.id, block)
        self.labels = labels
        self.name = name
        self.by_id = {e.id: e for e in self.entries}
        self.branch_ids = {e.id for e in self.branch()}

    def branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """Entries from the root to ``leaf_id`` (default: the session's leaf); stops at a cycle."""
        return branch_path(self.by_id, leaf_id or self.leaf_id)

    def tree_rows(self) -> list[TreeRow]:
        """Every entry in pre-order, children oldest first; indentation grows only where the tree forks."""
        ids = {e.id for e in self.entries}
        children: dict[str | None, list[SessionEntry]] = {}
        for entry in self.entries:
            parent = entry.parent_id if entry.parent_id in ids and entry.parent_id != entry.id else None
            children.setdefault(parent, []).append(entry)
        for siblings in children.values():
            siblings.sort(key=lambda e: e.timestamp)
        rows: list[TreeRow] = []
        seen: set[str] = set()
        roots = children.get(None, [])
        stack: list[tuple[SessionEntry, int]] = [(e, 1 if len(roots) > 1 else 0) for e in reversed(roots)]
        while stack:
            entry, depth = stack.pop()
            if entry.id in seen:
                continue
            seen.add(entry.id)
            rows.append(TreeRow(entry, depth, entry.id in self.branch_ids, entry.id == self.leaf_id))
            kids = children.get(entry.id, [])
            step = 1 if len(kids) > 1 else 0
            stack.extend((kid, depth + step) for kid in reversed(kids))
        for entry in self.entries:  # entries caught in a parent cycle: listed at the root
            if entry.id not in seen:
                seen.add(entry.id)
                rows.append(TreeRow(entry, 0, entry.id in self.branch_ids, entry.id == self.leaf_id))
        return rows

    def stats(self) -> Stats:
        """Message counts, tool calls, tokens, cost and models over all entries."""
        stats = Stats()
        models: dict[str, None] = {}
        for entry in self.entries:
            kind = entry.type
            if kind == "compaction":
                stats.compactions += 1
            elif kind == "branch_summary":
                stats.branch_summaries += 1
            elif kind == "custom_message":
                stats.custom += 1
            elif kind == "message":
                message = self.message(entry)
                if message is None:
                    continue
                role = getattr(message, "ROLE", "")
                if role == "user":
                    stats.user += 1
                elif role == "toolResult":
                    stats.tool_results += 1
                elif isinstance(message, AssistantMessage):
                    stats.assistant += 1
                    if message.model:
                        key = f"{message.provider}/{message.model}" if message.provider else message.model
                        models[key] = None
                    usage = message.usage
                    stats.input += _int(usage.input)
                    stats.output += _int(usage.output)
                    stats.cache_read += _int(usage.cache_read)
                    stats.cache_write += _int(usage.cache_write)
                    cost = usage.cost
                    stats.cost += sum(
                        _float(v) for v in (cost.input, cost.output, cost.cache_read, cost.cache_write)
                    )
                    stats.tool_calls += sum(1 for b in message.content if isinstance(b, ToolCall))
        stats.models = list(models)
        return stats

    @property
    def session_id(self) -> str:
        value = self.header.get("id")
        return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _coerce_entries(entries: Iterable[Any]) -> list[SessionEntry]:
    out: list[SessionEntry] = []
    for item in entries:
        if isinstance(item, SessionEntry):
            out.append(item)
        elif isinstance(item, dict):
            if item.get("type") == "session":
                continue
            try:
                out.append(entry_from_dict(item))
            except EntryParseError:
                continue
    return out


def _header_dict(header: Any) -> dict[str, Any]:
    if isinstance(header, SessionHeader):
        return dict(header.raw)
    if isinstance(header, dict):
        return dict(header)
    raw = getattr(header, "raw", None)
    return dict(raw) if isinstance(raw, dict) else {}


def view_from_entries(
    entries: Iterable[Any],
    header: Any = None,
    *,
    leaf_id: str | None = None,
    source: str | None = None,
    system_prompt: str | None = None,
) -> SessionView:
    """A view of entries handed over by a running session (``SessionEntry`` objects or pi's JSON dicts)."""
    items = _coerce_entries(entries)
    ids = {e.id for e in items}
    leaf = leaf_id if leaf_id in ids else (items[-1].id if items else None)
    return SessionView(
        header=_header_dict(header), entries=items, leaf_id=leaf, source=source, system_prompt=system_prompt
    )


def load_session_file(path: str) -> SessionView:
    """Read a session file without touching it (older versions are migrated in memory only)."""
    from piko.sessions.manager import SessionError
    from piko.sessions.manager import SessionManager

    if not os.path.exists(path):
        raise ExportError(f"File not found: {path}")
    if os.path.isdir(path):
        raise ExportError(f"Not a session file: {path} is a directory")
    manager = SessionManager.in_memory(os.getcwd())  # in memory: a migration is never written back
    try:
        manager.set_session_file(path)
    except SessionError as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"Cannot read {path}: {exc.strerror or exc}") from None
    header = manager.get_header()
    view = SessionView(
        header=dict(header.raw),
        entries=manager.get_entries(),
        leaf_id=manager.get_leaf_id(),
        source=path,
        diagnostics=[str(d) for d in manager.diagnostics],
    )
    return view
