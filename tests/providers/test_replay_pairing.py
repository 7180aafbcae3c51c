"""Replaying history to a provider: every tool result sent answers a tool call before it, once."""

from __future__ import annotations

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.plugins.providers.replay import transform_messages

MODEL = Model(id="m", name="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9")


def _assistant(*calls: str) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=c, name="ls", arguments={}) for c in calls] or [TextContent(text="ok")],
        api=MODEL.api,
        provider=MODEL.provider,
        model=MODEL.id,
        stop_reason="toolUse" if calls else "stop",
    )


def _result(call_id: str, text: str = "r") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="ls", content=[TextContent(text=text)])


def _shape(messages: list[object]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, ToolResultMessage):
            out.append(f"result:{m.tool_call_id}:{m.content[0].text}")  # type: ignore[union-attr]
        else:
            out.append(type(m).__name__)
    return out


def test_a_result_without_its_call_is_not_sent() -> None:
    history = [UserMessage(content="go"), _result("lost"), _assistant()]
    assert _shape(transform_messages(history, MODEL)) == ["UserMessage", "AssistantMessage"]


def test_a_second_result_for_one_call_is_not_sent() -> None:
    history = [UserMessage(content="go"), _assistant("a"), _result("a", "one"), _result("a", "two")]
    assert _shape(transform_messages(history, MODEL)) == ["UserMessage", "AssistantMessage", "result:a:one"]


def test_a_result_after_the_next_user_message_is_not_sent_twice() -> None:
    history = [UserMessage(content="go"), _assistant("a"), UserMessage(content="wait"), _result("a")]
    assert _shape(transform_messages(history, MODEL)) == [
        "UserMessage",
        "AssistantMessage",
        "result:a:No result provided",
        "UserMessage",
    ]


def test_paired_results_pass_in_order() -> None:
    history = [UserMessage(content="go"), _assistant("a", "b"), _result("b"), _result("a")]
    assert _shape(transform_messages(history, MODEL)) == [
        "UserMessage",
        "AssistantMessage",
        "result:b:r",
        "result:a:r",
    ]
