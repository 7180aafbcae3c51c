"""Extensions' raw terminal input listeners (``ctx.ui.on_terminal_input``), ahead of the key bindings.

A listener gets each input's raw text (a key's escape sequence, a typed character, a whole
bracketed paste) before the editor sees it, in subscription order, and returns nothing to let it
through, ``{"consume": True}`` to swallow it, or ``{"data": "..."}`` to hand on other input in its
place (parsed like terminal input). A listener that fails is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.key_binding.key_processor import KeyProcessor
from prompt_toolkit.keys import Keys

from piko.lib.subscriptions import subscribe

log = logging.getLogger(__name__)

TerminalInputHandler = Callable[[str], Any]


def _field(answer: Any, name: str) -> Any:
    return answer.get(name) if isinstance(answer, dict) else getattr(answer, name, None)


def _parse(data: str) -> list[KeyPress]:
    presses: list[KeyPress] = []
    parser = Vt100Parser(presses.append)
    parser.feed(data)
    parser.flush()
    return presses


class TerminalInputListeners:
    """The subscribed listeners, and the filter they put in front of a key processor."""

    def __init__(self) -> None:
        self._handlers: list[TerminalInputHandler] = []

    def add(self, handler: TerminalInputHandler) -> Callable[[], None]:
        """Subscribe ``handler``; the function returned unsubscribes it (again: nothing)."""
        return subscribe(self._handlers, handler)

    def filter(self, presses: list[KeyPress]) -> list[KeyPress]:
        """``presses`` as the listeners leave them."""
        if not self._handlers:
            return presses
        out: list[KeyPress] = []
        for press in presses:
            out.extend(self._one(press))
        return out

    def _one(self, press: KeyPress) -> list[KeyPress]:
        if press.key == Keys.CPRResponse:  # the terminal answering a cursor query: not input
            return [press]
        data = press.data
        for handler in list(self._handlers):
            try:
                answer = handler(data)
            except Exception as exc:
                log.debug(
                    "terminal input listener failed: %s", exc
                )  # not on the terminal: it would tear the screen
                continue
            if answer is None or hasattr(answer, "__await__"):
                if hasattr(answer, "close"):
                    answer.close()  # a coroutine cannot answer in time; pi's listeners are sync
                continue
            if _field(answer, "consume"):
                return []
            replaced = _field(answer, "data")
            if isinstance(replaced, str) and replaced != data:
                data = replaced
        if data == press.data:
            return [press]
        if press.key == Keys.BracketedPaste:
            return [KeyPress(Keys.BracketedPaste, data)]
        return _parse(data)

    def install(self, processor: KeyProcessor) -> None:
        """Put the listeners in front of ``processor`` (every read of input goes through ``feed_multiple``)."""
        feed_multiple = processor.feed_multiple

        def filtered(key_presses: list[KeyPress], first: bool = False) -> None:
            feed_multiple(self.filter(key_presses), first=first)

        processor.feed_multiple = filtered  # type: ignore[method-assign]
