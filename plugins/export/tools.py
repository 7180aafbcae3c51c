"""How the export shows a tool call with its result: bash, read, write, edit, ls, grep, find, others."""

from __future__ import annotations

from typing import Any

from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.lib.tool_call_line import read_range
from piko.lib.tool_call_line import tool_call_line
from piko.plugins.export.blocks import diff_block
from piko.plugins.export.blocks import esc
from piko.plugins.export.blocks import images_of
from piko.plugins.export.blocks import output_block
from piko.plugins.export.blocks import shorten_path
from piko.plugins.export.blocks import text_of_blocks

__all__ = ["render_orphan_result", "render_tool_call", "tool_call_summary"]


def _str_arg(args: dict[str, Any], *names: str) -> str | None:
    """The first of ``names`` present in ``args``; ``None`` when it is there but not a string."""
    for name in names:
        if name in args:
            value = args[name]
            if value is None:
                return ""
            return value if isinstance(value, str) else None
    return ""


def tool_call_summary(name: str, args: Any) -> str:
    """One line naming a call, for the tree (``[read: src/app.py:1-20]``, ``[bash: ls -la]``)."""
    return tool_call_line(name, args, shorten_path)


_INVALID = '<span class="invalid">[invalid argument]</span>'


def _path_html(args: dict[str, Any], default: str = "") -> str:
    path = _str_arg(args, "file_path", "path")
    if path is None:
        return _INVALID
    return esc(shorten_path(path or default))


def _head(name: str, detail: str = "", extra: str = "") -> str:
    detail_html = f' <span class="tool-arg">{detail}</span>' if detail else ""
    return f'<div class="tool-head"><span class="tool-name">{esc(name)}</span>{detail_html}{extra}</div>'


def _result_text(result: ToolResultMessage | None) -> str:
    return text_of_blocks(result.content) if result is not None else ""


def _lexer(path: str | None) -> Any:
    from piko.plugins.export.highlight import lexer_for_path

    return lexer_for_path(path) if path else None


def _edit_fallback(args: dict[str, Any]) -> str:
    """The replacements an edit asked for, as removed/added lines (when there is no diff to show)."""
    edits = args.get("edits")
    pairs: list[tuple[Any, Any]] = []
    if isinstance(edits, list):
        pairs = [(e.get("oldText"), e.get("newText")) for e in edits if isinstance(e, dict)]
    elif "oldText" in args or "newText" in args:
        pairs = [(args.get("oldText"), args.get("newText"))]
    lines: list[str] = []
    for old, new in pairs:
        if isinstance(old, str):
            lines += [f"-{line}" for line in old.split("\n")]
        if isinstance(new, str):
            lines += [f"+{line}" for line in new.split("\n")]
    return diff_block("\n".join(lines)) if lines else ""


def render_tool_call(call: ToolCall, result: ToolResultMessage | None) -> str:
    """A call and its result in one box; the box is marked pending, done or failed."""
    status = "pending" if result is None else "failed" if result.is_error else "done"
    args = call.arguments if isinstance(call.arguments, dict) else {}
    name = call.name or "tool"
    parts: list[str] = []
    output = _result_text(result)
    result_images = images_of(result.content, "image tool-image") if result is not None else ""

    if name == "bash":
        command = _str_arg(args, "command")
        command_html = _INVALID if command is None else esc(command or "...")
        parts.append(
            f'<div class="tool-head"><span class="prompt">$</span> <code class="command">{command_html}</code></div>'
        )
        timeout = args.get("timeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            parts.append(f'<div class="tool-note">timeout {esc(timeout)} s</div>')
        if output.strip():
            parts.append(output_block(output.strip("\n"), 5))
    elif name == "read":
        path = _str_arg(args, "file_path", "path")
        detail = _path_html(args) + (
            f'<span class="range">{esc(read_range(args))}</span>' if path is not None else ""
        )
        parts.append(_head("read", detail))
        parts.append(result_images)
        if output:
            lexer = None if result is not None and result.is_error else _lexer(path)
            parts.append(output_block(output, 10, lexer))
    elif name == "write":
        path = _str_arg(args, "file_path", "path")
        content = _str_arg(args, "content")
        count = ""
        if content:
            n = content.count("\n") + (0 if content.endswith("\n") else 1)
            count = f' <span class="tool-note">({n} line{"s" if n != 1 else ""})</span>'
        parts.append(_head("write", _path_html(args), count))
        if content is None:
            parts.append('<div class="invalid">[invalid content argument: expected a string]</div>')
        elif content:
            parts.append(output_block(content.removesuffix("\n"), 10, _lexer(path), "file"))
        if output.strip():
            parts.append(f'<pre class="output">{esc(output.strip())}</pre>')
    elif name == "edit":
        parts.append(_head("edit", _path_html(args)))
        details = result.details if result is not None else None
        diff = details.get("diff") if isinstance(details, dict) else None
        if isinstance(diff, str) and diff:
            parts.append(diff_block(diff))
        else:
            if result is None or result.is_error:
                parts.append(_edit_fallback(args))
            if output.strip():
                parts.append(f'<pre class="output">{esc(output.strip())}</pre>')
    elif name in ("ls", "grep", "find"):
        if name == "ls":
            detail = _path_html(args, ".")
        else:
            pattern = args.get("pattern")
            pattern_html = esc(pattern) if isinstance(pattern, str) else _INVALID
            detail = f'{pattern_html} <span class="tool-note">in</span> {_path_html(args, ".")}'
        limit = args.get("limit")
        extra = f' <span class="tool-note">(limit {esc(limit)})</span>' if limit is not None else ""
        parts.append(_head(name, detail, extra))
        if output.strip():
            parts.append(output_block(output.strip("\n"), 20))
    else:
        from piko.lib import jsonio

        parts.append(_head(name))
        if args:
            try:
                pretty = jsonio.dumps_pretty(args)
            except (TypeError, ValueError):
                pretty = str(args)
            parts.append(output_block(pretty, 20, None, "args"))
        parts.append(result_images)
        if output:
            parts.append(output_block(output, 10))
    if result is not None and name not in ("read",) and result_images and result_images not in parts:
        parts.append(result_images)
    if result is not None and result.is_error:
        parts.insert(1, '<div class="tool-status">Error</div>')
    return f'<div class="tool {status}" id="call-{esc(call.id)}">{"".join(p for p in parts if p)}</div>'


def render_orphan_result(result: ToolResultMessage) -> str:
    """A tool result whose call is not in the session (a cut file): shown on its own."""
    status = "failed" if result.is_error else "done"
    parts = [_head(result.tool_name or "tool", '<span class="tool-note">(result without its call)</span>')]
    parts.append(images_of(result.content, "image tool-image"))
    text = _result_text(result)
    if text:
        parts.append(output_block(text, 10))
    return f'<div class="tool {status}">{"".join(p for p in parts if p)}</div>'
