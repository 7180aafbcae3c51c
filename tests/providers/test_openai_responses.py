"""The openai-responses API against a real HTTP server speaking the responses SSE format."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.llm_server import LLMServer
from support.provider_wires import WIRES
from support.stream_runs import PiRecording
from support.stream_runs import broken_off
from support.stream_runs import claude_message
from support.stream_runs import collect
from support.stream_runs import collect_aborting
from support.stream_runs import context
from support.stream_runs import model
from support.stream_runs import options_factory
from support.stream_runs import refused
from support.stream_runs import types

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamOptions
from piko.plugins.providers.openai_responses.wire import build_params
from piko.plugins.providers.openai_responses.wire import convert_messages
from piko.plugins.providers.openai_responses.wire import encode_text_signature
from piko.plugins.providers.openai_responses.wire import openai_error_message
from piko.plugins.providers.openai_responses.wire import parse_text_signature

API = "openai-responses"
stream = WIRES[API].stream
responses_model = WIRES[API].model
opts = options_factory(api_key="test-key")


# -- streaming ---------------------------------------------------------------------------------


def test_text_stream_with_signature_usage_and_cost() -> None:
    turn = {
        "blocks": [{"text": "Hello there, friend."}],
        "usage": {"input": 1000, "output": 200, "cacheRead": 500},
    }
    with LLMServer([turn]) as server:
        events = collect(stream, responses_model(server), context(), opts())
        request = server.requests[0]
    assert types(events) == ["start", "text_start", "text_end", "done"]
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert deltas == ["Hello ", "there, ", "friend."]
    message = events[-1].message
    assert message is not None and message.stop_reason == "stop"
    block = message.content[0]
    assert isinstance(block, TextContent) and block.text == "Hello there, friend."
    assert parse_text_signature(block.text_signature) == {
        "id": block.text_signature and json.loads(block.text_signature)["id"]
    }
    assert json.loads(block.text_signature or "")["v"] == 1
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (1000, 200, 500, 0)
    assert usage.total_tokens == 1700
    assert usage.cost.input == pytest.approx(3 * 1000 / 1e6)
    assert usage.cost.cache_read == pytest.approx(0.3 * 500 / 1e6)
    assert usage.cost.total == pytest.approx(0.003 + 0.003 + 0.00015)
    assert message.response_id and message.response_id.startswith("resp_")
    assert request["path"] == "/v1/responses"
    assert request["headers"]["authorization"] == "Bearer test-key"
    assert request["body"]["store"] is False and request["body"]["stream"] is True


def test_reasoning_summary_becomes_thinking_and_is_replayed_whole() -> None:
    turn = {"blocks": [{"thinking": "Consider the question."}, {"text": "Answer."}]}
    with LLMServer([turn, {"blocks": [{"text": "Again."}]}]) as server:
        m = responses_model(server, reasoning=True)
        events = collect(stream, m, context(), opts(reasoning="high"))
        first = events[-1].message
        assert first is not None
        thinking = first.content[0]
        assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Consider the question."
        item = json.loads(thinking.thinking_signature or "")
        assert item["type"] == "reasoning" and item["encrypted_content"].startswith("gAAAA")
        history = Context(
            messages=[UserMessage(content="Q", timestamp=1), first, UserMessage(content="more", timestamp=2)]
        )
        collect(stream, m, history, opts(reasoning="high"))
        body = server.requests[1]["body"]
    assert server.requests[0]["body"]["reasoning"] == {"effort": "high", "summary": "auto"}
    assert server.requests[0]["body"]["include"] == ["reasoning.encrypted_content"]
    assert body["input"][1] == item  # the reasoning item, verbatim
    assert (
        body["input"][2]["type"] == "message"
        and body["input"][2]["id"] == json.loads(first.content[1].text_signature)["id"]
    )  # type: ignore[union-attr]


def test_parallel_tool_calls_get_call_and_item_ids() -> None:
    turn = {
        "blocks": [
            {"tool_call": {"name": "read", "arguments": {"path": "a.txt"}}},
            {"tool_call": {"name": "read", "arguments": {"path": "b.txt", "limit": 10}}},
        ]
    }
    with LLMServer([turn]) as server:
        events = collect(stream, responses_model(server), context(), opts())
    assert types(events) == [
        "start",
        "toolcall_start",
        "toolcall_end",
        "toolcall_start",
        "toolcall_end",
        "done",
    ]
    message = events[-1].message
    assert message is not None and message.stop_reason == "toolUse"
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [c.arguments for c in calls] == [{"path": "a.txt"}, {"path": "b.txt", "limit": 10}]
    for call in calls:
        call_id, item_id = call.id.split("|")
        assert call_id.startswith("call_") and item_id.startswith("fc_")
    partials = [e.partial.content[-1].arguments for e in events if e.type == "toolcall_delta" and e.partial]  # type: ignore[union-attr]
    assert partials  # arguments grow while streaming


def test_tool_results_and_images_are_sent_as_pi_sends_them() -> None:
    m = model(API, "http://127.0.0.1:1/v1", "gpt-test", input=["text", "image"])
    call = ToolCall(id="call_1|fc_1", name="read", arguments={"path": "a"})
    assistant = AssistantMessage(
        content=[call], api=API, provider="test", model="gpt-test", stop_reason="toolUse"
    )
    result = ToolResultMessage(
        tool_call_id="call_1|fc_1",
        tool_name="read",
        content=[TextContent(text="file"), ImageContent(data="AAAA", mime_type="image/png")],
    )
    items = convert_messages(
        m, Context(messages=[UserMessage(content="go"), assistant, result]), frozenset({"openai"})
    )
    assert items[1] == {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path":"a"}',
    }
    assert items[2] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "file"},
            {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAAA"},
        ],
    }
    text_only = model(API, "http://127.0.0.1:1/v1", "gpt-test")
    items = convert_messages(
        text_only, Context(messages=[UserMessage(content="go"), assistant, result]), frozenset()
    )
    assert items[2]["output"] == "file\n(tool image omitted: model does not support images)"


def test_history_from_another_provider() -> None:
    m = model(API, "http://127.0.0.1:1/v1", "gpt-test", provider="openai")
    foreign = claude_message(
        ThinkingContent(thinking="Claude thought", thinking_signature="sig"),
        ToolCall(id="toolu_01|weird id!", name="read", arguments={}),
    )
    result = ToolResultMessage(
        tool_call_id="toolu_01|weird id!", tool_name="read", content=[TextContent(text="ok")]
    )
    items = convert_messages(
        m, Context(messages=[UserMessage(content="hi"), foreign, result]), frozenset({"openai"})
    )
    assert items[1]["type"] == "message" and items[1]["content"][0]["text"] == "Claude thought"
    call = items[2]
    assert call["call_id"] == "toolu_01" and call["id"].startswith("fc_") and len(call["id"]) <= 64
    assert items[3] == {"type": "function_call_output", "call_id": "toolu_01", "output": "ok"}
    # a provider outside the allowed set gets the whole id cleaned; an orphaned call gets a result
    items = convert_messages(
        m, Context(messages=[UserMessage(content="hi"), foreign, UserMessage(content="next")]), frozenset()
    )
    assert items[2]["call_id"] == "toolu_01_weird_id" and "id" not in items[2]
    assert items[3] == {
        "type": "function_call_output",
        "call_id": "toolu_01_weird_id",
        "output": "No result provided",
    }


def test_text_signature_round_trip() -> None:
    assert encode_text_signature("msg_1") == '{"v":1,"id":"msg_1"}'
    assert encode_text_signature("msg_1", "final_answer") == '{"v":1,"id":"msg_1","phase":"final_answer"}'
    assert parse_text_signature('{"v":1,"id":"msg_1","phase":"commentary"}') == {
        "id": "msg_1",
        "phase": "commentary",
    }
    assert parse_text_signature("legacy") == {"id": "legacy"}
    assert parse_text_signature(None) is None


def test_thinking_levels_map_through_the_catalog_map() -> None:
    m = model(
        API,
        "http://x/v1",
        "gpt-test",
        reasoning=True,
        thinking_level_map={"off": None, "xhigh": "xhigh", "minimal": "low"},
    )
    assert build_params(m, context(), opts(reasoning="minimal"))["reasoning"] == {
        "effort": "low",
        "summary": "auto",
    }
    assert build_params(m, context(), opts(reasoning="xhigh"))["reasoning"]["effort"] == "xhigh"
    assert "reasoning" not in build_params(m, context(), opts())  # off is unsupported: nothing sent
    plain = model(API, "http://x/v1", "gpt-test", reasoning=True)
    assert build_params(plain, context(), opts())["reasoning"] == {"effort": "none"}
    assert build_params(plain, context(), opts(reasoning="xhigh"))["reasoning"]["effort"] == "high"  # clamped
    assert "reasoning" not in build_params(
        model(API, "http://x/v1", "gpt-4o"), context(), opts(reasoning="high")
    )


def test_on_payload_replaces_the_body_and_on_response_sees_headers() -> None:
    seen: list[Any] = []

    async def on_payload(payload: Any, _model: Any) -> Any:
        return {**payload, "metadata": {"tag": "x"}}

    async def on_response(status: int, headers: dict[str, str], _model: Any) -> None:
        seen.append((status, headers.get("content-type")))

    with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
        events = collect(
            stream, responses_model(server), context(), opts(on_payload=on_payload, on_response=on_response)
        )
        body = server.requests[0]["body"]
    assert events[-1].type == "done"
    assert body["metadata"] == {"tag": "x"}
    assert seen == [(200, "text/event-stream")]


def test_incomplete_response_stops_for_length() -> None:
    with LLMServer([{"blocks": [{"text": "partial"}], "stop_reason": "incomplete"}]) as server:
        events = collect(stream, responses_model(server), context(), opts())
    assert events[-1].type == "done" and events[-1].reason == "length"


# -- errors ------------------------------------------------------------------------------------


def test_rate_limit_is_retried_after_retry_after() -> None:
    turns = [{"status": 429, "headers": {"retry-after-ms": "10"}}, {"blocks": [{"text": "recovered"}]}]
    with LLMServer(turns) as server:
        events = collect(stream, responses_model(server), context(), opts())
        assert len(server.requests) == 2
    assert events[-1].type == "done"


def test_persistent_server_error_gives_up_after_the_sdk_retries() -> None:
    turn = {"status": 500, "repeat": True, "headers": {"retry-after-ms": "1"}}
    message = "500 The server had an error while processing your request. Sorry about that!"
    assert refused(stream, responses_model, opts(), turn) == (message, 3)  # one try, the SDK's two retries


def test_error_event_in_the_stream() -> None:
    body = {"code": "server_error", "message": "boom"}
    message = broken_off(stream, responses_model, opts(), after=5, body=body, text="one two three")
    assert message == "Error Code server_error: boom"


def test_failed_response() -> None:
    failed = {
        "type": "response.failed",
        "response": {"id": "r", "status": "failed", "error": {"code": "server_error", "message": "bad"}},
    }
    with LLMServer([{"sse": [failed]}]) as server:
        events = collect(stream, responses_model(server), context(), opts())
    assert events[-1].error is not None and events[-1].error.error_message == "server_error: bad"


def test_stream_cut_midway_ends_with_terminated() -> None:
    with LLMServer([{"blocks": [{"text": "a b c d e f"}], "cut_after": 5}]) as server:
        events = collect(stream, responses_model(server), context(), opts())
    final = events[-1]
    assert final.type == "error" and final.error is not None
    assert final.error.error_message == "terminated"
    assert final.error.content and isinstance(final.error.content[0], TextContent)  # what arrived is kept


def test_stalled_server_times_out() -> None:
    turn = {"blocks": [{"text": "late"}], "stall_s": 5}
    with LLMServer([turn]) as server:
        events = collect(stream, responses_model(server), context(), opts(timeout_s=0.3))
    assert events[-1].type == "error"
    assert events[-1].error is not None and events[-1].error.error_message == "Request timed out."


def test_abort_mid_stream_stops_at_once() -> None:
    turn = {"blocks": [{"text": "one two three four five six seven eight"}], "delay_s": 0.2}
    with LLMServer([turn]) as server:
        events, seconds = collect_aborting(stream, responses_model(server), context(), opts())
    final = events[-1]
    assert final.type == "error" and final.reason == "aborted"
    assert final.error is not None and final.error.stop_reason == "aborted"
    assert final.error.error_message == "Request was aborted"
    assert seconds < 0.5
    assert sum(e.type == "text_delta" for e in events) < 8


def test_missing_key_is_an_error_event() -> None:
    events = collect(
        stream, model(API, "http://127.0.0.1:1/v1", "gpt-test", provider="openai"), context(), StreamOptions()
    )
    assert [e.type for e in events] == ["error"]
    assert events[0].error is not None and events[0].error.error_message == "No API key for provider: openai"


def test_connection_refused() -> None:
    events = collect(
        stream, model(API, "http://127.0.0.1:9/v1", "gpt-test"), context(), opts(extra={"max_retries": 0})
    )
    assert events[-1].error is not None and events[-1].error.error_message == "Connection error."


def test_sdk_error_wording() -> None:
    assert openai_error_message(400, '{"error":{"message":"bad"}}') == "400 bad"
    assert openai_error_message(500, "") == "500 status code (no body)"
    assert openai_error_message(502, "<html>gateway</html>") == "502 <html>gateway</html>"
    assert openai_error_message(418, '{"detail":"x"}') == "418 status code (no body)"


# -- what pi sends -----------------------------------------------------------------------------


def test_request_body_matches_what_pi_sends(pi_recording: PiRecording) -> None:
    m = pi_recording.request_model(responses_model)

    def build(ctx: Context, session_id: str) -> Any:
        return build_params(m, ctx, opts(reasoning="medium", session_id=session_id))

    for request in pi_recording.assert_responses_bodies(build):
        assert request["headers"]["session_id"] == request["body"]["prompt_cache_key"]


def test_streamed_message_matches_pis(pi_recording: PiRecording) -> None:
    """The same server script gives the assistant message pi produced (ids, signatures, usage)."""
    pi_recording.assert_streamed_message(stream, responses_model, opts(reasoning="medium"))


def test_stream_events_are_plain_async_iteration() -> None:
    async def first_event() -> str:
        with LLMServer([{"blocks": [{"text": "x"}]}]) as server:
            agen = stream(responses_model(server), context(), opts())
            event = await agen.__anext__()
            await agen.aclose()
            return event.type

    assert asyncio.run(first_event()) == "start"
