"""pi 1.6's ``system`` messages in an exported session: the leading one shown as the system prompt
(its text and named sections, the tools it declares), later ones as updates to it, as pi 1.6's
export names them."""

from __future__ import annotations

from typing import Any

from piko.plugins.export.blocks import esc

__all__ = ["is_leading", "system_body", "system_tree_label"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and b.get("text")
        )
    return ""


def _sections(record: dict[str, Any]) -> dict[str, Any]:
    sections = record.get("sections")
    return sections if isinstance(sections, dict) else {}


def _tool_names(record: dict[str, Any], key: str) -> list[str]:
    tools = record.get(key)
    if not isinstance(tools, list):
        return []
    return [str(t["name"]) for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


def prompt_text(record: dict[str, Any]) -> str:
    """The whole prompt a leading record gives: its text, then its sections in order."""
    parts = [_text(record.get("content"))]
    parts += [v for v in _sections(record).values() if isinstance(v, str)]
    return "\n\n".join(p for p in parts if p)


def update_text(record: dict[str, Any]) -> str:
    """What a later record changes, in words."""
    parts = [_text(record.get("content"))] if _text(record.get("content")) else []
    for name, value in _sections(record).items():
        parts.append(
            f'Removed system prompt section "{name}".'
            if value is None
            else f'Updated system prompt section "{name}":\n\n{value}'
        )
    return "\n\n".join(parts)


def describe_update(record: dict[str, Any]) -> str:
    """A short name of a later record's changes: ``instructions, rules, -docs, tools +bash -read``."""
    parts = ["instructions"] if _text(record.get("content")) else []
    parts += [f"-{n}" if v is None else str(n) for n, v in _sections(record).items()]
    changes = [f"+{n}" for n in _tool_names(record, "toolsAdded")]
    changes += [f"-{n}" for n in _tool_names(record, "toolsRemoved")]
    if changes:
        parts.append("tools " + " ".join(changes))
    return ", ".join(parts)


def is_leading(entry: Any, by_id: dict[str, Any]) -> bool:
    """Whether no entry above ``entry`` on its branch carries prompt state (a system message, or a
    compaction's ``systemMessage`` checkpoint): then ``entry`` starts the prompt."""
    seen = {entry.id}
    parent = entry.parent_id
    while parent and parent not in seen:
        seen.add(parent)
        current = by_id.get(parent)
        if current is None:
            break
        raw = getattr(current, "raw", {})
        if raw.get("type") == "compaction" and isinstance(raw.get("systemMessage"), dict):
            return False
        message = raw.get("message") if raw.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "system":
            return False
        parent = current.parent_id
    return True


def system_body(record: dict[str, Any], leading: bool) -> str:
    """The HTML of a system message: the prompt (closed, it is long) or the update."""
    if leading:
        tools = _tool_names(record, "toolsAdded")
        note = f"{len(tools)} tools: {', '.join(tools)}" if tools else ""
        title, text = "System prompt", prompt_text(record)
    else:
        title, text, note = "System update", update_text(record), describe_update(record)
    note_html = f' <span class="muted">{esc(note)}</span>' if note else ""
    body = f'<pre class="args">{esc(text)}</pre>' if text else ""
    return f'<details class="summary"><summary>{esc(title)}{note_html}</summary>{body}</details>'


def system_tree_label(record: dict[str, Any], leading: bool) -> str:
    """The text of a system message's line in the tree."""
    return "[system prompt]" if leading else f"[system update: {describe_update(record)}]"
