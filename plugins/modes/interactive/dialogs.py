"""Dialogs that take the editor's place: a filterable selector, a one-line input and a text editor.

Each is a :class:`Panel` with its own keys; the mode shows the newest panel instead of the
editor, and ``await panel.result()`` gives the answer: the chosen value, the text, or ``None``
when cancelled (Escape, Ctrl+C, a ``timeout`` in milliseconds, an aborted ``signal``).
They look like pi's (a rule above and below, the title in the accent colour, key hints).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding import KeyPressEvent
from prompt_toolkit.layout import BufferControl
from prompt_toolkit.layout import ConditionalContainer
from prompt_toolkit.layout import Dimension
from prompt_toolkit.layout import FormattedTextControl
from prompt_toolkit.layout import HSplit
from prompt_toolkit.layout import Window
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.layout.processors import PasswordProcessor
from prompt_toolkit.layout.processors import Processor

from piko.lib.fuzzy import fuzzy_filter
from piko.plugins.modes.interactive.command_api import PickAction
from piko.plugins.modes.interactive.command_api import PickItem

MAX_VISIBLE = 10


class Panel:
    """Something shown in place of the editor until it is answered."""

    container: Any
    focus: Any
    title: str

    def __init__(
        self, *, timeout: Any = None, signal: Any = None, on_change: Callable[[], None] | None = None
    ) -> None:
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.on_change = on_change or (lambda: None)
        self.remaining: int | None = None
        self._timer: asyncio.Task[None] | None = None
        self._remove_listener: Callable[[], None] | None = None
        seconds = timeout / 1000.0 if isinstance(timeout, (int, float)) and timeout > 0 else None
        if seconds is not None:
            self.remaining = max(1, int(seconds + 0.999))
            self._timer = asyncio.get_running_loop().create_task(self._countdown(seconds))
        if signal is not None:
            if getattr(signal, "aborted", False):
                self.close(None)
            elif hasattr(signal, "add_listener"):
                self._remove_listener = signal.add_listener(lambda: self.close(None))

    async def _countdown(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while True:
            left = end - loop.time()
            if left <= 0:
                self.close(None)
                return
            self.remaining = max(1, int(left + 0.999))
            self.on_change()
            await asyncio.sleep(min(1.0, left - (self.remaining - 1)) or 0.05)

    def close(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        if self._remove_listener is not None:
            with contextlib.suppress(Exception):
                self._remove_listener()
            self._remove_listener = None
        self.on_change()

    @property
    def closed(self) -> bool:
        return self.future.done()

    async def result(self) -> Any:
        return await self.future

    def _bind_cancel(self, kb: KeyBindings) -> None:
        """Escape and Ctrl+C close the panel unanswered (``None``)."""

        @kb.add("escape")
        @kb.add("c-c")
        def _cancel(event: KeyPressEvent) -> None:
            self.close(None)

    def _title_suffix(self) -> str:
        return f" ({self.remaining}s)" if self.remaining is not None else ""

    def _one_line_title(self) -> StyleAndTextTuples:
        return [("class:t-accent", f" {self.title}{self._title_suffix()}")]

    @staticmethod
    def _frame(
        title: Callable[[], StyleAndTextTuples], body: list[Any], hints: Callable[[], StyleAndTextTuples]
    ) -> HSplit:
        """The panel's layout: rules around the title, ``body`` and the key hints, blank lines between."""
        return HSplit(
            [
                _rule(),
                _blank(),
                Window(FormattedTextControl(title), dont_extend_height=True, wrap_lines=True),
                _blank(),
                *body,
                _blank(),
                Window(FormattedTextControl(hints), height=1),
                _blank(),
                _rule(),
            ]
        )


def _text_buffer(prefill: str | None, *, multiline: bool) -> Buffer:
    """An input buffer holding ``prefill`` with the cursor at its end."""
    buffer = Buffer(multiline=multiline)
    if prefill:
        buffer.text = prefill
        buffer.cursor_position = len(prefill)
    return buffer


def _rule() -> Window:
    return Window(char="─", height=1, style="class:border")


def _blank() -> Window:
    return Window(height=1)


def _hints(*pairs: tuple[str, str]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("", " ")]
    for index, (key, text) in enumerate(pairs):
        if index:
            out.append(("", "  "))
        out.append(("class:t-dim", key))
        out.append(("class:t-muted", f" {text}"))
    return out


class SelectPanel(Panel):
    """Pick one of ``items`` (filterable by typing when ``filterable``)."""

    def __init__(
        self,
        title: str,
        items: list[PickItem],
        *,
        filterable: bool = True,
        initial: Any = None,
        bold_title: bool = True,
        actions: dict[str, list[str]] | None = None,
        header: Callable[[], str] | None = None,
        query: str = "",
        on_highlight: Callable[[Any], None] | None = None,
        search_prompt: str = " Search: ",
        status: Callable[[], str] | None = None,
        ancestors: Callable[[Any], Iterable[Any]] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.title = title
        self.items = items
        self.on_highlight = on_highlight
        self.status = status
        self.ancestors = ancestors
        self._remembered: Any = None  # the tree's selection while no row matches
        self.filterable = filterable
        self.bold_title = bold_title
        self.header = header
        self.shown: list[PickItem] = list(items)
        self.query = Buffer(multiline=False)
        self.index = self._place_of(initial)
        if query and filterable:
            self.query.text = query
            self.query.cursor_position = len(query)
            self._filter()
        self.index = self._place_of(initial, self.index)
        self.query.on_text_changed += lambda _b: self._filter()
        kb = KeyBindings()
        self._bind_actions(kb, actions or {})

        @kb.add("up")
        @kb.add("c-p")
        def _up(event: KeyPressEvent) -> None:
            self.move(-1)

        @kb.add("down")
        @kb.add("c-n")
        def _down(event: KeyPressEvent) -> None:
            self.move(1)

        @kb.add("pageup")
        def _page_up(event: KeyPressEvent) -> None:
            self.move(-MAX_VISIBLE)

        @kb.add("pagedown")
        def _page_down(event: KeyPressEvent) -> None:
            self.move(MAX_VISIBLE)

        @kb.add("enter")
        def _choose(event: KeyPressEvent) -> None:
            if self.shown:
                self.close(self.shown[self.index].value)

        self._bind_cancel(kb)

        if not filterable:

            @kb.add("k")
            def _k(event: KeyPressEvent) -> None:
                self.move(-1)

            @kb.add("j")
            def _j(event: KeyPressEvent) -> None:
                self.move(1)

        self.kb = kb
        list_control = FormattedTextControl(self._list_fragments, focusable=not filterable, key_bindings=kb)
        query_control = BufferControl(
            self.query, key_bindings=kb, input_processors=[BeforeInput(search_prompt, style="class:t-muted")]
        )
        query_window = Window(query_control, height=1)
        body: list[Any] = [query_window] if filterable else []
        body.append(Window(list_control, height=Dimension(min=1), dont_extend_height=True, wrap_lines=False))
        self.container = self._frame(
            self._title_fragments,
            body,
            lambda: _hints(("↑↓", "navigate"), ("enter", "select"), ("escape", "cancel")),
        )
        self.focus = query_window if filterable else list_control

    def _place_of(self, initial: Any, default: int = 0) -> int:
        """The shown row of ``initial`` (the current item when ``None``); ``default`` when not shown,
        but in a tree (pi's /tree) its nearest shown ancestor's, else the last row."""
        for i, item in enumerate(self.shown):
            if (initial is not None and item.value == initial) or (initial is None and item.current):
                return i
        if self.ancestors is not None and initial is not None and self.shown:
            places = {item.value: i for i, item in enumerate(self.shown)}
            return next((places[v] for v in self.ancestors(initial) if v in places), len(self.shown) - 1)
        return default

    def _bind_actions(self, kb: KeyBindings, actions: dict[str, list[str]]) -> None:
        """Each action's keys close the selector with a :class:`PickAction`."""
        from piko.plugins.modes.interactive.keys import bind

        for name, keys in actions.items():

            def act(event: KeyPressEvent, name: str = name) -> None:
                selected = self.shown[self.index].value if self.shown else None
                self.close(PickAction(name=name, value=selected, query=self.query.text))

            bind(kb, list(keys), act, eager=True)

    def _title_fragments(self) -> StyleAndTextTuples:
        style = "class:t-accent bold" if self.bold_title else "class:t-accent"
        lines = (self.title + self._title_suffix()).split("\n")
        out: StyleAndTextTuples = []
        for i, line in enumerate(lines):
            if i:
                out.append(("", "\n"))
            out.append((style if i == 0 else "", f" {line}"))
        if self.header is not None:
            try:
                extra = str(self.header())
            except Exception as exc:
                extra = f"[header error: {exc}]"
            for line in extra.split("\n"):
                out.append(("", "\n"))
                out.append(("class:t-muted", f" {line}"))
        return out

    def _filter(self) -> None:
        query = self.query.text.strip()
        current = self.shown[self.index].value if self.shown and self.index < len(self.shown) else None
        if self.ancestors is not None:
            self._filter_tree(query, current)
        else:
            if query:
                self.shown = fuzzy_filter(self.items, query, lambda item: f"{item.label} {item.detail}")
            else:
                self.shown = list(self.items)
            self.index = (
                next((i for i, item in enumerate(self.shown) if item.value == current), 0) if not query else 0
            )
        self._highlighted()
        self.on_change()

    def _filter_tree(self, query: str, current: Any) -> None:
        """pi's /tree search: the rows holding every word of the query (any case), in tree order; the
        selection stays on its row, else its nearest shown ancestor, else the last row, and is
        remembered while no row matches."""
        assert self.ancestors is not None
        words = query.lower().split()
        self.shown = [
            item for item in self.items if all(w in f"{item.label} {item.detail}".lower() for w in words)
        ]
        if current is None:
            current = self._remembered
        if not self.shown:
            self._remembered = current
            self.index = 0
            return
        self._remembered = None
        self.index = self._place_of(current) if current is not None else len(self.shown) - 1

    def move(self, delta: int) -> None:
        if not self.shown:
            return
        self.index = max(0, min(len(self.shown) - 1, self.index + delta))
        self._highlighted()
        self.on_change()

    def _highlighted(self) -> None:
        """Tell ``on_highlight`` which row's value is highlighted now."""
        if self.on_highlight is not None and self.shown:
            self.on_highlight(self.shown[self.index].value)

    def _list_fragments(self) -> StyleAndTextTuples:
        if not self.shown:
            if self.status is not None:  # pi's /tree
                return [("class:t-muted", f"  No entries found\n  (0/0){self.status()}")]
            return [("class:t-muted", "   No matches")]
        start = max(0, min(self.index - MAX_VISIBLE // 2, len(self.shown) - MAX_VISIBLE))
        visible = self.shown[start : start + MAX_VISIBLE]
        out: StyleAndTextTuples = []
        filtering = bool(self.query.text.strip())
        for offset, item in enumerate(visible):
            selected = start + offset == self.index
            if out:
                out.append(("", "\n"))
            indent = "" if filtering else "  " * item.depth
            style = "class:t-accent" if selected else ""
            out.append((style, " → " if selected else "   "))
            out.append((style, indent))
            if filtering:
                out.extend(highlight_matches(item.label, self.query.text.strip(), style))
            else:
                out.append((style, item.label))
            if item.current:
                out.append(("class:t-success", " ✓"))
            if item.detail:
                out.append(("class:t-muted", f"  {item.detail}"))
        if self.status is not None:  # pi's /tree: always counted, the filter after the count
            out.append(("", "\n"))
            out.append(("class:t-muted", f"  ({self.index + 1}/{len(self.shown)}){self.status()}"))
        elif len(self.shown) > MAX_VISIBLE:
            out.append(("", "\n"))
            out.append(("class:t-muted", f"   ({self.index + 1}/{len(self.shown)})"))
        return out


class InputPanel(Panel):
    """One line of text (``placeholder`` shown while empty; ``password`` shows ``*`` per character)."""

    def __init__(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        prefill: str = "",
        password: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.title = title
        self.placeholder = placeholder or ""
        self.buffer = _text_buffer(prefill, multiline=False)
        kb = KeyBindings()

        @kb.add("enter")
        def _submit(event: KeyPressEvent) -> None:
            self.close(self.buffer.text)

        self._bind_cancel(kb)

        empty = Condition(lambda: not self.buffer.text)
        processors: list[Processor] = [PasswordProcessor()] if password else []
        window = Window(BufferControl(self.buffer, input_processors=processors, key_bindings=kb), height=1)
        placeholder_window = ConditionalContainer(
            Window(FormattedTextControl(lambda: [("class:t-dim", f" {self.placeholder}")]), height=1),
            filter=empty & Condition(lambda: bool(self.placeholder)),
        )
        self.container = self._frame(
            self._one_line_title,
            [HSplit([window, placeholder_window])],
            lambda: _hints(("enter", "submit"), ("escape", "cancel")),
        )
        self.focus = window


class EditorPanel(Panel):
    """Several lines of text: Enter submits, Shift+Enter / Ctrl+J add a line, Ctrl+G opens ``$EDITOR``."""

    def __init__(
        self,
        title: str,
        prefill: str | None = None,
        *,
        external: Callable[[Buffer], Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.title = title
        self.buffer = _text_buffer(prefill, multiline=True)
        kb = KeyBindings()

        @kb.add("enter")
        def _submit(event: KeyPressEvent) -> None:
            self.close(self.buffer.text)

        @kb.add("c-j")
        @kb.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            self.buffer.newline(copy_margin=False)

        from piko.plugins.modes.interactive.keys import to_prompt_toolkit

        kb.add(*to_prompt_toolkit("shift+enter"))(_newline)

        self._bind_cancel(kb)

        if external is not None:

            @kb.add("c-g")
            def _external(event: KeyPressEvent) -> None:
                external(self.buffer)

        editor = Window(
            BufferControl(self.buffer, key_bindings=kb), height=Dimension(min=3, max=15), wrap_lines=True
        )
        external_hint: StyleAndTextTuples = (
            [("", "  "), ("class:t-dim", "ctrl+g"), ("class:t-muted", " external editor")] if external else []
        )
        self.container = self._frame(
            self._one_line_title,
            [editor],
            lambda: (
                _hints(("enter", "submit"), ("shift+enter", "newline"), ("escape", "cancel")) + external_hint
            ),
        )
        self.focus = editor


def match_positions(text: str, query: str) -> set[int]:
    """Where the characters of ``query`` (its words, in order, case-insensitive) first occur in ``text``."""
    lowered = text.lower()
    found: set[int] = set()
    for word in query.lower().split():
        at = lowered.find(word)
        if at >= 0:  # a whole word: highlight it where it stands
            found.update(range(at, at + len(word)))
            continue
        position = 0
        for ch in word:
            at = lowered.find(ch, position)
            if at < 0:
                break
            found.add(at)
            position = at + 1
    return found


def highlight_matches(text: str, query: str, style: str) -> StyleAndTextTuples:
    """``text`` as fragments with the characters matching ``query`` in bold and underlined."""
    positions = match_positions(text, query) if query else set()
    if not positions:
        return [(style, text)]
    out: StyleAndTextTuples = []
    mark = f"{style} bold underline".strip()
    for index, ch in enumerate(text):
        wanted = mark if index in positions else style
        if out and out[-1][0] == wanted:
            out[-1] = (wanted, out[-1][1] + ch)
        else:
            out.append((wanted, ch))
    return out


def pick_items(options: list[Any]) -> list[PickItem]:
    """``ui.select`` options (texts, or dicts with ``label``/``value``) as selector items."""
    items: list[PickItem] = []
    for option in options:
        if isinstance(option, PickItem):
            items.append(option)
        elif isinstance(option, dict):
            label = str(option.get("label", option.get("value", "")))
            items.append(
                PickItem(
                    label=label, value=option.get("value", label), detail=str(option.get("description") or "")
                )
            )
        else:
            items.append(PickItem(label=str(option), value=option))
    return items
