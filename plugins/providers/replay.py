"""Replaying a conversation to a provider: pi's cross-provider rules (transformMessages), lone
surrogates removed, JSON written as JavaScript writes it. Pure functions, no I/O."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
from piko.data.messages import Message
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.lib.records import replace

_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (they make request bodies invalid); keep paired ones."""
    if not _SURROGATE.search(text):
        return text
    # join valid high+low pairs into one code point, then drop what is left unpaired
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub("", joined)


# ---------------------------------------------------------------------------
# Cross-provider replay (pi's transformMessages)
# ---------------------------------------------------------------------------

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"


def _replace_images(content: list[Any], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_placeholder:
                result.append(TextContent(text=placeholder))
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = isinstance(block, TextContent) and block.text == placeholder
    return result


def _downgrade_images(messages: Iterable[Message], model: Model) -> list[Message]:
    if "image" in model.input:
        return list(messages)
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, UserMessage) and isinstance(msg.content, list):
            msg = replace(msg, content=_replace_images(msg.content, NON_VISION_USER_IMAGE_PLACEHOLDER))
        elif isinstance(msg, ToolResultMessage):
            msg = replace(msg, content=_replace_images(msg.content, NON_VISION_TOOL_IMAGE_PLACEHOLDER))
        out.append(msg)
    return out


def transform_messages(
    messages: Iterable[Message],
    model: Model,
    normalize_tool_call_id: Callable[[str, Model, AssistantMessage], str] | None = None,
) -> list[Message]:
    """History made acceptable to ``model``, whichever provider produced it (pi's rules).

    Images become placeholders for text-only models; thinking from another model becomes text
    (redacted thinking is dropped); tool call ids are normalised by ``normalize_tool_call_id``
    and tool results follow; errored or aborted assistant turns are skipped; tool calls left
    without a result get a synthetic ``No result provided`` error result. A tool result that
    answers no pending tool call (its call was lost, or it answers one twice) is dropped:
    providers reject it. pi sends it; the session reports such damage when it loads.
    """
    id_map: dict[str, str] = {}
    transformed: list[Message] = []
    for msg in _downgrade_images(messages, model):
        if isinstance(msg, ToolResultMessage):
            mapped = id_map.get(msg.tool_call_id)
            if mapped and mapped != msg.tool_call_id:
                msg = replace(msg, tool_call_id=mapped)
            transformed.append(msg)
            continue
        if not isinstance(msg, AssistantMessage):
            transformed.append(msg)
            continue
        same_model = msg.provider == model.provider and msg.api == model.api and msg.model == model.id
        content: list[Any] = []
        for block in msg.content:
            if isinstance(block, ThinkingContent):
                if block.redacted:
                    if same_model:
                        content.append(block)
                    continue
                if same_model and block.thinking_signature:
                    content.append(block)
                    continue
                if not block.thinking or not block.thinking.strip():
                    continue
                content.append(block if same_model else TextContent(text=block.thinking))
            elif isinstance(block, TextContent):
                content.append(block if same_model else TextContent(text=block.text))
            elif isinstance(block, ToolCall):
                call = block
                if not same_model and call.thought_signature:
                    call = replace(call, thought_signature=None)
                if not same_model and normalize_tool_call_id is not None:
                    new_id = normalize_tool_call_id(call.id, model, msg)
                    if new_id != call.id:
                        id_map[call.id] = new_id
                        call = replace(call, id=new_id)
                content.append(call)
            else:
                content.append(block)
        transformed.append(replace(msg, content=content))

    result: list[Message] = []
    pending: list[ToolCall] = []
    seen_results: set[str] = set()

    def flush_orphans() -> None:
        nonlocal pending, seen_results
        for call in pending:
            if call.id not in seen_results:
                result.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                        timestamp=int(time.time() * 1000),
                    )
                )
        pending = []
        seen_results = set()

    for msg in transformed:
        if isinstance(msg, AssistantMessage):
            flush_orphans()
            if msg.stop_reason in ("error", "aborted"):
                continue
            calls = [b for b in msg.content if isinstance(b, ToolCall)]
            if calls:
                pending = calls
                seen_results = set()
            result.append(msg)
        elif isinstance(msg, ToolResultMessage):
            if msg.tool_call_id in seen_results or all(c.id != msg.tool_call_id for c in pending):
                continue
            seen_results.add(msg.tool_call_id)
            result.append(msg)
        elif isinstance(msg, UserMessage):
            flush_orphans()
            result.append(msg)
        else:
            result.append(msg)
    flush_orphans()
    return result
