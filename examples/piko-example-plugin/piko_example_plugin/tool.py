"""The ``word_count`` tool's code (imported the first time the model calls the tool)."""

from __future__ import annotations

from typing import Any

from attrs import define


@define(frozen=True)
class Counts:
    """Words, lines and characters of a text."""

    words: int
    lines: int
    characters: int

    def summary(self) -> str:
        return f"{self.words} words, {self.lines} lines, {self.characters} characters"


def count(text: str) -> Counts:
    """Count like ``wc``: words are runs of non-space characters; a last line without newline counts."""
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return Counts(words=len(text.split()), lines=lines, characters=len(text))


def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> Any:
    """``execute(tool_call_id, params, signal, on_update, ctx)``, the signature of every piko tool."""
    from piko import TextContent
    from piko import ToolResult

    text = params.get("text")
    if not isinstance(text, str):
        return ToolResult(content=[TextContent(text="word_count needs a 'text' string")], is_error=True)
    counts = count(text)
    return ToolResult(
        content=[TextContent(text=counts.summary())],
        details={"words": counts.words, "lines": counts.lines, "characters": counts.characters},
    )
