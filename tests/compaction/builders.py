"""Message makers and branch builders for the compaction tests (real session managers, in memory)."""

from __future__ import annotations

from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.sessions.manager import SessionManager

T0 = 1_790_000_000_000


def words(word: str, tokens: int) -> str:
    """Text starting with ``word`` that pi estimates at exactly ``tokens`` tokens (4 characters a token)."""
    size = 4 * tokens
    assert len(word) < size
    return (word + " " + "." * size)[:size]


def user(text: str, at: int = 0) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=T0 + at)


def assistant(
    text: str = "", *, calls: list[ToolCall] | None = None, at: int = 0, total: int = 0
) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    content.extend(calls or [])
    return AssistantMessage(
        content=content,
        api="openai-completions",
        provider="mock",
        model="mock-1",
        usage=Usage(input=total, total_tokens=total),
        stop_reason="toolUse" if calls else "stop",
        timestamp=T0 + at,
    )


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def result(call_id: str, text: str, name: str = "read", at: int = 0) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], timestamp=T0 + at
    )


def branch_of(*messages: Any) -> tuple[SessionManager, list[str]]:
    """An in-memory session with ``messages`` appended in order; returns it and the entry ids."""
    manager = SessionManager.in_memory("/tmp/project")
    ids = [manager.append_message(m) for m in messages]
    return manager, ids


def exchanges(count: int, user_tokens: int = 100, assistant_tokens: int = 100) -> list[Any]:
    """``count`` question/answer pairs: ``u1``, ``a1``, ``u2``, ``a2``... of the given token sizes."""
    out: list[Any] = []
    for i in range(1, count + 1):
        out += [user(words(f"u{i}", user_tokens)), assistant(words(f"a{i}", assistant_tokens))]
    return out
