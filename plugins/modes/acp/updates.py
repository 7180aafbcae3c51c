"""piko's session events as ACP ``session/update`` notifications: message and thought chunks,
tool calls with their kind, title, locations and content (a diff for ``edit`` and ``write``)."""

from __future__ import annotations

import os
from typing import Any
from typing import Literal

# ACP's tool kinds for piko's built-in tools; any other tool is "other".
TOOL_KINDS = {
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}


def tool_kind(name: str) -> str:
    return TOOL_KINDS.get(name, "other")


def tool_title(name: str, args: Any) -> str:
    """A one-line title: the tool and what it works on (``read src/app.py``, ``bash: make``)."""
    args = args if isinstance(args, dict) else {}
    if name == "bash" and args.get("command"):
        return f"bash: {str(args['command']).splitlines()[0][:120]}"
    for key in ("path", "pattern"):
        if args.get(key):
            return f"{name} {args[key]}"
    return name


def tool_path(args: Any, cwd: str) -> str | None:
    """The absolute path a tool call works on, when it names one."""
    path = args.get("path") if isinstance(args, dict) else None
    if not isinstance(path, str) or not path:
        return None
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def result_text(result: Any) -> str:
    """The text blocks of a tool result (a record or its dict form)."""
    content = getattr(result, "content", None)
    if content is None and isinstance(result, dict):
        content = result.get("content")
    parts = []
    for block in content or []:
        text = getattr(block, "text", None)
        if text is None and isinstance(block, dict):
            text = block.get("text")
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def read_text(path: str | None, limit: int = 4 * 1024 * 1024) -> str | None:
    """A file's text for a diff (``None`` when it does not exist, is too big or is not text)."""
    if path is None:
        return None
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > limit:
            return None
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


def stop_reason(message: Any) -> StopReason:
    """ACP's stop reason for the run's last assistant message."""
    reason = getattr(message, "stop_reason", None)
    if reason == "length":
        return "max_tokens"
    return "cancelled" if reason == "aborted" else "end_turn"


_PLAN_STATUSES = ("pending", "in_progress", "completed")
_PLAN_PRIORITIES = ("high", "medium", "low")
_PLAN_STATUS_ALIASES = {
    "done": "completed",
    "complete": "completed",
    "active": "in_progress",
    "todo": "pending",
}


def plan_update(data: Any) -> Any:
    """ACP's ``plan`` update for what an extension emitted as ``plan`` on ``pi.events``:
    ``{"entries": [...]}`` or the list itself; an entry is a string (a pending step) or
    ``{"content", "status", "priority"}`` (``completed: true`` works too). ``None`` when it is
    not a list of entries (an empty list clears the plan)."""
    import acp

    items = data.get("entries", data.get("steps")) if isinstance(data, dict) else data
    if not isinstance(items, (list, tuple)):
        return None
    entries = []
    for item in items:
        if isinstance(item, str):
            item = {"content": item}
        if not isinstance(item, dict):
            continue
        content = item.get("content", item.get("text"))
        if not isinstance(content, str) or not content.strip():
            continue
        status = str(item.get("status") or ("completed" if item.get("completed") else "pending"))
        status = _PLAN_STATUS_ALIASES.get(status, status)
        priority = str(item.get("priority") or "medium")
        entries.append(
            acp.plan_entry(
                content,
                status=status if status in _PLAN_STATUSES else "pending",  # type: ignore[arg-type]
                priority=priority if priority in _PLAN_PRIORITIES else "medium",  # type: ignore[arg-type]
            )
        )
    return acp.update_plan(entries)
