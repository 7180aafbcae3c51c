"""The ``oneline`` run mode: runs one prompt and prints every agent event as a one-line summary.

``pi --mode oneline [--oneline-width N] "prompt"`` (or the prompt on piped stdin). It is written
against piko's agent-session API, as any mode is::

    session = await app.create_agent_session()
    session.subscribe(listener)        # listener(event) gets the objects of piko.data.events
    await session.prompt(text)
    await session.shutdown()
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any
from typing import TextIO

from piko_example_plugin import DEFAULT_WIDTH
from piko_example_plugin import WIDTH_FLAG


async def run(app: Any) -> int:
    """The mode's entry: returns the process exit code (1 when the model or the session failed)."""
    text = prompt_text(app)
    if not text:
        sys.stderr.write('Error: the oneline mode needs a prompt: pi --mode oneline "your prompt"\n')
        return 1
    width = parse_width(app.flag_values.get(WIDTH_FLAG))
    printer = OnelinePrinter(sys.stdout, width)
    try:
        session = await app.create_agent_session()
    except Exception as exc:  # no model, no key: one clear line, not a traceback
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    session.subscribe(printer)
    try:
        await session.prompt(text)
    except Exception as exc:
        sys.stderr.write(f"Error: {exc}\n")
        printer.failed = True
    finally:
        await session.shutdown()
    return 1 if printer.failed else 0


def prompt_text(app: Any) -> str:
    """The message arguments joined by spaces (``@file`` arguments are left out), else piped stdin."""
    words = [str(a) for a in app.options.get("args") or () if not str(a).startswith("@")]
    if words:
        return " ".join(words).strip()
    if not sys.stdin.isatty():
        return sys.stdin.read().strip()
    return ""


def parse_width(value: Any) -> int:
    """The ``--oneline-width`` value; anything that is not a number of at least 20 gives the default."""
    try:
        width = int(str(value))
    except (TypeError, ValueError):
        return DEFAULT_WIDTH
    return width if width >= 20 else DEFAULT_WIDTH


class OnelinePrinter:
    """A session listener writing ``summarize(event)`` lines; notes whether the run failed."""

    def __init__(self, stream: TextIO, width: int = DEFAULT_WIDTH) -> None:
        self.stream = stream
        self.width = width
        self.failed = False

    def __call__(self, event: Any) -> None:
        if event_type(event) == "message_end":
            message = getattr(event, "message", None)
            if getattr(message, "stop_reason", None) in ("error", "aborted"):
                self.failed = True
        self.stream.write(summarize(event, self.width) + "\n")
        self.stream.flush()


# ---------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------


def event_type(event: Any) -> str:
    return str(getattr(event, "TYPE", None) or getattr(event, "type", None) or type(event).__name__)


def summarize(event: Any, width: int = DEFAULT_WIDTH) -> str:
    """``<type> <details>`` on one line, at most ``width`` characters."""
    kind = event_type(event)
    details = _DETAILS.get(kind, _generic)(event)
    return clip(f"{kind} {details}".rstrip(), width)


def clip(text: str, width: int) -> str:
    """One line (newlines shown as ``⏎``) of at most ``width`` characters."""
    line = " ".join(text.replace("\r", "").replace("\n", " ⏎ ").split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def _role(message: Any) -> str:
    return str(getattr(message, "ROLE", None) or getattr(message, "role", None) or "?")


def _content_preview(content: Any) -> str:
    if isinstance(content, str):
        return repr(content)
    parts: list[str] = []
    for block in content or []:
        kind = getattr(block, "TYPE", None)
        if kind == "text":
            parts.append(repr(block.text))
        elif kind == "thinking":
            parts.append(f"(thinking {len(block.thinking)} chars)")
        elif kind == "toolCall":
            parts.append(f"{block.name}({_compact(block.arguments)})")
        elif kind == "image":
            parts.append(f"(image {block.mime_type})")
    return " ".join(parts)


def message_preview(message: Any) -> str:
    """``role: content`` of any message; an assistant error shows its error message."""
    if message is None:
        return ""
    role = _role(message)
    if role == "assistant" and getattr(message, "stop_reason", None) in ("error", "aborted"):
        return f"{role} [{message.stop_reason}] {message.error_message or ''}"
    if role == "toolResult":
        status = "error" if message.is_error else "ok"
        return f"{role} {message.tool_name} {status}: {_content_preview(message.content)}"
    preview = _content_preview(getattr(message, "content", None))
    return f"{role}: {preview}" if preview else role


def _message(event: Any) -> str:
    return message_preview(getattr(event, "message", None))


def _update(event: Any) -> str:
    inner = getattr(event, "assistant_message_event", None)
    if inner is None:
        return ""
    delta = getattr(inner, "delta", None)
    return f"{inner.type} {delta!r}" if delta else str(inner.type)


def _result_preview(result: Any) -> str:
    if result is None:
        return ""
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    return _content_preview(content)


def _tool_start(event: Any) -> str:
    return f"{event.tool_name} {_compact(event.args)}"


def _tool_update(event: Any) -> str:
    return f"{event.tool_name} {_result_preview(event.partial_result)}"


def _tool_end(event: Any) -> str:
    status = "error" if event.is_error else "ok"
    return f"{event.tool_name} {status}: {_result_preview(event.result)}"


def _agent_end(event: Any) -> str:
    text = f"{len(event.messages)} messages"
    error = getattr(event, "error", None)
    return f"{text}, error: {error}" if error else text


def _turn(event: Any) -> str:
    text = f"#{getattr(event, 'turn_index', 0)}"
    results = getattr(event, "tool_results", None)
    return f"{text}, {len(results)} tool results" if results else text


def _generic(event: Any) -> str:
    from piko.data.events import event_items

    fields = []
    for name, value in event_items(event):
        if value is not None and name != "signal":
            fields.append(f"{name}={_compact(value)}")
    return " ".join(fields)


_DETAILS: dict[str, Callable[[Any], str]] = {
    "agent_start": lambda e: "",
    "agent_end": _agent_end,
    "turn_start": _turn,
    "turn_end": _turn,
    "message_start": _message,
    "message_update": _update,
    "message_end": _message,
    "tool_execution_start": _tool_start,
    "tool_execution_update": _tool_update,
    "tool_execution_end": _tool_end,
}
