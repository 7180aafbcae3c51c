"""Syntax highlighting for the export with pygments: code by language or file name, and its CSS."""

from __future__ import annotations

import functools
from collections.abc import Callable
from html import escape
from typing import Any

__all__ = ["highlight_lines", "lexer_for_language", "lexer_for_path", "pygments_css"]

# Past this size code is shown plain: highlighting a huge file costs more than it gives.
MAX_HIGHLIGHT_CHARS = 200_000


def _lexer(find: Callable[..., Any], name: str) -> Any:
    """``find(name)``'s lexer, keeping the code's own leading and trailing newlines; ``None`` when
    pygments knows no such language or file name."""
    from pygments.util import ClassNotFound

    try:
        return find(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@functools.lru_cache(maxsize=64)
def lexer_for_language(language: str) -> Any:
    """The pygments lexer of a fenced code block's language (``py``, ``typescript``...), or ``None``."""
    from pygments.lexers import get_lexer_by_name

    name = language.strip().lower()
    return _lexer(get_lexer_by_name, name) if name else None


@functools.lru_cache(maxsize=256)
def lexer_for_path(path: str) -> Any:
    """The pygments lexer for a file name (``src/app.py``), or ``None`` (plain text too)."""
    from pygments.lexers import get_lexer_for_filename

    base = path.rsplit("/", 1)[-1]
    if not base or base.lower().endswith((".txt", ".log")):
        return None
    return _lexer(get_lexer_for_filename, base)


@functools.lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


def highlight_lines(code: str, lexer: Any) -> list[str]:
    """``code`` as HTML, one string per line (pygments closes its spans at each line end)."""
    if lexer is None or len(code) > MAX_HIGHLIGHT_CHARS:
        return [escape(line, quote=False) for line in code.split("\n")]
    from pygments import highlight

    html = highlight(code, lexer, _formatter())
    lines = html.split("\n")
    wanted = code.count("\n") + 1
    if len(lines) > wanted:  # pygments may add a final newline
        lines = lines[:wanted]
    while len(lines) < wanted:
        lines.append("")
    return lines


def pygments_css(style: str, scope: str) -> str:
    """The token colours of a pygments style for code under ``scope`` (a CSS selector), no background."""
    from pygments.formatters import HtmlFormatter

    formatter = HtmlFormatter(style=style, nobackground=True)
    rules = formatter.get_style_defs(f"{scope} .hl")
    # keep only token rules (``.hl .k {...}``); line-number and wrapper rules are not used here
    return "\n".join(line for line in rules.splitlines() if f"{scope} .hl ." in line)
