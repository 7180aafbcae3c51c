"""The fullscreen transcript: a viewport over every item, scrolled by wheel and keys, searched, selected.

:class:`TranscriptView` draws :attr:`Transcript.all` into the rows above the editor. Each item's
lines are cached on the item for the look they were drawn in (width, theme, expansion), so a
frame draws only the rows in view: following the end it walks back from the last item until the
viewport is full; scrolled up it starts at an anchor (an item and a line in it), which stays
put while items above are drawn for the first time or output streams in below. Lines of items
never drawn are estimated for the scrollbar until an idle pass has measured them all.

Search matches the plain text of the rendered lines; a selection is made by dragging with the
mouse and copied (platform tools, or OSC 52 for the terminal) when the button is released.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from attrs import define
from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text import to_formatted_text
from prompt_toolkit.layout.controls import UIContent
from prompt_toolkit.layout.controls import UIControl
from prompt_toolkit.mouse_events import MouseButton
from prompt_toolkit.mouse_events import MouseEvent
from prompt_toolkit.mouse_events import MouseEventType

from piko.plugins.modes.interactive.render import visible
from piko.plugins.modes.interactive.transcript import Item
from piko.plugins.modes.interactive.transcript import RenderContext
from piko.plugins.modes.interactive.transcript import join_pieces

ESTIMATED_LINES = 4  # an item not drawn yet, for the scrollbar
MEASURE_BATCH = 8  # items drawn per idle step (a key waits for one step at most)
_ANSI_ANY = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

Position = tuple[int, int, int]  # (item index, line in the item, column)


@define
class Match:
    """One search hit: where it is in the transcript and how long it is."""

    item: int
    line: int
    start: int
    end: int


class TranscriptView(UIControl):
    """The transcript's viewport in fullscreen mode (see the module docstring)."""

    def __init__(self, mode: Any, *, on_change: Callable[[], None]) -> None:
        self.mode = mode
        self.on_change = on_change
        self.follow = True
        self.anchor = (0, 0)  # (item, line) on the top row when not following
        self.height = 10
        self.width = 80
        self.rows: list[tuple[int, int]] = []  # (item, line) of each row drawn last
        self.selection: tuple[Position, Position] | None = None
        self.dragging = False
        self.query = ""
        self.matches: list[Match] = []
        self.current_match = -1
        self.notice: str | None = None
        self._notice_handle: asyncio.TimerHandle | None = None
        self._fragments: dict[str, StyleAndTextTuples] = {}
        self._measure_task: asyncio.Task[None] | None = None
        self._search_task: asyncio.Task[None] | None = None
        self.search_running = False
        self._version = -1
        self.copy_on_select = True
        self.wheel_lines = 3

    # -- the lines of items ----------------------------------------------------------------------

    @property
    def items(self) -> list[Item]:
        transcript = self.mode.transcript
        if transcript.version != self._version:  # items were removed: anchors are stale
            self._version = transcript.version
            self.follow = True
            self.anchor = (0, 0)
            self.selection = None
            self.matches = []
        return transcript.all  # type: ignore[no-any-return]

    def _ctx(self) -> RenderContext:
        ctx: RenderContext = self.mode.render_context
        ctx.width = self.width
        ctx.live_lines = max(3, self.height)
        return ctx

    def lines_of(self, index: int, ctx: RenderContext | None = None) -> list[str]:
        """The ANSI lines of item ``index`` (a blank line before each piece but the very first)."""
        item = self.items[index]
        ctx = ctx or self._ctx()
        key = ctx.look()
        cached = item.view_lines
        if cached is not None and cached[0] == key and item.settled:
            return cached[1]
        lines = join_pieces(item.full(ctx))
        if index == 0 and lines and lines[0] == "":
            lines = lines[1:]
        if item.settled:
            item.view_lines = (key, lines)
        return lines

    def _known_height(self, item: Item, key: Any) -> int | None:
        cached = item.view_lines
        return len(cached[1]) if cached is not None and cached[0] == key else None

    # -- drawing ---------------------------------------------------------------------------------

    def frame(self) -> list[tuple[int, int]]:
        """The (item, line) of each row in view, top to bottom (fewer rows when the transcript is short)."""
        items = self.items
        ctx = self._ctx()
        height = self.height
        if not items:
            return []
        rows: list[tuple[int, int]]
        if not self.follow:
            rows = self._rows_from(self.anchor, height, ctx)
            if len(rows) < height:  # the end is in view: follow it again
                self.follow = True
            else:
                return rows
        rows = []
        index = len(items) - 1
        while index >= 0 and len(rows) < height:
            count = len(self.lines_of(index, ctx))
            take = min(count, height - len(rows))
            rows[:0] = [(index, line) for line in range(count - take, count)]
            index -= 1
        if rows:
            self.anchor = rows[0]
        return rows

    def _rows_from(self, anchor: tuple[int, int], height: int, ctx: RenderContext) -> list[tuple[int, int]]:
        index, line = anchor
        items = self.items
        rows: list[tuple[int, int]] = []
        while index < len(items) and len(rows) < height:
            count = len(self.lines_of(index, ctx))
            rows.extend((index, n) for n in range(line, count))
            index += 1
            line = 0
        return rows[:height]

    def create_content(self, width: int, height: int) -> UIContent:
        self.width = max(10, width)
        self.height = max(1, height)
        self.rows = self.frame()
        ctx = self._ctx()
        lines: list[StyleAndTextTuples] = []
        for item, line in self.rows:
            text = self.lines_of(item, ctx)[line]
            lines.append(self._decorate(item, line, self._to_fragments(text)))
        if self.notice or not self.follow:
            hint = self.notice or self._jump_hint()
            row: StyleAndTextTuples = [("class:t-text class:bg-selectedbg", f" {hint} ")]
            pad = max(0, self.width - len(hint) - 2)
            while len(lines) < self.height:
                lines.append([])
            lines[-1] = [("", " " * pad), *row]

        def get_line(number: int) -> StyleAndTextTuples:
            return lines[number] if number < len(lines) else []

        return UIContent(get_line=get_line, line_count=max(1, len(lines)), cursor_position=Point(0, 0))

    def _jump_hint(self) -> str:
        key = capitalized_keys(self.mode.key_text("tui.altScreen.bottom"))
        return f"↓ Jump to latest message{f' · {key}' if key else ''}"

    def _to_fragments(self, text: str) -> StyleAndTextTuples:
        cached = self._fragments.get(text)
        if cached is None:
            cached = to_formatted_text(ANSI(text))
            if len(self._fragments) > 5000:
                self._fragments.clear()
            self._fragments[text] = cached
        return cached

    def _decorate(self, item: int, line: int, fragments: StyleAndTextTuples) -> StyleAndTextTuples:
        """Search matches and the selection on one row."""
        marks: list[tuple[int, int, str]] = []
        for number, match in enumerate(self.matches):
            if match.item == item and match.line == line:
                style = "reverse bold" if number == self.current_match else "underline"
                marks.append((match.start, match.end, style))
        span = self._selected_span(item, line)
        if span is not None:
            marks.append((span[0], span[1], "reverse"))
        if not marks:
            return fragments
        return _restyle(fragments, marks)

    # -- scrolling -------------------------------------------------------------------------------

    def scroll(self, delta: int) -> None:
        """Up (negative) or down by ``delta`` lines; reaching the end follows it again."""
        items = self.items
        if not items:
            return
        ctx = self._ctx()
        if self.follow:
            self.frame()
        index, line = self.anchor
        line += delta
        while line < 0 and index > 0:
            index -= 1
            line += len(self.lines_of(index, ctx))
        if line < 0:
            line = 0
        while index < len(items) and line >= len(self.lines_of(index, ctx)):
            line -= len(self.lines_of(index, ctx))
            index += 1
        if index >= len(items):
            self.follow = True
        else:
            self.follow = False
            self.anchor = (index, line)
            if len(self._rows_from(self.anchor, self.height, ctx)) < self.height:
                self.follow = True
        self.on_change()

    def page(self, direction: int) -> None:
        self.scroll(direction * max(1, self.height - 2))

    def top(self) -> None:
        self.follow = False
        self.anchor = (0, 0)
        self.on_change()

    def bottom(self) -> None:
        self.follow = True
        self.on_change()

    def jump_to_item(self, index: int) -> None:
        self.follow = False
        self.anchor = (index, 0)
        if len(self._rows_from(self.anchor, self.height, self._ctx())) < self.height:
            self.follow = True
        self.on_change()

    def jump_prompt(self, direction: int, is_prompt: Callable[[Item], bool]) -> None:
        """To the previous (``-1``) or next (``1``) marked item (a user message)."""
        items = self.items
        if self.follow:
            self.frame()
        start = self.anchor[0]
        indexes = range(start - 1, -1, -1) if direction < 0 else range(start + 1, len(items))
        for index in indexes:
            if is_prompt(items[index]):
                self.jump_to_item(index)
                return
        if direction > 0:
            self.bottom()

    # -- the scrollbar ---------------------------------------------------------------------------

    def extent(self) -> tuple[int, int]:
        """(lines above the top row, lines in all): measured where drawn, estimated elsewhere."""
        items = self.items
        key = self._ctx().look()
        above = total = 0
        top = self.rows[0] if self.rows else (0, 0)
        for index, item in enumerate(items):
            height = self._known_height(item, key)
            if height is None:
                height = ESTIMATED_LINES
            if index < top[0]:
                above += height
            elif index == top[0]:
                above += top[1]
            total += height
        if not self._measured(key):
            self._measure_soon()
        return above, max(total, above + len(self.rows))

    def _measured(self, key: Any) -> bool:
        return all(self._known_height(i, key) is not None or not i.settled for i in self.items)

    def _measure_soon(self) -> None:
        """Measure the items not drawn yet a few at a time while the loop is idle."""
        if self._measure_task is not None and not self._measure_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._measure_task = loop.create_task(self._measure())

    async def _measure(self) -> None:
        ctx = self._ctx()
        key = ctx.look()
        index = 0
        while index < len(self.items):
            for _ in range(MEASURE_BATCH):
                if index >= len(self.items):
                    break
                item = self.items[index]
                if item.settled and self._known_height(item, key) is None:
                    self.lines_of(index, ctx)
                index += 1
            await asyncio.sleep(0)
            if ctx.look() != key:
                return
        self.on_change()

    def scrollbar_fragments(self, height: int) -> StyleAndTextTuples:
        """The one-column scrollbar: a thumb where the view is, in the transcript's height."""
        above, total = self.extent()
        if total <= height:
            return []
        thumb = max(1, round(height * height / total))
        start = min(height - thumb, round(above * height / total))
        out: StyleAndTextTuples = []
        for row in range(height):
            if row:
                out.append(("", "\n"))
            out.append(
                (
                    "class:t-accent" if start <= row < start + thumb else "class:t-dim",
                    "┃" if start <= row < start + thumb else "│",
                )
            )
        return out

    # -- search ----------------------------------------------------------------------------------

    def search(self, query: str) -> None:
        """Find ``query`` (case-insensitive) in the plain text of every line; the latest match first.

        The items are searched from the end, a batch at a time while the loop is idle, so typing
        stays quick in a transcript of thousands of messages (whose items may not be drawn yet):
        the latest match shows as soon as it is found, the count when the search is done."""
        self.query = query
        self.matches = []
        self.current_match = -1
        if self._search_task is not None:
            self._search_task.cancel()
            self._search_task = None
        self.search_running = bool(query)
        if query:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is None:
                asyncio.run(self._search(query))
            else:
                self._search_task = loop.create_task(self._search(query))
        self.on_change()

    def _matches_in(self, index: int, needle: str, ctx: RenderContext) -> list[Match]:
        found: list[Match] = []
        for number, line in enumerate(self.lines_of(index, ctx)):
            plain = _plain(line).lower()
            at = plain.find(needle)
            while at >= 0:
                found.append(Match(index, number, at, at + len(needle)))
                at = plain.find(needle, at + len(needle))
        return found

    async def _search(self, query: str) -> None:
        needle = query.lower()
        ctx = self._ctx()
        found: list[list[Match]] = []
        for count, index in enumerate(range(len(self.items) - 1, -1, -1)):
            here = self._matches_in(index, needle, ctx)
            if here:
                found.append(here)
                if len(found) == 1:  # the latest match, at once
                    self.matches = [here[-1]]
                    self.current_match = 0
                    self._show_match()
            if count % MEASURE_BATCH == MEASURE_BATCH - 1:
                await asyncio.sleep(0)
                if self.query != query:
                    return
        self.matches = [match for here in reversed(found) for match in here]
        self.current_match = len(self.matches) - 1
        self.search_running = False
        if self.matches:
            self._show_match()
        self.on_change()

    def next_match(self, step: int) -> None:
        if not self.matches:
            return
        self.current_match = (self.current_match + step) % len(self.matches)
        self._show_match()
        self.on_change()

    def _show_match(self) -> None:
        match = self.matches[self.current_match]
        self.follow = False
        self.anchor = (match.item, match.line)
        self.scroll(-(self.height // 3))

    def close_search(self) -> None:
        if self._search_task is not None:
            self._search_task.cancel()
            self._search_task = None
        self.search_running = False
        self.query = ""
        self.matches = []
        self.current_match = -1
        self.on_change()

    def search_status(self) -> str:
        if not self.query:
            return ""
        if self.search_running:
            return "searching..."
        if not self.matches:
            return "no matches"
        return f"{self.current_match + 1}/{len(self.matches)}"

    # -- selection -------------------------------------------------------------------------------

    def mouse_handler(self, mouse_event: MouseEvent) -> Any:
        kind = mouse_event.event_type
        if kind == MouseEventType.SCROLL_UP:
            self.scroll(-self.wheel_lines)
            return None
        if kind == MouseEventType.SCROLL_DOWN:
            self.scroll(self.wheel_lines)
            return None
        position = self._position(mouse_event.position)
        if kind == MouseEventType.MOUSE_DOWN and mouse_event.button == MouseButton.LEFT:
            self.selection = (position, position) if position is not None else None
            self.dragging = position is not None
            self.on_change()
            return None
        if kind == MouseEventType.MOUSE_MOVE and self.dragging and position is not None:
            if self.selection is not None:
                self.selection = (self.selection[0], position)
                self.on_change()
            return None
        if kind == MouseEventType.MOUSE_UP and self.dragging:
            self.dragging = False
            if position is not None and self.selection is not None:
                self.selection = (self.selection[0], position)
            if self.selection is not None and self.selection[0] == self.selection[1]:
                self.selection = None  # a click, not a drag
            elif self.copy_on_select:
                self.copy()
            self.on_change()
            return None
        return NotImplemented

    def _position(self, point: Point) -> Position | None:
        if not self.rows:
            return None
        row = min(max(0, point.y), len(self.rows) - 1)
        item, line = self.rows[row]
        return (item, line, max(0, point.x))

    def _ordered(self) -> tuple[Position, Position] | None:
        if self.selection is None:
            return None
        start, end = self.selection
        return (start, end) if start <= end else (end, start)

    def _selected_span(self, item: int, line: int) -> tuple[int, int] | None:
        ordered = self._ordered()
        if ordered is None:
            return None
        start, end = ordered
        here = (item, line)
        if not (start[:2] <= here <= end[:2]):
            return None
        first = start[2] if here == start[:2] else 0
        last = end[2] + 1 if here == end[:2] else 10_000
        return first, last

    def selected_text(self) -> str:
        """The selected characters of the rendered lines, as plain text (trailing spaces dropped)."""
        ordered = self._ordered()
        if ordered is None:
            return ""
        start, end = ordered
        ctx = self._ctx()
        out: list[str] = []
        index, line = start[0], start[1]
        while (index, line) <= end[:2] and index < len(self.items):
            lines = self.lines_of(index, ctx)
            if line >= len(lines):
                index, line = index + 1, 0
                continue
            span = self._selected_span(index, line)
            plain = _plain(lines[line])
            if span is not None:
                out.append(plain[span[0] : span[1]].rstrip())
            line += 1
        return "\n".join(out).strip("\n")

    def copy(self) -> bool:
        """Copy the selection to the clipboard; False when nothing is selected."""
        text = self.selected_text()
        if not text:
            return False
        from piko.plugins.modes.interactive.commands.clipboard import copy_to_clipboard

        async def run() -> None:
            try:
                await asyncio.to_thread(copy_to_clipboard, text)
            except Exception as exc:  # pi's wording: the reason, shown longer
                self.flash(str(exc) or "Copy failed", seconds=5.0)
                return
            self.flash("Copied!")

        self.mode.spawn(run())
        return True

    def flash(self, text: str, seconds: float = 2.0) -> None:
        """A short notice at the bottom of the viewport."""
        self.notice = text
        if self._notice_handle is not None:
            self._notice_handle.cancel()

        def clear() -> None:
            self.notice = None
            self.on_change()

        self._notice_handle = asyncio.get_running_loop().call_later(seconds, clear)
        self.on_change()

    def is_focusable(self) -> bool:
        return False


def capitalized_keys(keys: str) -> str:
    """pi's display form of keys: each part capitalized (``ctrl+end/pageDown`` -> ``Ctrl+End/PageDown``)."""
    return "/".join(
        "+".join(part[:1].upper() + part[1:] for part in key.split("+")) for key in keys.split("/")
    )


def _plain(line: str) -> str:
    return visible(_ANSI_ANY.sub("", line))


def _restyle(fragments: StyleAndTextTuples, marks: list[tuple[int, int, str]]) -> StyleAndTextTuples:
    """``fragments`` with the styles of ``marks`` (column ranges) added, character by character."""
    out: StyleAndTextTuples = []
    column = 0
    for fragment in fragments:
        style, text = fragment[0], fragment[1]
        for ch in text:
            extra = " ".join(s for a, b, s in marks if a <= column < b)
            wanted = f"{style} {extra}".strip() if extra else style
            if out and out[-1][0] == wanted:
                out[-1] = (wanted, out[-1][1] + ch)
            else:
                out.append((wanted, ch))
            column += 1
    # a selection past the text's end shows as far as it goes
    return out
