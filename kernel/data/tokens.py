"""Token estimates for context size checks (about four characters a token, exactly as pi estimates)."""

from __future__ import annotations

from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.lib.records import Record
from piko.lib.text import js_length

IMAGE_CHARS = 4800  # an image block counts as 4800 characters (1200 tokens)


def _arguments_length(arguments: Any) -> int:
    from piko.lib import jsonio

    try:
        return js_length(jsonio.dumps(arguments))
    except (TypeError, ValueError):
        return js_length(str(arguments))


def _text_chars(content: Any, *, images: bool) -> int:
    if isinstance(content, str):
        return js_length(content)
    total = 0
    for block in content or []:
        if isinstance(block, TextContent):
            total += js_length(block.text)
        elif images and isinstance(block, ImageContent):
            total += IMAGE_CHARS
    return total


def _ceil_quarter(chars: int) -> int:
    return (chars + 3) // 4


def estimate_message_tokens(message: Any) -> int:
    """Rough token count of one message (pi's ``estimateTokens``: characters / 4, rounded up).

    User messages count their text only; tool results and custom messages count text and
    1200 tokens an image; assistant messages count text, thinking, and each tool call's name and
    JSON arguments; shell runs their command and output; summaries their summary.
    """
    if isinstance(message, UserMessage):
        return _ceil_quarter(_text_chars(message.content, images=False))
    if isinstance(message, AssistantMessage):
        chars = 0
        for block in message.content:
            if isinstance(block, TextContent):
                chars += js_length(block.text)
            elif isinstance(block, ThinkingContent):
                chars += js_length(block.thinking)
            elif isinstance(block, ToolCall):
                chars += js_length(block.name) + _arguments_length(block.arguments)
        return _ceil_quarter(chars)
    if isinstance(message, (ToolResultMessage, CustomMessage)):
        return _ceil_quarter(_text_chars(message.content, images=True))
    if isinstance(message, BashExecutionMessage):
        return _ceil_quarter(js_length(message.command) + js_length(message.output))
    if isinstance(message, (BranchSummaryMessage, CompactionSummaryMessage)):
        return _ceil_quarter(js_length(message.summary))
    return 0


def usage_tokens(usage: Usage) -> int:
    """Context size a response reports: total tokens, or the sum of its parts."""
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


class ContextEstimate(Record, kw_only=False, frozen=True):
    """How full the context is: the last reported usage plus estimates for what followed it."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None  # the message whose usage was used; None when none reported any


def _has_usage(message: Any) -> bool:
    return (
        isinstance(message, AssistantMessage)
        and message.stop_reason not in ("error", "aborted")
        and message.usage is not None
    )


def context_estimate(messages: list[Any]) -> ContextEstimate:
    """pi's ``estimateContextTokens``: the last valid response's usage plus estimates after it."""
    for index in range(len(messages) - 1, -1, -1):
        if _has_usage(messages[index]):
            base = usage_tokens(messages[index].usage)
            trailing = sum(estimate_message_tokens(m) for m in messages[index + 1 :])
            return ContextEstimate(base + trailing, base, trailing, index)
    estimated = sum(estimate_message_tokens(m) for m in messages)
    return ContextEstimate(estimated, 0, estimated, None)


def estimate_context_tokens(messages: list[Any]) -> int:
    """The last response's reported size plus estimates for what came after it."""
    return context_estimate(messages).tokens
