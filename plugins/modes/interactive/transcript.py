"""The conversation as items: what is final goes to the scrollback, the rest stays live.

Everything the mode shows (user messages, streamed markdown, tool boxes, ``!`` commands,
notices) is an :class:`Item` in one queue. :meth:`Transcript.pump` takes from the head what
can no longer change (a markdown block followed by another, a tool that finished) and returns
it as ANSI lines to print above the editor, once; what is left is drawn by
:meth:`Transcript.live_pieces` in the small region that is redrawn while streaming. Items are
printed strictly in order, so a notice queued behind a running tool waits for it.

Every item also stays in :attr:`Transcript.all` (until the conversation is cleared), so the
whole transcript can be drawn again as it looks now (:meth:`Item.full`): the fullscreen
viewport draws from it, and the regular mode reprints it when Ctrl+O or Ctrl+T changes how
printed items look. Each item caches its lines per look (width, theme, expansion).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from attrs import define
from attrs import field

from piko.lib.text import normalize_newlines
from piko.plugins.modes.interactive.render import Painter
from piko.plugins.modes.interactive.theme import Theme
from piko.plugins.modes.interactive.tool_view import ToolView

Piece = list[str]  # ANSI lines of one block; pieces are separated by a blank line when shown


@define(kw_only=True, slots=False)
class RenderContext:
    """What items need to draw themselves; the painter and the tool renderer are made on first use."""

    theme: Theme
    width: int = 80
    expanded: bool = False
    hide_thinking: bool = False
    hidden_thinking_label: str = "Thinking..."
    expand_key: str = "ctrl+o"
    cwd: str = "."
    color_system: str | None = None
    live_lines: int = 40  # rows the live region may use (the terminal's height minus the bottom)
    tool_definitions: Any = None  # name -> ToolDefinition (plugin renderers)
    _painter: Painter | None = None
    _tools: Any = None

    @property
    def painter(self) -> Painter:
        if self._painter is None:
            self._painter = Painter(self.theme, self.color_system)
        return self._painter

    @property
    def tools(self) -> Any:
        """The :class:`~.tool_render.ToolRenderer` in this theme."""
        if self._tools is None:
            from piko.plugins.modes.interactive.tool_render import ToolRenderer

            self._tools = ToolRenderer(self.theme, expand_key=self.expand_key, cwd=self.cwd)
        return self._tools

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._painter = None
        self._tools = None

    def look(self) -> tuple[Any, ...]:
        """What the lines of a finished item depend on (their cache key)."""
        return (self.width, self.theme.name, self.expanded, self.hide_thinking, self.hidden_thinking_label)


class Item:
    """One thing in the transcript."""

    preamble = False  # the start-up header and resources: kept when the conversation is cleared
    prompt = False  # a user message: where fullscreen's previous/next prompt keys stop
    view_lines: tuple[Any, list[str]] | None = None  # the fullscreen view's lines, for a look

    def take(self, ctx: RenderContext) -> list[Piece]:
        """Pieces that are final now (each returned once)."""
        return []

    def live(self, ctx: RenderContext) -> list[Piece]:
        """Pieces not final yet, as they look now."""
        return []

    def full(self, ctx: RenderContext) -> list[Piece]:
        """All of the item as it looks now (what was taken and what is live)."""
        return self.live(ctx)

    def printed(self, ctx: RenderContext) -> list[Piece]:
        """What was taken so far, as it looks now (what a redraw prints again)."""
        return self.full(ctx) if self.settled else []

    def skip(self) -> None:
        """Count what is final as taken without drawing it (the fullscreen view draws items itself)."""

    @property
    def settled(self) -> bool:
        """Everything of this item was taken; the next item may go."""
        return True


class OnceItem(Item):
    """Drawn live until :attr:`finished`, then printed once as it looks then."""

    _taken = False

    @property
    def finished(self) -> bool:
        return True

    def pieces(self, ctx: RenderContext) -> list[Piece]:
        raise NotImplementedError

    def take(self, ctx: RenderContext) -> list[Piece]:
        if not self.finished or self._taken:
            return []
        self._taken = True
        return self.pieces(ctx)

    def skip(self) -> None:
        if self.finished:
            self._taken = True

    def live(self, ctx: RenderContext) -> list[Piece]:
        return [] if self._taken else self.pieces(ctx)

    _full_cache: tuple[Any, list[Piece]] | None = None

    def full(self, ctx: RenderContext) -> list[Piece]:
        if not self.finished:
            return self.pieces(ctx)
        key = ctx.look()
        cached = self._full_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        pieces = self.pieces(ctx)
        self._full_cache = (key, pieces)
        return pieces

    def printed(self, ctx: RenderContext) -> list[Piece]:
        return self.full(ctx) if self._taken else []

    @property
    def settled(self) -> bool:
        return self._taken


class StaticItem(OnceItem):
    """Something final from the start (a user message, a notice, a summary)."""

    def __init__(self, render: Any, *, preamble: bool = False) -> None:
        self._render = render  # a renderable, or ``callable(ctx) -> renderable``
        self.preamble = preamble

    def pieces(self, ctx: RenderContext) -> list[Piece]:
        renderable = self._render(ctx) if callable(self._render) else self._render
        if renderable is None:
            return []
        lines = ctx.painter.lines(renderable, ctx.width)
        return [lines] if lines else []


class StatusItem(StaticItem):
    """A status line (pi's ``showStatus``): the next status replaces it while nothing follows it."""

    def __init__(self, text: str, render: Any) -> None:
        self.text = text
        self._make = render  # ``render(theme, text)``
        super().__init__(lambda ctx: self._make(ctx.theme, self.text))
        self.sealed = False

    def replace(self, text: str) -> None:
        self.text = text
        self._full_cache = None

    @property
    def finished(self) -> bool:
        return self.sealed


class MarkdownItem(Item):
    """Streamed markdown (an answer or a thinking block), printed block by block as blocks complete."""

    def __init__(self, *, thinking: bool = False, transform: Any = None) -> None:
        self.thinking = thinking
        self._text = ""
        # extensions' markdown transformers: ``transform(raw, streaming)`` gives the text to draw
        self._transform = transform
        self._transformed: tuple[str, bool, str] | None = None
        # while the block streams: the content block, whose text is read when the item is drawn
        self._source: Any = None
        self.finished = False
        self._offset = 0  # characters already printed
        self._scanned = 0  # text length at the last split
        self._hidden_done = False
        self._live_cache: tuple[Any, list[Piece]] | None = None
        self._fence_cache: dict[str, Piece] = {}
        self._fence_cache_key: Any = None

    @property
    def text(self) -> str:
        source = self._source
        raw: str = self._text if source is None else (source.thinking if self.thinking else source.text)
        if self._transform is None:
            return raw
        cached = self._transformed
        if cached is not None and cached[0] == raw and cached[1] == self.finished:
            return cached[2]
        shown = self._transform(raw, not self.finished)
        self._transformed = (raw, self.finished, shown)
        return shown

    def set_text(self, text: str) -> None:
        self._text = text
        self._source = None

    def follow(self, block: Any) -> None:
        """Show ``block``'s text as it grows (read when drawn, not on every delta)."""
        self._source = block

    def finish(self) -> None:
        self.finished = True

    def skip(self) -> None:
        if self.finished:
            self._hidden_done = self._hidden_done or (self.thinking and bool(self.text.strip()))
            self._offset = self._scanned = len(self.text)
            self._live_cache = None

    def _style(self, ctx: RenderContext) -> Any:
        return ctx.theme.fg_style("thinkingText", italic=True) if self.thinking else None

    def _hidden(self, ctx: RenderContext) -> bool:
        return self.thinking and ctx.hide_thinking

    def _label(self, ctx: RenderContext) -> Piece:
        from rich.padding import Padding
        from rich.text import Text

        label = Text(ctx.hidden_thinking_label, style=ctx.theme.fg_style("thinkingText", italic=True))
        return ctx.painter.lines(Padding(label, (0, 1)), ctx.width)

    def take(self, ctx: RenderContext) -> list[Piece]:
        if self._hidden(ctx):
            if self.finished and not self._hidden_done and self.text.strip():
                self._hidden_done = True
                self._offset = len(self.text)
                return [self._label(ctx)]
            if self.finished:
                self._offset = len(self.text)
            return []
        if not self.finished and "\n" not in self.text[self._scanned :]:
            return []
        from piko.plugins.modes.interactive.markdown import line_offset
        from piko.plugins.modes.interactive.markdown import split_blocks

        self._scanned = len(self.text)
        tail = self.text[self._offset :]
        if not tail.strip():
            if self.finished:
                self._offset = len(self.text)
            return []
        blocks = split_blocks(tail)
        ready = blocks if self.finished else blocks[:-1]
        if not ready:
            return []
        pieces = [
            ctx.painter.markdown(tokens, style=self._style(ctx), width=ctx.width) for _s, tokens in ready
        ]
        if self.finished:
            self._offset = len(self.text)
        else:
            self._offset += line_offset(tail, blocks[-1][0])
        self._live_cache = None
        return [p for p in pieces if p]

    def live(self, ctx: RenderContext) -> list[Piece]:
        if self._hidden(ctx):
            return [] if self._hidden_done or not self.text.strip() else [self._label(ctx)]
        tail = self.text[self._offset :]
        if not tail.strip():
            return []
        key = (self._offset, len(self.text), ctx.width, ctx.theme.name)
        if self._live_cache is not None and self._live_cache[0] == key:
            return self._live_cache[1]
        from piko.plugins.modes.interactive.markdown import split_blocks

        blocks = split_blocks(tail)
        last = blocks[-1][1] if blocks else []
        growing_fence = len(last) == 1 and last[0].type == "fence" and not self.thinking
        pieces = [
            ctx.painter.markdown(tokens, style=self._style(ctx), width=ctx.width)
            for _s, tokens in (blocks[:-1] if growing_fence else blocks)
        ]
        if growing_fence:
            pieces.append(self._live_fence(ctx, last[0]))
        result = [p for p in pieces if p]
        self._live_cache = (key, result)
        return result

    def _live_fence(self, ctx: RenderContext, token: Any) -> Piece:
        """A code block being written: its last lines, each highlighted once and kept (only the
        line being written is drawn again each frame)."""
        from rich.padding import Padding
        from rich.syntax import Syntax
        from rich.text import Text

        key = (ctx.width, ctx.theme.name)
        if self._fence_cache_key != key:
            self._fence_cache_key = key
            self._fence_cache = {}
        cache = self._fence_cache
        lang = (token.info or "").partition(" ")[0]
        theme = ctx.theme
        lines = token.content.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        border = Text("```" + lang, style=theme.fg_style("mdCodeBlockBorder"))
        out = ctx.painter.lines(Padding(border, (0, 1)), ctx.width)
        for line in lines[-(ctx.live_lines + 2) :]:
            rendered = cache.get(line)
            if rendered is None:
                code: Any = None
                if lang:
                    try:
                        code = Syntax(line, lang, theme=theme.syntax_theme, word_wrap=True)
                    except Exception:  # an unknown language
                        code = None
                if code is None:
                    code = Text(line, style=theme.fg_style("mdCodeBlock"))
                rendered = ctx.painter.lines(Padding(code, (0, 1, 0, 3)), ctx.width) or [""]
                if len(cache) > 2000:
                    cache.clear()
                cache[line] = rendered
            out.extend(rendered)
        if not lines:
            out.append("")
        closing = Text("```", style=theme.fg_style("mdCodeBlockBorder"))
        return out + ctx.painter.lines(Padding(closing, (0, 1)), ctx.width)

    def _blocks(self, ctx: RenderContext, end: int) -> list[Piece]:
        """The blocks of ``text[:end]`` rendered (cached for one end and look)."""
        key = (end, ctx.look())
        cached = self._blocks_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        from piko.plugins.modes.interactive.markdown import split_blocks

        text = self.text[:end]
        pieces: list[Piece] = []
        if text.strip():
            style = self._style(ctx)
            for _s, tokens in split_blocks(text):
                piece = ctx.painter.markdown(tokens, style=style, width=ctx.width)
                if piece:
                    pieces.append(piece)
        self._blocks_cache = (key, pieces)
        return pieces

    _blocks_cache: tuple[Any, list[Piece]] | None = None

    def full(self, ctx: RenderContext) -> list[Piece]:
        if self._hidden(ctx):
            return [self._label(ctx)] if self.text.strip() else []
        if self.settled:
            return self._blocks(ctx, len(self.text))
        return self._blocks(ctx, self._offset) + self.live(ctx)

    def printed(self, ctx: RenderContext) -> list[Piece]:
        if self._hidden(ctx):
            return [self._label(ctx)] if self._hidden_done else []
        return self._blocks(ctx, len(self.text) if self.settled else self._offset)

    @property
    def settled(self) -> bool:
        return self.finished and self._offset >= len(self.text)


class ThinkingRenderContext:
    """What a thinking renderer is given (pi's context): the visible ``text``, ``content_index``,
    ``thinking_index`` and ``request_render()``; also readable as ``context["contentIndex"]``."""

    _NAMES = {
        "contentIndex": "content_index",
        "thinkingIndex": "thinking_index",
        "requestRender": "request_render",
    }

    def __init__(
        self, item: MarkdownItem, content_index: int, thinking_index: int, request_render: Any
    ) -> None:
        self._item = item
        self.content_index = content_index
        self.thinking_index = thinking_index
        self.request_render = request_render

    @property
    def text(self) -> str:
        return self._item.text

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._NAMES.get(key, key))


class ThinkingExtrasItem(OnceItem):
    """What extensions' thinking renderers add below a visible thinking block, in registration
    order (``renderer(context, theme)`` gives a renderable, text or ``None``; one that fails is
    left out). Drawn live while the block streams, printed once it is finished."""

    def __init__(self, thinking: MarkdownItem, renderers: list[Any], context: ThinkingRenderContext) -> None:
        self.thinking = thinking
        self.renderers = renderers
        self.context = context

    @property
    def finished(self) -> bool:
        return self.thinking.finished

    def pieces(self, ctx: RenderContext) -> list[Piece]:
        if ctx.hide_thinking or not self.thinking.text.strip():
            return []
        from rich.text import Text

        out: list[Piece] = []
        for renderer in self.renderers:
            try:
                value = renderer(self.context, ctx.theme)
                if isinstance(value, str):
                    value = Text.from_ansi(value)
                lines = ctx.painter.lines(value, ctx.width) if value is not None else []
            except Exception:
                continue
            if lines:
                out.append(lines)
        return out


class ToolItem(OnceItem):
    """A tool call: drawn live while its arguments stream and it runs, printed when it is done."""

    def __init__(self, view: ToolView) -> None:
        self.view = view
        self.done = False

    def _definition(self, ctx: RenderContext) -> Any:
        table = ctx.tool_definitions
        if table is None:
            return None
        try:
            return table.get(self.view.name)
        except Exception:
            return None

    def render(self, ctx: RenderContext) -> Piece:
        return ctx.painter.lines(ctx.tools.render(self.view, ctx.expanded, self._definition(ctx)), ctx.width)

    @property
    def finished(self) -> bool:
        return self.done

    def pieces(self, ctx: RenderContext) -> list[Piece]:
        return [self.render(ctx)]


class BashItem(OnceItem):
    """A ``!command`` the user ran: streamed output, then its exit status."""

    PREVIEW_LINES = 20

    def __init__(self, command: str, *, exclude: bool = False, spinner: Any = None) -> None:
        self.command = command
        self.exclude = exclude
        self.output = ""
        self.status = "running"  # running | complete | error | cancelled
        self.exit_code: int | None = None
        self.full_output_path: str | None = None
        self.truncated = False
        self.spinner = spinner  # callable() -> current spinner frame

    def append(self, chunk: str) -> None:
        from piko.plugins.modes.interactive.tool_view import _ANSI

        self.output += normalize_newlines(_ANSI.sub("", chunk))

    def complete(self, result: Any) -> None:
        exit_code = getattr(result, "exit_code", None)
        cancelled = bool(getattr(result, "cancelled", False))
        output = getattr(result, "output", None)
        if isinstance(output, str) and output and not self.output:
            self.append(output)
        self.exit_code = exit_code
        self.truncated = bool(getattr(result, "truncated", False))
        self.full_output_path = getattr(result, "full_output_path", None)
        self.status = "cancelled" if cancelled else ("error" if exit_code not in (0, None) else "complete")

    def fail(self) -> None:
        self.status = "error"

    def render(self, ctx: RenderContext) -> Piece:
        from rich.console import Group
        from rich.padding import Padding
        from rich.text import Text

        theme = ctx.theme
        token = "dim" if self.exclude else "bashMode"
        border = Text("─" * ctx.width, style=theme.fg_style(token))
        parts: list[Any] = [Text(f"$ {self.command}", style=theme.fg_style(token, bold=True))]
        lines = self.output.rstrip("\n").split("\n") if self.output.strip() else []
        shown = lines if ctx.expanded else lines[-self.PREVIEW_LINES :]
        hidden = len(lines) - len(shown)
        if shown:
            parts.append(Text(""))
            parts.extend(Text(line, style=theme.fg_style("muted")) for line in shown)
        if self.status == "running":
            frame = self.spinner() if self.spinner else "⠋"
            parts.append(Text(""))
            parts.append(
                Text.assemble(
                    (f"{frame} ", theme.fg_style(token)),
                    ("Running... (escape to cancel)", theme.fg_style("muted")),
                )
            )
        else:
            notes: list[Text] = []
            if hidden > 0:
                notes.append(
                    Text.assemble(
                        (f"... {hidden} more lines", theme.fg_style("muted")),
                        " (",
                        (ctx.expand_key, theme.fg_style("dim")),
                        (" to expand)", theme.fg_style("muted")),
                    )
                )
            if self.status == "cancelled":
                notes.append(Text("(cancelled)", style=theme.fg_style("warning")))
            elif self.status == "error":
                notes.append(Text(f"(exit {self.exit_code})", style=theme.fg_style("error")))
            if self.truncated and self.full_output_path:
                notes.append(
                    Text(
                        f"Output truncated. Full output: {self.full_output_path}",
                        style=theme.fg_style("warning"),
                    )
                )
            if notes:
                parts.append(Text(""))
                parts.extend(notes)
        body = ctx.painter.lines(Padding(Group(*parts), (0, 1)), ctx.width)
        edge = ctx.painter.lines(border, ctx.width)
        return [*edge, *body, *edge]

    @property
    def finished(self) -> bool:
        return self.status != "running"

    def pieces(self, ctx: RenderContext) -> list[Piece]:
        return [self.render(ctx)]


@define
class Transcript:
    """The queue of items not yet printed in full, and every item of the conversation."""

    items: deque[Item] = field(factory=deque)
    all: list[Item] = field(factory=list)
    version: int = 0  # changes when items are removed (what was drawn from ``all`` is stale)

    def add(self, item: Item) -> Item:
        last = self.all[-1] if self.all else None
        if isinstance(last, StatusItem):
            last.sealed = True
        self.items.append(item)
        self.all.append(item)
        return item

    def add_preamble(self, item: Item) -> Item:
        """``item`` after the header and resources already there, before the conversation (what
        ``session_start`` handlers showed waits behind the header)."""
        item.preamble = True
        self.all.insert(sum(1 for i in self.all if i.preamble), item)
        pending = list(self.items)
        pending.insert(sum(1 for i in pending if i.preamble), item)
        self.items = deque(pending)
        return item

    def status(self, text: str, render: Any) -> Item:
        """A status line; it replaces the previous one when that is the last item and not printed."""
        last = self.all[-1] if self.all else None
        if isinstance(last, StatusItem) and not last.sealed:
            last.replace(text)
            return last
        return self.add(StatusItem(text, render))

    def seal(self) -> None:
        """Nothing may replace the last status any more (it is printed)."""
        last = self.all[-1] if self.all else None
        if isinstance(last, StatusItem):
            last.sealed = True

    def printed_pieces(self, ctx: RenderContext) -> list[Piece]:
        """Everything printed so far, as it looks now."""
        return [piece for item in self.all for piece in item.printed(ctx)]

    def clear_conversation(self) -> None:
        """Drop every item but the start-up header and resources."""
        self.all = [item for item in self.all if item.preamble]
        self.items = deque(item for item in self.items if item.preamble)
        self.version += 1

    def pump(self, ctx: RenderContext, *, draw: bool = True) -> list[Piece]:
        """Take every piece that is final, in order. ``draw=False`` (fullscreen): finished items
        are taken without being drawn (a resumed session's thousands of messages cost nothing
        here), only the item still streaming has its finished blocks drawn (once)."""
        out: list[Piece] = []
        while self.items:
            head = self.items[0]
            if draw:
                out.extend(head.take(ctx))
            else:
                head.skip()
                if not head.settled:
                    head.take(ctx)
            if not head.settled:
                break
            self.items.popleft()
        return out

    def live_pieces(self, ctx: RenderContext) -> list[Piece]:
        return [piece for item in self.items for piece in item.live(ctx)]

    def animated(self) -> bool:
        """Something still runs (a ``!`` command or a tool): the spinner keeps turning."""
        return any(
            (isinstance(i, BashItem) and i.status == "running") or (isinstance(i, ToolItem) and not i.done)
            for i in self.items
        )

    def clear(self) -> None:
        self.items.clear()
        self.all.clear()
        self.version += 1

    def __len__(self) -> int:
        return len(self.items)


def join_pieces(pieces: list[Piece]) -> list[str]:
    """Pieces as lines, each piece preceded by a blank line (pi's spacing between components)."""
    lines: list[str] = []
    for piece in pieces:
        lines.append("")
        lines.extend(piece)
    return lines
