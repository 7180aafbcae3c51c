"""Small HTML pieces the export is built from: escaping, images, collapsible output, diffs."""

from __future__ import annotations

import re
from html import escape
from typing import Any

from piko.data.messages import ImageContent
from piko.data.messages import TextContent

__all__ = [
    "diff_block",
    "esc",
    "format_tokens",
    "image_tag",
    "output_block",
    "shorten_path",
    "text_of_blocks",
    "truncate",
]

_MIME = re.compile(r"^image/[A-Za-z0-9.+-]+$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")


def esc(value: Any) -> str:
    """Text as HTML, quotes included (safe in element content and in quoted attributes)."""
    return escape(value if isinstance(value, str) else str(value), quote=True)


def truncate(text: str, limit: int = 100) -> str:
    """At most ``limit`` characters, ``...`` appended when cut."""
    return text if len(text) <= limit else text[:limit] + "..."


def one_line(text: str) -> str:
    """Newlines and tabs as spaces, trimmed (for the tree)."""
    return text.replace("\n", " ").replace("\t", " ").strip()


def shorten_path(path: str) -> str:
    """``/home/<user>/x`` and ``/Users/<user>/x`` as ``~/x``."""
    for prefix in ("/home/", "/Users/"):
        if path.startswith(prefix):
            parts = path.split("/")
            if len(parts) > 2:
                return "~" + path[len(prefix) + len(parts[2]) :]
    return path


def format_tokens(count: int) -> str:
    """pi's compact token counts: ``950``, ``1.2k``, ``45k``, ``1.3M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}M"


def text_of_blocks(content: Any, sep: str = "\n") -> str:
    """The text of a message's content (a string or blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return sep.join(parts)


def image_tag(block: Any, css_class: str = "image") -> str:
    """An inline image (data URI) from an image block; a marked placeholder when its data is unusable."""
    mime: Any
    data: Any
    if isinstance(block, ImageContent):
        mime, data = block.mime_type, block.data
    elif isinstance(block, dict):
        mime, data = block.get("mimeType"), block.get("data")
    else:
        return ""
    if (
        not isinstance(mime, str)
        or not _MIME.match(mime)
        or not isinstance(data, str)
        or not _BASE64.match(data)
    ):
        return '<span class="image-invalid">[image: unreadable data]</span>'
    data = "".join(data.split())
    return f'<img class="{css_class}" src="data:{esc(mime)};base64,{data}" alt="{esc(mime)} image">'


def images_of(content: Any, css_class: str = "image") -> str:
    """Every image block of a message's content, inline, in one row."""
    if not isinstance(content, list):
        return ""
    tags = [
        image_tag(b, css_class)
        for b in content
        if isinstance(b, ImageContent) or (isinstance(b, dict) and b.get("type") == "image")
    ]
    return f'<div class="images">{"".join(tags)}</div>' if tags else ""


def output_block(text: str, preview_lines: int, lexer: Any = None, css_class: str = "output") -> str:
    """Text (tool output, file content) with the first ``preview_lines`` shown and the rest collapsible."""
    from piko.plugins.export.highlight import highlight_lines

    lines = highlight_lines(text, lexer)
    hl = " hl" if lexer is not None else ""
    if len(lines) <= preview_lines + 1:  # hiding a single line helps nobody
        return f'<pre class="{css_class}{hl}">{chr(10).join(lines)}</pre>'
    head = "\n".join(lines[:preview_lines])
    rest = "\n".join(lines[preview_lines:])
    more = len(lines) - preview_lines
    return (
        f'<div class="{css_class}-wrap"><pre class="{css_class}{hl} head">{head}</pre>'
        f'<details class="more"><summary>{more} more line{"s" if more != 1 else ""}</summary>'
        f'<pre class="{css_class}{hl} rest">{rest}</pre></details></div>'
    )


def diff_block(diff: str) -> str:
    """pi's numbered diff (``+12 added``, ``-12 removed``, `` 12 context``) with its lines coloured."""
    rows: list[str] = []
    for line in diff.split("\n"):
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        rows.append(f'<span class="{kind}">{esc(line)}</span>')
    return f'<pre class="diff">{"".join(rows)}</pre>'
