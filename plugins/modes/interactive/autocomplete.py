"""Extensions' autocomplete providers (``ctx.ui.add_autocomplete_provider``) stacked on the editor's own.

A factory gets the provider below it (``current``: at first the editor's slash-command, ``@file``
and path completion) and returns one with pi's members, snake_case or camelCase, as an object or
a dict: ``get_suggestions(lines, cursor_line, cursor_col, options)`` (sync or async) giving
``{"prefix", "items": [{"value", "label", "description"}]}`` or ``None``,
``apply_completion(lines, cursor_line, cursor_col, item, prefix)`` giving ``{"lines",
"cursor_line", "cursor_col"}``, and ``trigger_characters`` (say ``["#"]``: typing a word that
starts with one opens the menu by itself). Factories apply in the order they were added; a
provider that fails shows no completions for that keystroke.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.completion import Completer
from prompt_toolkit.completion import Completion
from prompt_toolkit.document import Document

log = logging.getLogger(__name__)

SUGGESTION_TIMEOUT_S = 5.0
"""How long an async ``get_suggestions`` may take before the keystroke shows no completions."""


def _member(provider: Any, snake: str, camel: str) -> Any:
    if isinstance(provider, dict):
        return provider.get(snake, provider.get(camel))
    return getattr(provider, snake, None) or getattr(provider, camel, None)


def _get(value: Any, *names: str) -> Any:
    for name in names:
        found = value.get(name) if isinstance(value, dict) else getattr(value, name, None)
        if found is not None:
            return found
    return None


class BuiltinProvider:
    """The editor's own completion, in the shape of pi's ``AutocompleteProvider``."""

    trigger_characters: tuple[str, ...] = ()

    def __init__(self, completer: Completer) -> None:
        self._completer = completer

    def get_suggestions(
        self, lines: list[str], cursor_line: int, cursor_col: int, options: Any = None
    ) -> dict[str, Any] | None:
        document = _document(lines, cursor_line, cursor_col)
        force = bool(_get(options or {}, "force"))
        completions = list(
            self._completer.get_completions(document, CompleteEvent(completion_requested=force))
        )
        if not completions:
            return None
        before = document.text_before_cursor
        prefix = before[len(before) + completions[0].start_position :]
        items = [
            {"value": c.text, "label": c.display_text, "description": c.display_meta_text}
            for c in completions
        ]
        return {"prefix": prefix, "items": items}

    def apply_completion(
        self, lines: list[str], cursor_line: int, cursor_col: int, item: Any, prefix: str
    ) -> dict[str, Any]:
        line = lines[cursor_line] if cursor_line < len(lines) else ""
        start = cursor_col - len(prefix) if line[:cursor_col].endswith(prefix) else cursor_col
        value = str(_get(item, "value") or "")
        changed = list(lines)
        changed[cursor_line] = line[:start] + value + line[cursor_col:]
        return {"lines": changed, "cursor_line": cursor_line, "cursor_col": start + len(value)}

    def should_trigger_file_completion(self, lines: list[str], cursor_line: int, cursor_col: int) -> bool:
        return True

    # pi's names, for providers written from its docs
    getSuggestions = get_suggestions
    applyCompletion = apply_completion
    shouldTriggerFileCompletion = should_trigger_file_completion


class ExtensionProvider:
    """An extension's provider (object or dict), answering both spellings of pi's members."""

    def __init__(self, provider: Any, below: Any) -> None:
        self._provider = provider
        self._below = below
        triggers = _member(provider, "trigger_characters", "triggerCharacters") or ()
        self.trigger_characters = tuple(str(t) for t in triggers if isinstance(t, str) and t)

    def get_suggestions(
        self, lines: list[str], cursor_line: int, cursor_col: int, options: Any = None
    ) -> Any:
        method = _member(self._provider, "get_suggestions", "getSuggestions")
        if not callable(method):
            return self._below.get_suggestions(lines, cursor_line, cursor_col, options)
        return method(lines, cursor_line, cursor_col, options if options is not None else {})

    def apply_completion(
        self, lines: list[str], cursor_line: int, cursor_col: int, item: Any, prefix: str
    ) -> Any:
        method = _member(self._provider, "apply_completion", "applyCompletion")
        if not callable(method):
            return self._below.apply_completion(lines, cursor_line, cursor_col, item, prefix)
        return method(lines, cursor_line, cursor_col, item, prefix)

    def should_trigger_file_completion(self, lines: list[str], cursor_line: int, cursor_col: int) -> bool:
        method = _member(self._provider, "should_trigger_file_completion", "shouldTriggerFileCompletion")
        return bool(method(lines, cursor_line, cursor_col)) if callable(method) else True

    getSuggestions = get_suggestions
    applyCompletion = apply_completion
    shouldTriggerFileCompletion = should_trigger_file_completion


def _document(lines: list[str], cursor_line: int, cursor_col: int) -> Document:
    offset = sum(len(line) + 1 for line in lines[:cursor_line]) + cursor_col
    return Document("\n".join(lines), cursor_position=offset)


class StackedCompleter(Completer):
    """The editor's completer: its own, or the top of the extensions' stack over it."""

    def __init__(self, builtin: Completer, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._builtin = builtin
        self._loop = loop
        self._factories: list[Callable[[Any], Any]] = []
        self._top: Any = None
        self.trigger_characters: frozenset[str] = frozenset()

    def add(self, factory: Callable[[Any], Any]) -> None:
        """Stack ``factory``'s provider on the others (it is given the one below as ``current``)."""
        provider: Any = self._top or BuiltinProvider(self._builtin)
        provider = ExtensionProvider(factory(provider), provider)  # a failing factory raises to its caller
        self._factories.append(factory)
        self._top = provider
        self.trigger_characters = self.trigger_characters | set(provider.trigger_characters)

    def _resolve(self, value: Any) -> Any:
        if not hasattr(value, "__await__"):
            return value
        loop = self._loop
        if loop is not None and loop.is_running():
            return asyncio.run_coroutine_threadsafe(_awaited(value), loop).result(SUGGESTION_TIMEOUT_S)
        return asyncio.run(_awaited(value))

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        top = self._top
        if top is None:
            yield from self._builtin.get_completions(document, complete_event)
            return
        lines = document.text.split("\n")
        row, col = document.cursor_position_row, document.cursor_position_col
        try:
            found = self._resolve(
                top.get_suggestions(lines, row, col, {"force": complete_event.completion_requested})
            )
            items = list(_get(found, "items") or []) if found else []
            prefix = str(_get(found, "prefix") or "") if found else ""
            completions = [self._completion(top, document, lines, row, col, item, prefix) for item in items]
        except Exception as exc:
            log.debug(
                "autocomplete provider failed: %s", exc
            )  # not on the terminal: it would tear the screen
            return
        yield from (c for c in completions if c is not None)

    def _completion(
        self, top: Any, document: Document, lines: list[str], row: int, col: int, item: Any, prefix: str
    ) -> Completion | None:
        value = _get(item, "value")
        if not isinstance(value, str):
            return None
        label = str(_get(item, "label") or value)
        description = str(_get(item, "description") or "")
        applied = self._resolve(top.apply_completion(lines, row, col, item, prefix))
        new_lines = _get(applied, "lines") if applied else None
        if isinstance(new_lines, list):
            new_row = int(_get(applied, "cursor_line", "cursorLine") or 0)
            new_col = int(_get(applied, "cursor_col", "cursorCol") or 0)
            changed = _document([str(x) for x in new_lines], new_row, new_col)
            before, after = document.text_before_cursor, document.text_after_cursor
            if changed.text_after_cursor == after:  # expressible as a replacement before the cursor
                new_before = changed.text_before_cursor
                common = 0
                while common < min(len(before), len(new_before)) and before[common] == new_before[common]:
                    common += 1
                return Completion(
                    new_before[common:],
                    start_position=common - len(before),
                    display=label,
                    display_meta=description,
                )
        return Completion(value, start_position=-len(prefix), display=label, display_meta=description)


async def _awaited(value: Any) -> Any:
    return await value
