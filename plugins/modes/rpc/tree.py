"""``get_tree``'s and ``get_entries``' JSON: the session's entries, written without recursion (any depth).

Every message hangs off the one before it, so a long session is a tree thousands of levels
deep; JSON encoders recurse and give up long before that. The nodes are written here with an
explicit stack, in pi's node shape ``{"entry", "children", "label"?, "labelTimestamp"?}``.
"""

from __future__ import annotations

from typing import Any

from piko.lib import jsonio
from piko.plugins.modes.rpc.jsonl import serialize
from piko.plugins.modes.rpc.output import RawJson


def _dump(value: Any) -> bytes:
    return serialize(value)[:-1]


def tree_json(roots: list[Any]) -> bytes:
    """The forest ``roots`` (:class:`~piko.sessions.manager.SessionTreeNode` list) as a JSON array."""
    out: list[bytes] = [b"["]
    # each frame: the node's children still to write, and the closing text of the node
    stack: list[tuple[list[Any], bytes]] = [(list(reversed(roots)), b"]")]
    first = [True]
    while stack:
        pending, closing = stack[-1]
        if not pending:
            stack.pop()
            first.pop()
            out.append(closing)
            continue
        node = pending.pop()
        if not first[-1]:
            out.append(b",")
        first[-1] = False
        raw = getattr(node.entry, "raw", node.entry)
        out.append(b'{"entry":' + _dump(raw) + b',"children":[')
        tail = b"]"
        if node.label is not None:
            tail += b',"label":' + _dump(node.label)
        if getattr(node, "label_timestamp", None) is not None:
            tail += b',"labelTimestamp":' + _dump(node.label_timestamp)
        stack.append((list(reversed(node.children)), tail + b"}"))
        first.append(True)
    return b"".join(out)


def tree_data(manager: Any) -> RawJson:
    """``get_tree``'s data: ``{"tree": [...], "leafId": <id or null>}``."""
    return RawJson(
        b'{"tree":' + tree_json(manager.get_tree()) + b',"leafId":' + jsonio.dumpb(manager.leaf_id) + b"}"
    )


def entries_data(manager: Any, since: str | None = None) -> RawJson:
    """``get_entries``' data: ``{"entries": [...], "leafId": <id or null>}``, every entry in append
    order (each as its line in the file), or those after the entry ``since``; ``KeyError`` when
    ``since`` names no entry."""
    entries = manager.get_entries()
    if since is not None:
        index = next((i for i, e in enumerate(entries) if e.id == since), None)
        if index is None:
            raise KeyError(since)
        entries = entries[index + 1 :]
    body = b",".join(_entry_json(e) for e in entries)
    return RawJson(b'{"entries":[' + body + b'],"leafId":' + jsonio.dumpb(manager.leaf_id) + b"}")


def _entry_json(entry: Any) -> bytes:
    line = getattr(entry, "line", None)
    if isinstance(line, bytes) and line.strip():
        return line.rstrip(b"\r\n")
    return _dump(getattr(entry, "raw", entry))
