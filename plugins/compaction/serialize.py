"""The conversation as plain text for a summarizer (pi's ``serializeConversation`` shape).

Sending the history as one block of text, not as chat turns, keeps the summarizing model from
answering it. Each message becomes a ``[User]:``, ``[Assistant thinking]:``, ``[Assistant]:``,
``[Assistant tool calls]:`` or ``[Tool result]:`` paragraph; tool results are cut to 2000
characters, since their full text is rarely needed for a summary.
"""

from __future__ import annotations

from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.engine.llm_messages import convert_to_llm
from piko.lib import jsonio

TOOL_RESULT_MAX_CHARS = 2000


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """The start of ``text`` with a note of how much was left out."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n\n[... {len(text) - max_chars} more characters truncated]"


def _joined_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content or [] if isinstance(block, TextContent))


def _json(value: Any) -> str:
    try:
        return jsonio.dumps(value)
    except (TypeError, ValueError):
        return jsonio.dumps(str(value))


def _tool_call_text(call: ToolCall) -> str:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    listed = ", ".join(f"{key}={_json(value)}" for key, value in arguments.items())
    return f"{call.name}({listed})"


def serialize_messages(messages: list[Any]) -> str:
    """Provider messages (user, assistant, tool result) as summarizer text."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = _joined_text(message.content)
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            texts: list[str] = []
            thoughts: list[str] = []
            calls: list[str] = []
            for block in message.content:
                if isinstance(block, TextContent):
                    texts.append(block.text)
                elif isinstance(block, ThinkingContent):
                    thoughts.append(block.thinking)
                elif isinstance(block, ToolCall):
                    calls.append(_tool_call_text(block))
            if thoughts:
                parts.append("[Assistant thinking]: " + "\n".join(thoughts))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif isinstance(message, ToolResultMessage):
            text = _joined_text(message.content)
            if text:
                parts.append(f"[Tool result]: {truncate_for_summary(text)}")
    return "\n\n".join(parts)


def serialize_conversation(messages: list[Any]) -> str:
    """Agent messages (summaries, shell runs and custom messages included) as summarizer text."""
    return serialize_messages(convert_to_llm(messages))
