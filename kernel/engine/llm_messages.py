"""Turning agent messages into the messages a provider understands (user, assistant, tool result).

Custom messages, user shell runs and summaries are the agent's own kinds; the model sees each
as a user message. A ``!!`` shell run (``exclude_from_context``) is not sent at all.
"""

from __future__ import annotations

from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import Message
from piko.data.messages import TextContent
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage

COMPACTION_SUMMARY_PREFIX = (
    "Earlier parts of this conversation were condensed into this summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "This conversation returned from another branch, summarized here:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"


def bash_execution_text(message: BashExecutionMessage) -> str:
    """How a user's shell run reads to the model."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code not in (None, 0):
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


IMAGES_BLOCKED = "Image reading is disabled."


def block_images(messages: list[Message]) -> list[Message]:
    """Replace image blocks of user messages and tool results by a note (settings ``images.blockImages``)."""
    from piko.data.messages import ImageContent
    from piko.lib.records import replace

    out: list[Message] = []
    for message in messages:
        content = getattr(message, "content", None)
        if isinstance(message, (UserMessage, ToolResultMessage)) and isinstance(content, list):
            if any(isinstance(b, ImageContent) for b in content):
                blocks: list[Any] = []
                for block in content:
                    if isinstance(block, ImageContent):
                        if (
                            blocks
                            and isinstance(blocks[-1], TextContent)
                            and blocks[-1].text == IMAGES_BLOCKED
                        ):
                            continue
                        block = TextContent(text=IMAGES_BLOCKED)
                    blocks.append(block)
                message = replace(message, content=blocks)
        out.append(message)
    return out


def convert_to_llm(messages: list[Any]) -> list[Message]:
    """The provider-facing list for ``messages`` (unknown roles are dropped)."""
    out: list[Message] = []
    for m in messages:
        if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage)):
            out.append(m)
        elif isinstance(m, BashExecutionMessage):
            if not m.exclude_from_context:
                out.append(
                    UserMessage(content=[TextContent(text=bash_execution_text(m))], timestamp=m.timestamp)
                )
        elif isinstance(m, CustomMessage):
            content: list[Any] = (
                [TextContent(text=m.content)] if isinstance(m.content, str) else list(m.content)
            )
            out.append(UserMessage(content=content, timestamp=m.timestamp))
        elif isinstance(m, BranchSummaryMessage):
            text = BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX
            out.append(UserMessage(content=[TextContent(text=text)], timestamp=m.timestamp))
        elif isinstance(m, CompactionSummaryMessage):
            text = COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX
            out.append(UserMessage(content=[TextContent(text=text)], timestamp=m.timestamp))
    return out
