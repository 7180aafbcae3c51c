"""MCP results as the model receives them: text and images, long text cut in the middle and saved."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ToolResult

MAX_TEXT_BYTES = 20480


def save_temp(data: str | bytes, suffix: str) -> str:
    """Write ``data`` to a new file under the temp folder and return its path."""
    fd, path = tempfile.mkstemp(prefix="pi-mcp-", suffix=suffix)
    with os.fdopen(fd, "wb") as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def truncate_middle(text: str, max_bytes: int = MAX_TEXT_BYTES) -> tuple[str, int, int] | None:
    """``(text with its middle replaced by "…N chars truncated…", total bytes, total lines)``,
    or None when ``text`` fits in ``max_bytes`` of UTF-8."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return None

    def boundary(i: int) -> bool:
        return i >= len(raw) or (raw[i] & 0xC0) != 0x80

    head_end = max_bytes // 2
    while head_end > 0 and not boundary(head_end):
        head_end -= 1
    tail_start = len(raw) - (max_bytes - max_bytes // 2)
    while tail_start < len(raw) and not boundary(tail_start):
        tail_start += 1
    removed = len(raw[head_end:tail_start].decode("utf-8"))
    lines = text.count("\n") + 1 - (1 if text.endswith("\n") else 0)
    head, tail = raw[:head_end].decode("utf-8"), raw[tail_start:].decode("utf-8")
    return f"{head}\u2026{removed} chars truncated\u2026{tail}", len(raw), lines


def _field(block: Any, name: str, default: Any = None) -> Any:
    if isinstance(block, dict):
        return block.get(name, default)
    return getattr(block, name, default)


def block_content(block: Any) -> TextContent | ImageContent:
    """One MCP content block as a model content block."""
    kind = _field(block, "type")
    if kind == "text":
        return TextContent(text=str(_field(block, "text", "")))
    if kind == "image":
        return ImageContent(
            data=str(_field(block, "data", "")), mime_type=str(_field(block, "mimeType", "image/png"))
        )
    if kind == "audio":
        return TextContent(text=f"[audio {_field(block, 'mimeType')} omitted]")
    if kind == "resource_link":
        return TextContent(text=f"{_field(block, 'name')}: {_field(block, 'uri')}")
    if kind == "resource":
        resource = _field(block, "resource")
        text = _field(resource, "text")
        mime = _field(resource, "mimeType")
        if text is not None:
            return TextContent(text=str(text))
        if isinstance(mime, str) and mime.startswith("image/"):
            return ImageContent(data=str(_field(resource, "blob", "")), mime_type=mime)
        return TextContent(
            text=f"[binary resource {_field(resource, 'uri')} ({mime or 'unknown type'}) omitted]"
        )
    return TextContent(text=f"[unsupported MCP content {kind}]")


def limit_content(content: list[TextContent | ImageContent]) -> tuple[list[Any], str | None]:
    """Cut the joined text to 20 KB (saving the whole of it); images are kept after the text."""
    combined = "\n".join(b.text for b in content if isinstance(b, TextContent))
    cut = truncate_middle(combined)
    if cut is None:
        return list(content), None
    text, total_bytes, total_lines = cut
    path: str | None = None
    try:
        path = save_temp(combined, ".txt")
        where = f"\n\n[Full output: {path} (read it with offset/limit)]"
    except OSError as error:
        where = f"\n\n[Could not save the full output: {error}]"
    header = (
        f"Warning: truncated output (original token count: {-(-total_bytes // 4)})\n"
        f"Total output lines: {total_lines}\n\n"
    )
    images = [b for b in content if isinstance(b, ImageContent)]
    return [TextContent(text=header + text + where), *images], path


def tool_result(result: Any, server: str, tool: str) -> ToolResult:
    """A ``CallToolResult`` as the model's result; ``isError`` makes it an error result."""
    blocks = [block_content(b) for b in (_field(result, "content") or [])]
    structured = _field(result, "structuredContent")
    if not blocks and structured is not None:
        blocks = [TextContent(text=json.dumps(structured, indent=2, ensure_ascii=False))]
    content, full_path = limit_content(blocks)
    details: dict[str, Any] = {"server": server, "tool": tool}
    if full_path:
        details["fullOutputPath"] = full_path
    if structured is not None:
        details["structuredContent"] = structured
    return ToolResult(
        content=content, details=details, structured_content=call_result_data(result),
        is_error=bool(_field(result, "isError", False)),
    )  # fmt: skip


def call_result_data(result: Any) -> dict[str, Any]:
    """The whole ``CallToolResult`` as JSON data without ``_meta``, never truncated: the tool's
    ``structured_content`` (pi 1.6's, for programs; content blocks as the server sent them)."""
    if isinstance(result, dict):
        data = dict(result)
    elif hasattr(result, "model_dump"):
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        data = {"content": _field(result, "content") or [], "isError": bool(_field(result, "isError", False))}
    data.pop("_meta", None)
    data.pop("meta", None)
    return data
