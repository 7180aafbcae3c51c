"""The mistral-conversations API against a real HTTP server speaking Mistral's chat streaming."""

from __future__ import annotations

from typing import Any

from support.llm_server import LLMServer
from support.provider_wires import WIRES
from support.stream_runs import PiRecording
from support.stream_runs import assert_cut_stall_and_abort
from support.stream_runs import claude_message
from support.stream_runs import collect
from support.stream_runs import context
from support.stream_runs import options_factory
from support.stream_runs import reading_turn
from support.stream_runs import types

from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.plugins.providers.mistral_conversations.wire import build_payload
from piko.plugins.providers.mistral_conversations.wire import derive_tool_call_id
from piko.plugins.providers.mistral_conversations.wire import mistral_error_message
from piko.plugins.providers.mistral_conversations.wire import tool_call_id_normalizer

API = "mistral-conversations"
stream = WIRES[API].stream
mistral = WIRES[API].model
opts = options_factory(api_key="mis-key")


def test_text_thinking_and_parallel_tool_calls() -> None:
    turn = reading_turn(
        "Plan it.", "Reading.", {"path": "a"}, {"path": "b"}, usage={"input": 40, "output": 10}
    )
    with LLMServer([turn]) as server:
        events = collect(
            stream, mistral(server, reasoning=True), context(), opts(reasoning="high", session_id="sess-1")
        )
        request = server.requests[0]
    assert types(events) == [
        "start", "thinking_start", "thinking_end", "text_start", "text_end",
        "toolcall_start", "toolcall_start", "toolcall_end", "toolcall_end", "done",
    ]  # fmt: skip
    message = events[-1].message
    assert message is not None and message.stop_reason == "toolUse"
    thinking, text, first, second = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Plan it."
    assert isinstance(text, TextContent) and text.text == "Reading."
    assert isinstance(first, ToolCall) and first.arguments == {"path": "a"} and len(first.id) == 9
    assert isinstance(second, ToolCall) and second.arguments == {"path": "b"}
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (40, 10, 50)
    assert request["path"] == "/mistral/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer mis-key"
    assert request["headers"]["x-affinity"] == "sess-1"
    assert request["body"]["prompt_mode"] == "reasoning"


def test_reasoning_effort_models_and_no_thinking() -> None:
    small = mistral(None, "mistral-small-latest", reasoning=True, thinking_level_map={"low": "low"})
    assert build_payload(small, context(), opts(reasoning="low"))["reasoning_effort"] == "low"
    assert build_payload(small, context(), opts(reasoning="medium"))["reasoning_effort"] == "high"
    assert "prompt_mode" not in build_payload(small, context(), opts(reasoning="medium"))
    assert "prompt_mode" not in build_payload(mistral(None, reasoning=True), context(), opts())


def test_tool_call_ids_become_nine_characters() -> None:
    assert derive_tool_call_id("abcDEF123", 0) == "abcDEF123"
    # values computed with pi's own functions (node)
    assert derive_tool_call_id("call_abc|fc_123", 0) == "18g6kob34"
    assert derive_tool_call_id("call_abc|fc_123", 1) == "h04n81i8r"
    assert derive_tool_call_id("toolcall:0", 0) == "toolcall0"
    normalize = tool_call_id_normalizer()
    a = normalize("toolu_01ABC|x")
    assert len(a) == 9 and a.isalnum() and normalize("toolu_01ABC|x") == a
    assert normalize("another id") != a
    foreign = claude_message(
        ThinkingContent(thinking="t", thinking_signature="s"),
        ToolCall(id="toolu_01|long id", name="read", arguments={}),
    )
    result = ToolResultMessage(
        tool_call_id="toolu_01|long id",
        tool_name="read",
        content=[ImageContent(data="AA", mime_type="image/png")],
        is_error=True,
    )
    payload = build_payload(
        mistral(None), Context(messages=[UserMessage(content="x"), foreign, result]), opts()
    )
    assistant, tool = payload["messages"][1], payload["messages"][2]
    assert assistant["content"] == [{"type": "text", "text": "t"}]  # foreign thinking became text
    call_id = assistant["tool_calls"][0]["id"]
    assert len(call_id) == 9 and tool["tool_call_id"] == call_id
    assert tool["content"] == [
        {"type": "text", "text": "[tool error] (tool image omitted: model does not support images)"}
    ]


def test_error_wording() -> None:
    assert mistral_error_message(500, "x" * 4005).endswith("... [truncated 5 chars]")
    assert (
        mistral_error_message(502, "", "text/html")
        == 'Mistral API error (502): API error occurred: Status 502 Content-Type text/html. Body: ""'
    )


def test_cut_stall_abort() -> None:
    assert_cut_stall_and_abort(stream, mistral, opts)


def test_length_stop() -> None:
    with LLMServer([{"blocks": [{"text": "cut"}], "stop_reason": "length"}]) as server:
        events = collect(stream, mistral(server), context(), opts())
    assert events[-1].reason == "length"


def test_request_body_matches_what_pi_sends(pi_recording: PiRecording) -> None:
    m = pi_recording.request_model(mistral)

    def build(messages: list[Any], request: dict[str, Any]) -> Any:
        body = request["body"]
        tools = pi_recording.tool_specs([t["function"] for t in body["tools"]], lambda t: t["parameters"])
        ctx = Context(system_prompt=body["messages"][0]["content"], messages=messages, tools=tools)
        return build_payload(m, ctx, opts(reasoning="medium"))

    pi_recording.assert_request_bodies(build)


def test_streamed_message_matches_pis(pi_recording: PiRecording) -> None:
    pi_recording.assert_streamed_message(stream, mistral, opts(reasoning="medium"))


def test_an_event_that_is_not_json_ends_the_stream_in_an_error() -> None:
    with LLMServer([{"sse": ["data: {not json\n\n"]}]) as server:
        events = collect(stream, mistral(server), context(), opts())
    assert events[-1].error is not None and events[-1].error.error_message is not None
    assert events[-1].error.error_message.startswith("Could not parse the stream event as JSON: ")
