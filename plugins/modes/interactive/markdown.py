"""pi-styled markdown for rich, and splitting a streamed answer into top-level blocks.

:class:`PikoMarkdown` is rich's ``Markdown`` with pi's look (``` fences kept, code indented and
highlighted in the theme's syntax colours, ``│`` quotes, ``-`` bullets, boxed tables) built from
already parsed tokens, so a streamed answer is parsed once per frame and split by
:func:`split_blocks`. Imported on first use: markdown-it, rich's markdown and pygments are
not needed to open the editor.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console
from rich.console import ConsoleOptions
from rich.console import RenderResult
from rich.markdown import BlockQuote
from rich.markdown import CodeBlock
from rich.markdown import Heading
from rich.markdown import HorizontalRule
from rich.markdown import ListItem
from rich.markdown import Markdown
from rich.markdown import TableElement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from piko.plugins.modes.interactive.theme import Theme

_PARSER: MarkdownIt | None = None


def parser() -> MarkdownIt:
    global _PARSER
    if _PARSER is None:
        _PARSER = MarkdownIt("commonmark").enable("strikethrough").enable("table")
    return _PARSER


# ---------------------------------------------------------------------------
# Splitting markdown into top-level blocks
# ---------------------------------------------------------------------------


def split_blocks(text: str) -> list[tuple[int, list[Token]]]:
    """Top-level blocks of ``text``: ``(first source line, tokens)`` each, in order."""
    tokens = parser().parse(text)
    groups: list[tuple[int, list[Token]]] = []
    current: list[Token] = []
    depth = 0
    for token in tokens:
        if depth == 0:
            current = [token]
            start = token.map[0] if token.map else 0
            if token.nesting == 1:
                depth = 1
            else:
                groups.append((start, current))
            continue
        current.append(token)
        depth += token.nesting
        if depth == 0:
            groups.append((current[0].map[0] if current[0].map else 0, current))
    if depth != 0 and current:
        groups.append((current[0].map[0] if current[0].map else 0, current))
    return groups


def tail_of_fence(tokens: list[Token], lines: int) -> list[Token]:
    """A code block keeping only its last ``lines`` lines (other blocks unchanged), for display."""
    if len(tokens) != 1 or tokens[0].type != "fence" or tokens[0].content.count("\n") <= lines:
        return tokens
    token = tokens[0].copy()
    token.content = "\n".join(token.content.split("\n")[-lines - 1 :])
    return [token]


def line_offset(text: str, line: int) -> int:
    """The character offset where ``line`` (0-based) of ``text`` starts."""
    offset = 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset


# ---------------------------------------------------------------------------
# pi-styled markdown elements
# ---------------------------------------------------------------------------


class _Heading(Heading):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        level = int(self.tag[1:]) if self.tag[1:].isdigit() else 1
        if level >= 3:
            style = console.get_style(self.style_name, default="none")
            text = Text("#" * level + " ", style=style) + text
        yield text


class _CodeBlock(CodeBlock):
    markdown_theme: Theme | None = None

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        block = cls((token.info or "").partition(" ")[0], markdown.code_theme)
        block.markdown_theme = getattr(markdown, "piko_theme", None)
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        theme = self.markdown_theme
        border = console.get_style("markdown.table.border", default="none")
        if theme is not None:
            border = theme.fg_style("mdCodeBlockBorder")
        code = str(self.text).rstrip("\n")
        yield Text("```" + self.lexer_name, style=border)
        if self.lexer_name and theme is not None:
            try:
                syntax: Any = Syntax(code, self.lexer_name, theme=theme.syntax_theme, word_wrap=True)
            except Exception:  # an unknown lexer: plain text
                syntax = Text(code, style=theme.fg_style("mdCodeBlock"))
        else:
            syntax = Text(code, style=theme.fg_style("mdCodeBlock") if theme else "")
        yield Padding(syntax, (0, 0, 0, 2))
        yield Text("```", style=border)


class _BlockQuote(BlockQuote):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        render_options = options.update(width=options.max_width - 2)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        border = console.get_style("markdown.block_quote", default="none")
        bar = Segment("│ ", Style(color=border.color))
        for line in lines:
            yield bar
            yield from line
            yield Segment("\n")


class _Rule(HorizontalRule):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        style = console.get_style("markdown.hr", default="none")
        yield Text("─" * min(options.max_width, 80), style=style)


class _ListItem(ListItem):
    def render_bullet(self, console: Console, options: ConsoleOptions) -> RenderResult:
        render_options = options.update(width=options.max_width - 2)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        bullet_style = console.get_style("markdown.item.bullet", default="none")
        for first, line in enumerate(lines):
            yield Segment("- ", bullet_style) if first == 0 else Segment("  ")
            yield from line
            yield Segment("\n")

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 2
        render_options = options.update(width=options.max_width - width)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        number_style = console.get_style("markdown.item.number", default="none")
        for index, line in enumerate(lines):
            yield Segment(f"{number}.".ljust(width), number_style) if index == 0 else Segment(" " * width)
            yield from line
            yield Segment("\n")


class _Table(TableElement):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich import box
        from rich.table import Table

        table = Table(box=box.SQUARE, style="markdown.table.border", show_edge=True)
        if self.header is not None and self.header.row is not None:
            for column in self.header.row.cells:
                heading = column.content.copy()
                heading.stylize("markdown.table.header")
                table.add_column(heading)
        if self.body is not None:
            for row in self.body.rows:
                table.add_row(*[element.content for element in row.cells])
        yield table


class PikoMarkdown(Markdown):
    """rich ``Markdown`` over already parsed tokens, with pi's look."""

    elements = {
        **Markdown.elements,
        "heading_open": _Heading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
        "blockquote_open": _BlockQuote,
        "hr": _Rule,
        "list_item_open": _ListItem,
        "table_open": _Table,
    }

    def __init__(self, tokens: list[Token] | str, theme: Theme, *, style: Any = "none") -> None:
        self.markup = ""
        self.parsed = parser().parse(tokens) if isinstance(tokens, str) else tokens
        self.code_theme = "ansi_dark"
        self.justify = None
        self.style = style
        self.hyperlinks = False
        self.inline_code_lexer = None
        self.inline_code_theme = "ansi_dark"
        self.piko_theme = theme
