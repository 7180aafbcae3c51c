"""HTML of each session entry in the conversation, and its one-line summary for the tree."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UnknownMessage
from piko.data.messages import UserMessage
from piko.plugins.export.blocks import esc
from piko.plugins.export.blocks import format_tokens
from piko.plugins.export.blocks import images_of
from piko.plugins.export.blocks import one_line
from piko.plugins.export.blocks import output_block
from piko.plugins.export.blocks import text_of_blocks
from piko.plugins.export.blocks import truncate
from piko.plugins.export.markdown import render_markdown
from piko.plugins.export.session_view import SessionView
from piko.plugins.export.tools import render_orphan_result
from piko.plugins.export.tools import render_tool_call
from piko.plugins.export.tools import tool_call_summary
from piko.sessions.entries import BranchSummaryEntry
from piko.sessions.entries import CompactionEntry
from piko.sessions.entries import CustomEntry
from piko.sessions.entries import CustomMessageEntry
from piko.sessions.entries import LabelEntry
from piko.sessions.entries import MessageEntry
from piko.sessions.entries import ModelChangeEntry
from piko.sessions.entries import SessionEntry
from piko.sessions.entries import SessionInfoEntry
from piko.sessions.entries import ThinkingLevelChangeEntry
from piko.sessions.ids import ms_from_iso

__all__ = ["render_entry", "tree_summary"]

# pi wraps a skill invoked with /skill:name in this block, the user's words after it
_SKILL = re.compile(r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$')


def _time(timestamp: Any) -> str:
    """A ``<time>`` element (UTC here; the page's script shows it in the reader's time zone)."""
    ms: int | None = None
    if isinstance(timestamp, str):
        ms = ms_from_iso(timestamp)
    elif isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        ms = int(timestamp)
    if ms is None:
        return ""
    import time

    try:
        stamp = time.gmtime(ms / 1000)
    except (OverflowError, OSError, ValueError):
        return ""
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", stamp) + f".{ms % 1000:03d}Z"
    return f'<time datetime="{iso}">{time.strftime("%H:%M:%S", stamp)} UTC</time>'


def _meta(entry: SessionEntry, view: SessionView, role: str = "") -> str:
    label = view.labels.get(entry.id)
    parts = []
    if role:
        parts.append(f'<span class="role">{esc(role)}</span>')
    if label:
        parts.append(f'<span class="label" title="label">{esc(label)}</span>')
    parts.append(_time(entry.timestamp))
    parts.append(f'<a class="permalink" href="#e-{esc(entry.id)}" title="Link to this entry">#</a>')
    return f'<div class="meta">{"".join(p for p in parts if p)}</div>'


def _wrap(entry: SessionEntry, view: SessionView, kind: str, body: str, role: str = "") -> str:
    off = "" if entry.id in view.branch_ids else " off"
    parent = esc(entry.parent_id or "")
    return (
        f'<article class="entry {kind}{off}" id="e-{esc(entry.id)}" data-id="{esc(entry.id)}" '
        f'data-parent="{parent}">{_meta(entry, view, role)}{body}</article>'
    )


def _marker(entry: SessionEntry, view: SessionView) -> str:
    """An empty anchor for entries with nothing of their own to show (tool results, extension state)."""
    off = "" if entry.id in view.branch_ids else " off"
    return f'<div class="entry marker{off}" id="e-{esc(entry.id)}" data-id="{esc(entry.id)}"></div>'


def _user(message: UserMessage) -> tuple[str, str]:
    text = text_of_blocks(message.content)
    images = images_of(message.content)
    skill = _SKILL.match(text)
    if skill is not None:
        name, location, body, rest = skill.groups()
        html = (
            f'<details class="skill"><summary><span class="tag">skill</span> {esc(name)}'
            f' <span class="muted">{esc(location)}</span></summary>'
            f'<div class="markdown">{render_markdown(body)}</div></details>'
        )
        if rest and rest.strip():
            html += f'<div class="markdown">{render_markdown(rest.strip())}</div>'
        return "user", html + images
    body = f'<div class="markdown">{render_markdown(text)}</div>' if text.strip() else ""
    return "user", images + body


def _thinking(block: ThinkingContent) -> str:
    if block.redacted:
        return '<details class="thinking" open><summary>Thinking</summary><div class="muted">[redacted]</div></details>'
    if not block.thinking.strip():
        return ""
    return (
        '<details class="thinking" open><summary>Thinking</summary>'
        f'<div class="thinking-text">{esc(block.thinking.strip())}</div></details>'
    )


def _money(value: float) -> str:
    """Dollars with enough digits to show a fraction of a cent (``$0.0123``, ``$0.0000015``)."""
    if value >= 0.01:
        return f"${value:.3f}"
    digits = f"{value:.10f}".rstrip("0")
    return f"${digits}" if digits != "0." else "$0"


def _usage_line(message: AssistantMessage) -> str:
    usage = message.usage
    bits: list[str] = []
    model = f"{message.provider}/{message.model}" if message.provider else message.model
    if model:
        bits.append(esc(model))
    tokens = []
    for mark, value in (
        ("↑", usage.input),
        ("↓", usage.output),
        ("R", usage.cache_read),
        ("W", usage.cache_write),
    ):
        if isinstance(value, int) and value:
            tokens.append(f"{mark}{format_tokens(value)}")
    if tokens:
        bits.append(" ".join(tokens))
    total = usage.cost.total if isinstance(usage.cost.total, (int, float)) else 0
    if total:
        bits.append(_money(total))
    return f'<div class="usage">{" · ".join(bits)}</div>' if bits else ""


def _assistant(message: AssistantMessage, view: SessionView) -> str:
    parts: list[str] = []
    calls: list[str] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            parts.append(_thinking(block))
        elif isinstance(block, ToolCall):
            calls.append(render_tool_call(block, view.tool_results.get(block.id)))
        elif isinstance(block, dict):
            parts.append(f'<div class="muted">[{esc(block.get("type", "block"))}]</div>')
        else:
            text = getattr(block, "text", "")
            if isinstance(text, str) and text.strip():
                parts.append(f'<div class="markdown">{render_markdown(text)}</div>')
    parts.extend(calls)
    if message.stop_reason == "aborted":
        detail = f": {esc(message.error_message)}" if message.error_message else ""
        parts.append(f'<div class="error-text">Aborted{detail}</div>')
    elif message.stop_reason == "error":
        parts.append(f'<div class="error-text">Error: {esc(message.error_message or "Unknown error")}</div>')
    elif message.stop_reason == "length":
        parts.append('<div class="warning-text">Stopped: the response reached the output token limit</div>')
    parts.append(_usage_line(message))
    return "".join(p for p in parts if p)


def _bash(message: BashExecutionMessage) -> str:
    failed = message.cancelled or (message.exit_code not in (0, None))
    parts = [
        f'<div class="tool-head"><span class="prompt">$</span> <code class="command">{esc(message.command)}</code>'
        + (' <span class="tag">not sent to the model</span>' if message.exclude_from_context else "")
        + "</div>"
    ]
    if message.output:
        parts.append(output_block(message.output.rstrip("\n"), 10))
    if message.cancelled:
        parts.append('<div class="warning-text">(cancelled)</div>')
    elif message.exit_code not in (0, None):
        parts.append(f'<div class="error-text">(exit {esc(message.exit_code)})</div>')
    if message.truncated:
        where = f": full output in {esc(message.full_output_path)}" if message.full_output_path else ""
        parts.append(f'<div class="tool-note">(output truncated{where})</div>')
    return f'<div class="tool {"failed" if failed else "done"}">{"".join(parts)}</div>'


def _custom_body(custom_type: str, content: Any, display: bool) -> str:
    text = content if isinstance(content, str) else text_of_blocks(content)
    body = images_of(content) + (
        f'<div class="markdown">{render_markdown(text)}</div>' if text.strip() else ""
    )
    if display:
        return f'<div class="custom-type">[{esc(custom_type)}]</div>{body}'
    return (
        f'<details class="hidden-custom"><summary>[{esc(custom_type)}]'
        ' <span class="muted">not displayed in the session</span></summary>'
        f"{body}</details>"
    )


def _summary(title: str, summary: str, note: str = "") -> str:
    note_html = f' <span class="muted">{esc(note)}</span>' if note else ""
    return (
        f'<details class="summary" open><summary>{esc(title)}{note_html}</summary>'
        f'<div class="markdown">{render_markdown(summary)}</div></details>'
    )


def _json_details(title: str, value: Any) -> str:
    from piko.lib import jsonio

    try:
        text = jsonio.dumps_pretty(value)
    except (TypeError, ValueError):
        text = repr(value)
    return (
        f'<details class="raw"><summary>{esc(title)}</summary><pre class="args">{esc(text)}</pre></details>'
    )


def render_entry(entry: SessionEntry, view: SessionView) -> str:
    """The conversation HTML of one entry ('' for entries that show nothing, such as labels)."""
    try:
        return _render(entry, view)
    except Exception as exc:  # one unreadable entry must not cost the reader the rest
        return _wrap(
            entry, view, "other", f'<div class="error-text">[entry could not be shown: {esc(exc)}]</div>'
        )


def _session_name_event(entry: SessionInfoEntry) -> str:
    name = entry.name
    text = f"Session named: <strong>{esc(name)}</strong>" if name and name.strip() else "Session name cleared"
    return f'<div class="event">{text}</div>'


# The messages and entries shown the same way wherever they stand: type -> (CSS class, body HTML, role).
_SHOWN: dict[type, tuple[str, Callable[[Any], str], str]] = {
    BashExecutionMessage: ("bash", _bash, "user shell"),
    CustomMessage: ("custom", lambda m: _custom_body(m.custom_type, m.content, m.display), ""),
    CompactionSummaryMessage: (
        "compaction",
        lambda m: _summary("Compaction summary", m.summary, f"from {m.tokens_before:,} tokens"),
        "",
    ),
    BranchSummaryMessage: ("branch-summary", lambda m: _summary("Branch summary", m.summary), ""),
    UnknownMessage: ("other", lambda m: _json_details(f"[{m.role or 'message'}]", m.extra), ""),
    ModelChangeEntry: (
        "event-entry",
        lambda e: (
            f'<div class="event">Model: <span class="model">{esc(e.provider)}/{esc(e.model_id)}</span></div>'
        ),
        "",
    ),
    ThinkingLevelChangeEntry: (
        "event-entry",
        lambda e: (
            f'<div class="event">Thinking level: <span class="model">{esc(e.thinking_level)}</span></div>'
        ),
        "",
    ),
    CompactionEntry: (
        "compaction",
        lambda e: _summary("Compaction", e.summary, f"compacted from {e.tokens_before:,} tokens"),
        "",
    ),
    BranchSummaryEntry: ("branch-summary", lambda e: _summary("Branch summary", e.summary), ""),
    CustomMessageEntry: ("custom", lambda e: _custom_body(e.custom_type, e.content, e.display), ""),
    SessionInfoEntry: ("event-entry", _session_name_event, ""),
}


def _render(entry: SessionEntry, view: SessionView) -> str:
    if isinstance(entry, MessageEntry):
        message = view.message(entry)
        if message is None:
            problem = view.message_errors.get(entry.id, "unreadable message")
            return _wrap(
                entry, view, "other", f'<div class="error-text">[unreadable message: {esc(problem)}]</div>'
            )
        if isinstance(message, UserMessage):
            role, body = _user(message)
            return _wrap(entry, view, "user", body, role)
        if isinstance(message, AssistantMessage):
            return _wrap(entry, view, "assistant", _assistant(message, view), "assistant")
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id in view.tool_calls:
                return _marker(entry, view)
            return _wrap(entry, view, "tool-result", render_orphan_result(message), "tool result")
        if isinstance(message, UnknownMessage) and message.role == "system":  # pi 1.6's prompt records
            from piko.plugins.export.system_records import is_leading
            from piko.plugins.export.system_records import system_body

            return _wrap(
                entry, view, "other", system_body(message.extra, is_leading(entry, view.by_id)), "system"
            )
        shown = _SHOWN.get(type(message))
        if shown is None:
            return _marker(entry, view)
        kind, body_of, role = shown
        return _wrap(entry, view, kind, body_of(message), role)
    shown = _SHOWN.get(type(entry))
    if shown is not None:
        kind, body_of, role = shown
        return _wrap(entry, view, kind, body_of(entry), role)
    if isinstance(entry, LabelEntry):
        return ""
    if isinstance(entry, CustomEntry):
        return _marker(entry, view)
    return _wrap(entry, view, "other", _json_details(f"[{entry.type or 'entry'}]", entry.raw))


def tree_summary(entry: SessionEntry, view: SessionView) -> tuple[str, str]:
    """``(kind, HTML)`` of an entry's line in the tree (kind: a CSS class)."""
    try:
        return _tree(entry, view)
    except Exception:
        return "meta", f"[{esc(entry.type)}]"


def _role(kind: str, text: str) -> str:
    return f'<span class="t-{kind}">{esc(text)}</span>'


def _tree(entry: SessionEntry, view: SessionView) -> tuple[str, str]:
    if isinstance(entry, MessageEntry):
        message = view.message(entry)
        if isinstance(message, UserMessage):
            text = text_of_blocks(message.content, "")
            skill = _SKILL.match(text)
            if skill is not None:
                out = f"{_role('skill', 'skill:')} {esc(skill.group(1))}"
                if skill.group(4) and skill.group(4).strip():
                    out += f" · {_role('user', 'user:')} {esc(truncate(one_line(skill.group(4))))}"
                return "user", out
            return "user", f"{_role('user', 'user:')} {esc(truncate(one_line(text)))}"
        if isinstance(message, AssistantMessage):
            text = one_line(text_of_blocks(message.content, ""))
            if text:
                tail = esc(truncate(text))
            elif message.stop_reason == "aborted":
                tail = '<span class="muted">(aborted)</span>'
            elif message.error_message:
                tail = f'<span class="t-error">{esc(truncate(message.error_message))}</span>'
            else:
                tail = '<span class="muted">(no text)</span>'
            return "assistant", f"{_role('assistant', 'assistant:')} {tail}"
        if isinstance(message, ToolResultMessage):
            call = view.tool_calls.get(message.tool_call_id)
            text = (
                tool_call_summary(call.name, call.arguments) if call else f"[{message.tool_name or 'tool'}]"
            )
            return "tool", _role("tool", text)
        if isinstance(message, BashExecutionMessage):
            return "tool", f"{_role('tool', '[bash]:')} {esc(truncate(one_line(message.command)))}"
        if isinstance(message, CustomMessage):
            text = (
                message.content if isinstance(message.content, str) else text_of_blocks(message.content, "")
            )
            return "custom", f"{_role('custom', f'[{message.custom_type}]:')} {esc(truncate(one_line(text)))}"
        if isinstance(message, CompactionSummaryMessage):
            return "summary", _role("summary", "[compaction summary]")
        if isinstance(message, UnknownMessage) and message.role == "system":
            from piko.plugins.export.system_records import is_leading
            from piko.plugins.export.system_records import system_tree_label

            return "meta", _role("meta", system_tree_label(message.extra, is_leading(entry, view.by_id)))
        if isinstance(message, BranchSummaryMessage):
            return (
                "summary",
                f"{_role('summary', '[branch summary]:')} {esc(truncate(one_line(message.summary)))}",
            )
        role = getattr(message, "role", None) or "message"
        return "meta", _role("meta", f"[{role}]")
    if isinstance(entry, CompactionEntry):
        return "summary", _role("summary", f"[compaction: {round(entry.tokens_before / 1000)}k tokens]")
    if isinstance(entry, BranchSummaryEntry):
        return "summary", f"{_role('summary', '[branch summary]:')} {esc(truncate(one_line(entry.summary)))}"
    if isinstance(entry, CustomMessageEntry):
        content = entry.content
        text = content if isinstance(content, str) else text_of_blocks(content, "")
        return "custom", f"{_role('custom', f'[{entry.custom_type}]:')} {esc(truncate(one_line(text)))}"
    if isinstance(entry, ModelChangeEntry):
        return "meta", _role("meta", f"[model: {entry.model_id}]")
    if isinstance(entry, ThinkingLevelChangeEntry):
        return "meta", _role("meta", f"[thinking: {entry.thinking_level}]")
    if isinstance(entry, SessionInfoEntry):
        return "meta", _role("meta", f"[session name: {entry.name or ''}]")
    if isinstance(entry, LabelEntry):
        return "meta label-entry", _role("meta", f"[label: {entry.label or '(cleared)'}]")
    if isinstance(entry, CustomEntry):
        return "meta", _role("meta", f"[custom: {entry.custom_type}]")
    return "meta", _role("meta", f"[{entry.type}]")
