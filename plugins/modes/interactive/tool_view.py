"""What is known about one tool call while it streams, runs and ends (no drawing: see :mod:`.tool_render`)."""

from __future__ import annotations

import os
import re
import time
from typing import Any

from attrs import define
from attrs import field

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@define(kw_only=True)
class ToolView:
    """What is known about one tool call: its arguments, whether it runs, and its result."""

    tool_call_id: str
    name: str
    _args: Any = field(factory=dict, alias="args")
    # while the arguments stream: the tool call block, read when the view is drawn (at most once
    # a frame) instead of parsing the partial arguments on every delta
    args_source: Any = None
    args_complete: bool = False
    started_at: float | None = None
    ended_at: float | None = None
    content: list[Any] | None = None  # result content blocks (text/image), partial or final
    details: Any = None
    is_error: bool = False
    is_partial: bool = True

    @property
    def args(self) -> Any:
        source = self.args_source
        return source.arguments if source is not None else self._args

    @args.setter
    def args(self, value: Any) -> None:
        self._args = value
        self.args_source = None

    @property
    def has_result(self) -> bool:
        return self.content is not None

    def set_result(self, result: Any, *, partial: bool, is_error: bool = False) -> None:
        content, details = _content_and_details(result)
        self.content, self.details = content, details
        self.is_partial = partial
        self.is_error = is_error
        if not partial:
            self.ended_at = self.ended_at or time.monotonic()


def _content_and_details(result: Any) -> tuple[list[Any], Any]:
    if result is None:
        return [], None
    if isinstance(result, dict):
        return list(result.get("content") or []), result.get("details")
    return list(getattr(result, "content", None) or []), getattr(result, "details", None)


def text_output(content: list[Any] | None) -> str:
    """The text blocks of a result (colour codes and carriage returns removed), images as a note."""
    parts: list[str] = []
    images = 0
    for block in content or []:
        if isinstance(block, dict):
            kind, text = block.get("type"), block.get("text")
        else:
            kind = getattr(block, "TYPE", None)
            text = getattr(block, "text", None)
        if kind == "text" and isinstance(text, str):
            parts.append(_ANSI.sub("", text).replace("\r", ""))
        elif kind == "image":
            images += 1
    out = "\n".join(parts)
    if images:
        note = "\n".join("[image]" for _ in range(images))
        out = f"{out}\n{note}" if out else note
    return out


def shorten_path(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "~" and path.startswith(home):
        return "~" + path[len(home) :]
    return path
