"""Markdown to HTML for the export: CommonMark with tables and strikethrough (markdown-it-py).

Raw HTML in a message is shown as text, never interpreted; single newlines are line breaks (as
pi's export shows them); fenced code is highlighted with pygments; links keep only safe schemes
and open in a new tab; an image that is not an inline ``data:`` image becomes a link, so the
page never loads anything from the network.
"""

from __future__ import annotations

import functools
from html import escape
from typing import Any

__all__ = ["render_markdown"]


def _highlight(code: str, language: str, _attrs: str) -> str:
    from piko.plugins.export.highlight import highlight_lines
    from piko.plugins.export.highlight import lexer_for_language

    lexer = lexer_for_language(language.split()[0]) if language.strip() else None
    if lexer is None:
        return ""  # markdown-it escapes and wraps it
    if code.endswith("\n"):
        code = code[:-1]
    body = "\n".join(highlight_lines(code, lexer))
    return f'<pre class="code hl"><code>{body}</code></pre>\n'


def _image(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if src.lower().startswith("data:image/"):
        return f'<img class="image" src="{escape(src)}" alt="{escape(alt)}">'
    label = escape(alt or src, quote=False)
    return f'<a class="image-link" href="{escape(src)}" rel="noopener noreferrer" target="_blank">[image: {label}]</a>'


def _link_open(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    token.attrSet("rel", "noopener noreferrer")
    token.attrSet("target", "_blank")
    return str(self.renderToken(tokens, idx, options, env))


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt(
        "commonmark",
        {"html": False, "breaks": True, "linkify": False, "typographer": False, "highlight": _highlight},
    ).enable(["table", "strikethrough"])
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    return md


def render_markdown(text: str) -> str:
    """``text`` (markdown) as safe HTML."""
    try:
        return str(_parser().render(text))
    except Exception:  # pathological input: show it as plain text rather than fail the export
        return f'<p class="plain">{escape(text, quote=False)}</p>'
