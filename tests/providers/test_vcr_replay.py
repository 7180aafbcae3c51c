"""Recorded provider streams (pi_agent_rust cassettes) replayed verbatim through piko's stream functions.

The expected messages are computed from the recorded bodies by a deliberately plain reference
decoder below, independent of the provider code under test.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import LLMServer
from support.llm_server import cassette_turns
from support.llm_server import load_cassette
from support.streams import CASSETTES
from support.streams import FIXTURES
from support.streams import anthropic_model
from support.streams import collect
from support.streams import final
from support.streams import openai_model

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import ModelCost
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.lib.abort import AbortController
from piko.plugins.providers.anthropic_messages.wire import stream as anthropic_stream
from piko.plugins.providers.openai_completions.wire import stream as openai_stream

RESPONSES = FIXTURES / "pi_agent_rust" / "provider_responses"
PRICES = ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
CONTEXT = Context(system_prompt="test", messages=[UserMessage(content="go", timestamp=1)])
NO_RETRY = StreamOptions(api_key="test-key", extra={"max_retries": 0})


def recorded(name: str) -> dict[str, Any]:
    return dict(load_cassette(CASSETTES / f"{name}.json")["interactions"][-1]["response"])


def sse_payloads(body: str) -> list[tuple[str | None, str]]:
    out = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            out.append((event, "\n".join(data)))
    return out


def reference_anthropic(body: str) -> dict[str, Any]:
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, int] = {}
    stop = None
    for event, data in sse_payloads(body):
        if event == "ping":
            continue
        payload = json.loads(data)
        kind = payload["type"]
        if kind == "message_start":
            usage.update(payload["message"]["usage"])
        elif kind == "content_block_start":
            blocks[payload["index"]] = {"type": payload["content_block"]["type"], "text": "", "json": "", "sig": "",
                                        "id": payload["content_block"].get("id"), "name": payload["content_block"].get("name")}  # fmt: skip
        elif kind == "content_block_delta":
            delta = payload["delta"]
            block = blocks[payload["index"]]
            block["text"] += delta.get("text", "") + delta.get("thinking", "")
            block["json"] += delta.get("partial_json", "")
            block["sig"] += delta.get("signature", "")
        elif kind == "message_delta":
            stop = payload["delta"]["stop_reason"]
            usage.update({k: v for k, v in payload["usage"].items() if v is not None})
    content: list[Any] = []
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "text":
            content.append(TextContent(text=block["text"]))
        elif block["type"] == "thinking":
            content.append(ThinkingContent(thinking=block["text"], thinking_signature=block["sig"]))
        elif block["type"] == "tool_use":
            content.append(
                ToolCall(id=block["id"], name=block["name"], arguments=json.loads(block["json"] or "{}"))
            )
    reasons = {"end_turn": "stop", "max_tokens": "length", "tool_use": "toolUse"}
    return {
        "content": content,
        "stop": reasons[stop or "end_turn"],
        "usage": (usage.get("input_tokens", 0), usage.get("output_tokens", 0),
                  usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)),
    }  # fmt: skip


def reference_openai(body: str) -> dict[str, Any]:
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    stop = "stop"
    for _event, data in sse_payloads(body):
        if data == "[DONE]":
            continue
        chunk = json.loads(data)
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            text += delta.get("content") or ""
            for call in delta.get("tool_calls", []):
                entry = calls.setdefault(call["index"], {"id": "", "name": "", "args": ""})
                entry["id"] = call.get("id") or entry["id"]
                entry["name"] = call.get("function", {}).get("name") or entry["name"]
                entry["args"] += call.get("function", {}).get("arguments") or ""
            if choice.get("finish_reason"):
                stop = {"stop": "stop", "length": "length", "tool_calls": "toolUse"}[choice["finish_reason"]]
    content: list[Any] = [TextContent(text=text)] if text else []
    content += [
        ToolCall(id=c["id"], name=c["name"], arguments=json.loads(c["args"] or "{}"))
        for _, c in sorted(calls.items())
    ]
    return {
        "content": content,
        "stop": stop,
        "usage": (usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), 0, 0),
    }


def replay(
    name: str, model_factory: Any, fn: Any, **turn_options: Any
) -> tuple[list[StreamEvent], Model, list[Any]]:
    turns = [{**t, **turn_options} for t in cassette_turns(CASSETTES / f"{name}.json", last_only=True)]
    with LLMServer(turns) as server:
        model = model_factory(server.base_url, cost=PRICES)
        events = collect(fn, model, CONTEXT, NO_RETRY)
        requests = server.requests
    return events, model, requests


def check_usage(message: AssistantMessage, expected: tuple[int, int, int, int]) -> None:
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == expected
    assert usage.total_tokens == sum(expected)
    assert usage.cost.input == PRICES.input / 1_000_000 * expected[0]
    assert usage.cost.output == PRICES.output / 1_000_000 * expected[1]
    assert (
        usage.cost.total
        == usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write
    )


ANTHROPIC_STREAMS = [
    "anthropic_simple_text", "anthropic_multi_paragraph", "anthropic_unicode_content", "anthropic_very_long_response",
    "anthropic_empty_response", "anthropic_extended_thinking", "anthropic_thinking_only",
    "anthropic_thinking_budget_exceeded", "anthropic_thinking_with_tool_calls", "anthropic_tool_call_single",
    "anthropic_tool_call_multiple", "anthropic_large_tool_args", "anthropic_tool_result_processing",
    "anthropic_stream_interruption",
]  # fmt: skip
OPENAI_STREAMS = [
    "openai_simple_text", "openai_multi_paragraph", "openai_unicode_content", "openai_very_long_response",
    "openai_tool_call_single", "openai_tool_call_multiple", "openai_tool_result_processing",
]  # fmt: skip


def replayed_as_recorded(
    name: str, make_model: Any, stream: Any, reference: Any
) -> tuple[list[Any], Any, list[Any]]:
    """Replay the recording ``name``: the stream must end done with the content, stop reason and
    usage the ``reference`` decoder reads from the recorded body. Returns the events, the
    message and the requests."""
    events, _, requests = replay(name, make_model, stream)
    expected = reference("".join(recorded(name)["body_chunks"]))
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.content == expected["content"]
    assert message.stop_reason == expected["stop"]
    check_usage(message, expected["usage"])
    return events, message, requests


@pytest.mark.parametrize("name", ANTHROPIC_STREAMS)
def test_anthropic_recordings(name: str) -> None:
    events, message, requests = replayed_as_recorded(
        name, anthropic_model, anthropic_stream, reference_anthropic
    )
    assert requests[0]["path"] == "/v1/messages"
    # every block is announced: start, deltas, end
    starts = [e.content_index for e in events if e.type.endswith("_start") and e.type != "start"]
    ends = [e.content_index for e in events if e.type.endswith("_end")]
    assert starts == ends == list(range(len(message.content)))


@pytest.mark.parametrize("name", OPENAI_STREAMS)
def test_openai_recordings(name: str) -> None:
    _events, message, requests = replayed_as_recorded(name, openai_model, openai_stream, reference_openai)
    assert message.response_id and message.response_id.startswith("chatcmpl-vcr")
    assert requests[0]["path"] == "/v1/chat/completions"


def test_parallel_tool_calls_keep_their_order_and_ids() -> None:
    events, _, _ = replay("openai_tool_call_multiple", openai_model, openai_stream)
    calls = final(events).content
    assert [(c.id, c.name, c.arguments) for c in calls] == [  # type: ignore[union-attr]
        ("call_vcr005a", "add", {"a": 2, "b": 3}),
        ("call_vcr005b", "multiply", {"a": 4, "b": 5}),
    ]
    events, _, _ = replay("anthropic_tool_call_multiple", anthropic_model, anthropic_stream)
    assert [c.name for c in final(events).content if isinstance(c, ToolCall)] == ["add", "multiply"]


def compact(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize(
    "name",
    ["anthropic_bad_request_400", "anthropic_auth_failure_401", "anthropic_forbidden_403", "anthropic_rate_limit_429",
     "anthropic_server_error_500", "anthropic_overloaded_529"],
)  # fmt: skip
def test_anthropic_error_recordings(name: str) -> None:
    response = recorded(name)
    events, _, _ = replay(name, anthropic_model, anthropic_stream)
    assert [e.type for e in events] == ["error"]
    body = "".join(response["body_chunks"])
    assert final(events).error_message == f"{response['status']} {compact(body)}"


@pytest.mark.parametrize(
    "name", ["openai_bad_request_400", "openai_auth_failure_401", "openai_rate_limit_429"]
)
def test_openai_error_recordings(name: str) -> None:
    response = recorded(name)
    events, _, _ = replay(name, openai_model, openai_stream)
    assert [e.type for e in events] == ["error"]
    error = json.loads("".join(response["body_chunks"]))["error"]
    assert final(events).error_message == f"{response['status']} {error['message']}"


def test_rate_limit_with_retry_after_is_retried_once_the_wait_is_short() -> None:
    limited = recorded("openai_rate_limit_429")
    limited["headers"] = [["Content-Type", "application/json"], ["Retry-After", "0.05"]]
    ok = recorded("openai_simple_text")
    with LLMServer([{"replay": limited}, {"replay": ok}]) as server:
        message = final(collect(openai_stream, openai_model(server.base_url), CONTEXT))
        assert message.content == [TextContent(text="pong")] and len(server.requests) == 2


def test_recorded_stream_cut_mid_way() -> None:
    events, _, _ = replay("anthropic_very_long_response", anthropic_model, anthropic_stream, cut_after=8)
    message = final(events)
    assert message.stop_reason == "error" and message.error_message == "terminated"
    assert message.content and isinstance(message.content[0], TextContent) and message.content[0].text
    events, _, _ = replay("openai_very_long_response", openai_model, openai_stream, cut_after=5)
    assert final(events).error_message == "terminated"


def test_recorded_stream_stalled_with_a_timeout() -> None:
    turn = {**cassette_turns(CASSETTES / "anthropic_simple_text.json", last_only=True)[0], "stall_s": 10}
    with LLMServer([turn]) as server:  # had the client waited out the stall, the answer would come
        options = StreamOptions(api_key="k", timeout_s=0.3, extra={"max_retries": 0})
        events = collect(anthropic_stream, anthropic_model(server.base_url), CONTEXT, options)
    assert [e.type for e in events] == ["start", "error"]
    assert final(events).error_message == "Request timed out."


def test_abort_mid_recorded_stream() -> None:
    turn = {
        **cassette_turns(CASSETTES / "anthropic_very_long_response.json", last_only=True)[0],
        "delay_s": 0.1,
    }
    with LLMServer([turn]) as server:
        model = anthropic_model(server.base_url)

        async def run() -> list[StreamEvent]:
            controller = AbortController()
            events = []
            async for event in anthropic_stream(
                model, CONTEXT, StreamOptions(api_key="k", signal=controller.signal)
            ):
                events.append(event)
                if event.type == "text_delta":
                    asyncio.get_running_loop().call_later(0.02, controller.abort)
            return events

        events = asyncio.run(run())
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert [e for e in events if e.type == "text_delta"]


def cases(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["cases"])


@pytest.mark.parametrize("case", cases(RESPONSES / "anthropic_stream.json"), ids=lambda c: c["name"])
def test_anthropic_event_cases(case: dict[str, Any]) -> None:
    frames = []
    for event in case["events"]:
        frames.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    with LLMServer([{"sse": frames}]) as server:
        events = collect(anthropic_stream, anthropic_model(server.base_url), CONTEXT, NO_RETRY)
    expected = case["expected"]
    assert [e.delta for e in events if e.type == "text_delta"] == [
        x["delta"] for x in expected if x["kind"] == "text_delta"
    ]
    last = expected[-1]
    if last["kind"] == "error":
        assert events[-1].type == "error"
    else:
        reason = {"stop": "stop", "length": "length", "tool_use": "toolUse"}[last["reason"]]
        assert events[-1].type == "done" and events[-1].reason == reason


@pytest.mark.parametrize("case", cases(RESPONSES / "openai_stream.json"), ids=lambda c: c["name"])
def test_openai_event_cases(case: dict[str, Any]) -> None:
    frames = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in case["events"]]
    with LLMServer([{"sse": frames}]) as server:
        events = collect(openai_stream, openai_model(server.base_url), CONTEXT, NO_RETRY)
    expected = case["expected"]
    assert [e.delta for e in events if e.type == "text_delta"] == [
        x["delta"] for x in expected if x["kind"] == "text_delta"
    ]
    reason = {"stop": "stop", "length": "length", "tool_use": "toolUse"}[expected[-1]["reason"]]
    assert events[-1].type == "done" and events[-1].reason == reason
