"""openai-completions against the scripted server: pi's request bodies, decoded events, errors, abort."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

from support.llm_server import LLMServer
from support.stream_runs import assert_abort_ends_a_pause
from support.streams import SAMPLES
from support.streams import collect
from support.streams import final
from support.streams import openai_model
from support.streams import pi_updates
from support.streams import summary

from piko.data.messages import AssistantMessage
from piko.data.messages import ImageContent
from piko.data.messages import Model
from piko.data.messages import ModelCost
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.data.streaming import ToolSpec
from piko.data.wire import message_from_wire
from piko.lib.abort import AbortController
from piko.plugins.providers.openai_completions import wire as oc
from piko.plugins.providers.openai_completions.wire import stream

IMAGE = ImageContent(data="aGVsbG8=", mime_type="image/png")


def pi_requests(scenario: str) -> list[dict[str, Any]]:
    lines = (SAMPLES / scenario / "requests.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def session_messages(scenario: str) -> list[Any]:
    out = []
    for line in (SAMPLES / scenario / "session.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry["type"] == "message":
            out.append(message_from_wire(entry["message"]))
    return out


def context_for(body: dict[str, Any], messages: list[Any]) -> Context:
    """pi's system prompt and tools (owned by other code) with the given history."""
    tools = [
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"]["description"],
            parameters=t["function"]["parameters"],
        )
        for t in body.get("tools", [])
    ]
    return Context(system_prompt=body["messages"][0]["content"], messages=messages, tools=tools)


def run_scenario(scenario: str) -> tuple[list[dict[str, Any]], list[list[StreamEvent]]]:
    """Replay a transcript: for each request pi sent, build piko's from the same history."""
    requests = pi_requests(scenario)
    turns = json.loads((SAMPLES / scenario / "scenario.json").read_text())
    history = session_messages(scenario)
    user_turn_ends = [i for i, m in enumerate(history) if isinstance(m, AssistantMessage)]
    all_events = []
    with LLMServer(turns) as server:
        model = openai_model(server.base_url)
        for index, request in enumerate(requests):
            context = context_for(request["body"], history[: user_turn_ends[index]])
            all_events.append(collect(stream, model, context, StreamOptions(api_key="mock-key")))
        bodies = [r["body"] for r in server.requests]
    return bodies, all_events


# ---------------------------------------------------------------------------
# Conformance with the pi transcripts
# ---------------------------------------------------------------------------


def test_request_bodies_equal_pis_for_the_tools_scenario() -> None:
    bodies, _ = run_scenario("c-tools-json")
    expected = [r["body"] for r in pi_requests("c-tools-json")]
    assert bodies[0] == expected[0]  # the first turn: system, user blocks, tools with strict false
    assert bodies == expected  # every turn: assistant tool_calls replayed, tool results, content null
    first = json.dumps(bodies[0], separators=(",", ":"), ensure_ascii=False)
    assert len(first.encode()) == int(pi_requests("c-tools-json")[0]["headers"]["content-length"])


def test_request_bodies_equal_pis_for_parallel_tool_calls() -> None:
    bodies, events = run_scenario("c-parallel-tools-json")
    assert bodies == [r["body"] for r in pi_requests("c-parallel-tools-json")]
    calls = [b for b in final(events[0]).content if isinstance(b, ToolCall)]
    assert [c.name for c in calls] == ["bash", "read", "bash"]


def test_decoded_events_match_pis() -> None:
    _, events = run_scenario("c-tools-json")
    stdout = SAMPLES / "c-tools-json" / "stdout.txt"
    for index, turn_events in enumerate(events):
        ours = summary(turn_events)
        assert ours[0] == {"type": "start"}
        assert ours[1:-1] == pi_updates(stdout, index)
    message = final(events[0])
    assert message.response_id == "chatcmpl-mock0001"
    assert message.stop_reason == "toolUse"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (100, 20, 120)
    session = session_messages("c-tools-json")
    pi_first = next(m for m in session if isinstance(m, AssistantMessage))
    assert message.content == pi_first.content


def test_partial_tool_calls_carry_their_json_so_far_and_settle_plain() -> None:
    """While streaming, a tool call keeps the JSON so far (pi's ``partialArgs``, which only its
    0.73 snapshots ever showed) and its stream index; the finished block is a plain ``ToolCall``
    with no scratch fields."""
    seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    turn = {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]}
    with LLMServer([turn]) as server:

        async def run() -> None:
            async for event in stream(openai_model(server.base_url), Context(), StreamOptions(api_key="k")):
                if event.type == "toolcall_delta":
                    assert event.partial is not None
                    block = event.partial.content[0]
                    seen.append((block.partial_json, dict(block.arguments), dict(block.extra)))
                if event.type == "done":
                    assert event.message is not None
                    assert type(event.message.content[0]) is ToolCall
                    assert event.message.content[0].extra == {}

        asyncio.run(run())
    assert seen[-1] == ('{"path":"notes.txt"}', {"path": "notes.txt"}, {"streamIndex": 0})
    assert seen[1] == ('{"path":"not', {"path": "not"}, {"streamIndex": 0})


# ---------------------------------------------------------------------------
# Request building
# ---------------------------------------------------------------------------


def body_for(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    opts = StreamOptions(api_key="k", **options)
    return oc.build_params(model, context, opts, oc.get_compat(model))


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def test_headers_merge_auth_model_and_option_headers() -> None:
    with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
        model = openai_model(server.base_url, headers={"X-Model": "m", "X-Both": "model"})
        options = StreamOptions(api_key="sk-test", headers={"X-Both": "option"})
        collect(stream, model, Context(messages=[user()]), options)
        headers = server.requests[0]["headers"]
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["content-type"] == "application/json"
    assert headers["x-model"] == "m" and headers["x-both"] == "option"


def test_reasoning_models_use_developer_role_and_reasoning_effort() -> None:
    model = openai_model("http://h", reasoning=True)
    body = body_for(model, Context(system_prompt="sys", messages=[user()]), reasoning="high")
    assert body["messages"][0] == {"role": "developer", "content": "sys"}
    assert body["reasoning_effort"] == "high"
    assert "reasoning_effort" not in body_for(model, Context(messages=[user()]))
    # xhigh is only offered when the model maps it: clamped down to high
    assert body_for(model, Context(messages=[user()]), reasoning="xhigh")["reasoning_effort"] == "high"
    mapped = openai_model("http://h", reasoning=True, thinking_level_map={"xhigh": "max", "off": "none"})
    assert body_for(mapped, Context(messages=[user()]), reasoning="xhigh")["reasoning_effort"] == "max"
    assert body_for(mapped, Context(messages=[user()]))["reasoning_effort"] == "none"
    plain = openai_model("http://h")
    assert "reasoning_effort" not in body_for(plain, Context(messages=[user()]), reasoning="high")


def test_max_tokens_default_and_option() -> None:
    model = openai_model("http://h", max_tokens=64000)
    assert body_for(model, Context(messages=[user()]))["max_completion_tokens"] == 32000
    assert body_for(model, Context(messages=[user()]), max_tokens=100)["max_completion_tokens"] == 100
    assert body_for(model, Context(messages=[user()]), temperature=0.2)["temperature"] == 0.2


def test_compat_flags() -> None:
    compat = {
        "supportsStore": False,
        "supportsDeveloperRole": False,
        "supportsUsageInStreaming": False,
        "maxTokensField": "max_tokens",
        "supportsStrictMode": False,
        "requiresToolResultName": True,
        "requiresAssistantAfterToolResult": True,
    }
    model = openai_model("http://h", reasoning=True, compat=compat)
    call = ToolCall(id="c1", name="ls", arguments={})
    history = [
        user(),
        AssistantMessage(
            content=[call], api="openai-completions", provider="mock", model="mock-1", stop_reason="toolUse"
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text="a\nb")]),
        user("next"),
    ]
    context = Context(system_prompt="s", messages=history, tools=[ToolSpec(name="ls")])
    body = body_for(model, context)
    assert "store" not in body and "stream_options" not in body
    assert body["max_tokens"] == 16384 and "max_completion_tokens" not in body
    assert "strict" not in body["tools"][0]["function"]
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][2]["content"] == ""  # assistant content "" instead of null
    assert body["messages"][3] == {"role": "tool", "content": "a\nb", "tool_call_id": "c1", "name": "ls"}
    assert body["messages"][4] == {"role": "assistant", "content": "I have processed the tool results."}
    assert body["messages"][5] == {"role": "user", "content": "next"}


def test_detected_compat_for_known_providers() -> None:
    zai = openai_model("https://api.z.ai/api/paas/v4", provider="zai", reasoning=True)
    body = body_for(zai, Context(messages=[user()]), reasoning="low")
    assert body["enable_thinking"] is True and "store" not in body and "reasoning_effort" not in body
    deepseek = openai_model("https://api.deepseek.com", provider="deepseek", reasoning=True)
    body = body_for(deepseek, Context(messages=[user()]))
    assert body["thinking"] == {"type": "disabled"}
    assert body_for(deepseek, Context(messages=[user()]), reasoning="high")["reasoning_effort"] == "high"
    router = openai_model("https://openrouter.ai/api/v1", provider="openrouter", reasoning=True)
    assert body_for(router, Context(messages=[user()]))["reasoning"] == {"effort": "none"}
    assert body_for(router, Context(messages=[user()]), reasoning="medium")["reasoning"] == {
        "effort": "medium"
    }
    moonshot = openai_model("https://api.moonshot.ai/v1", provider="moonshotai")
    body = body_for(moonshot, Context(messages=[user()], tools=[ToolSpec(name="t")]))
    assert "max_tokens" in body and "strict" not in body["tools"][0]["function"]
    qwen = openai_model("http://h", reasoning=True, compat={"thinkingFormat": "qwen-chat-template"})
    assert body_for(qwen, Context(messages=[user()]))["chat_template_kwargs"] == {
        "enable_thinking": False,
        "preserve_thinking": True,
    }


def test_openai_prompt_cache_key_and_long_retention() -> None:
    openai = openai_model("https://api.openai.com/v1", provider="openai")
    body = body_for(openai, Context(messages=[user()]), session_id="sess-1")
    assert body["prompt_cache_key"] == "sess-1" and "prompt_cache_retention" not in body
    assert list(body)[:5] == ["model", "messages", "stream", "prompt_cache_key", "stream_options"]
    assert "prompt_cache_key" not in body_for(
        openai, Context(messages=[user()]), session_id="s", cache_retention="none"
    )
    other = openai_model("http://h")
    body = body_for(other, Context(messages=[user()]), session_id="s", cache_retention="long")
    assert body["prompt_cache_key"] == "s" and body["prompt_cache_retention"] == "24h"


def test_openrouter_anthropic_models_get_cache_control() -> None:
    model = openai_model("https://openrouter.ai/api/v1", provider="openrouter", id="anthropic/claude-x")
    body = body_for(model, Context(system_prompt="sys", messages=[user("q")], tools=[ToolSpec(name="t")]))
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "q", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}


def test_mistral_through_openai_completions_with_its_compat() -> None:
    # pi 0.73.1 has no Mistral detection in openai-completions: a models.json entry sets the flags
    compat = {
        "requiresToolResultName": True,
        "requiresAssistantAfterToolResult": True,
        "requiresThinkingAsText": True,
    }
    model = openai_model("https://api.mistral.ai/v1", provider="mistral", id="mistral-large", compat=compat)
    history = [
        user(),
        AssistantMessage(
            content=[ThinkingContent(thinking="plan", thinking_signature="reasoning_content"), TextContent(text="ok"),
                     ToolCall(id="abc", name="ls", arguments={"path": "."})],
            api="openai-completions", provider="mistral", model="mistral-large", stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="abc", tool_name="ls", content=[TextContent(text="x")]),
        user("go on"),
    ]  # fmt: skip
    body = body_for(model, Context(messages=history))
    assistant = body["messages"][1]
    assert assistant["content"] == [{"type": "text", "text": "plan"}, {"type": "text", "text": "ok"}]
    assert body["messages"][2]["name"] == "ls"
    assert body["messages"][3]["content"] == "I have processed the tool results."


def test_images_for_vision_and_text_only_models() -> None:
    history = [
        UserMessage(content=[TextContent(text="look"), IMAGE], timestamp=1),
        AssistantMessage(content=[ToolCall(id="c", name="read", arguments={})], api="openai-completions",
                         provider="mock", model="mock-1", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c", tool_name="read", content=[IMAGE]),
    ]  # fmt: skip
    vision = openai_model("http://h", input=["text", "image"])
    body = body_for(vision, Context(messages=history))
    assert body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,aGVsbG8="},
    }
    assert body["messages"][2] == {"role": "tool", "content": "(see attached image)", "tool_call_id": "c"}
    assert body["messages"][3]["content"][0] == {
        "type": "text",
        "text": "Attached image(s) from tool result:",
    }
    text_only = openai_model("http://h")
    body = body_for(text_only, Context(messages=history))
    assert body["messages"][0]["content"][1] == {
        "type": "text",
        "text": "(image omitted: model does not support images)",
    }
    assert body["messages"][2]["content"] == "(tool image omitted: model does not support images)"
    assert len(body["messages"]) == 3


def test_history_from_other_providers_is_replayed_as_pi_does() -> None:
    anthropic_turn = AssistantMessage(
        content=[
            ThinkingContent(thinking="secret plan", thinking_signature="sig=="),
            ThinkingContent(thinking="", thinking_signature="x", redacted=True),
            TextContent(text="Sure."),
            ToolCall(id="call_1|fc_very+long/id==", name="ls", arguments={}, thought_signature="t"),
        ],
        api="openai-responses", provider="openai", model="gpt-5", stop_reason="toolUse",
    )  # fmt: skip
    history = [
        user(),
        anthropic_turn,
        ToolResultMessage(tool_call_id="call_1|fc_very+long/id==", tool_name="ls", content=[TextContent(text="f")]),
        AssistantMessage(content=[TextContent(text="half")], api="x", provider="y", model="z", stop_reason="aborted"),
        AssistantMessage(content=[ToolCall(id="orphan", name="ls", arguments={})], api="x", provider="y", model="z",
                         stop_reason="toolUse"),
        user("again"),
    ]  # fmt: skip
    body = body_for(openai_model("http://h"), Context(messages=history))
    messages = body["messages"]
    assert messages[1]["content"] == "secret planSure."  # thinking from another model becomes text
    assert "reasoning_details" not in messages[1]
    assert messages[1]["tool_calls"][0]["id"] == "call_1"
    assert messages[2]["tool_call_id"] == "call_1"
    assert messages[3]["tool_calls"][0]["id"] == "orphan"  # the aborted turn is skipped
    assert messages[4] == {"role": "tool", "content": "No result provided", "tool_call_id": "orphan"}
    assert messages[5] == {"role": "user", "content": "again"}


def test_same_model_thinking_is_replayed_in_its_field() -> None:
    turn = AssistantMessage(
        content=[ThinkingContent(thinking="t1", thinking_signature="reasoning_content"), TextContent(text="answer")],
        api="openai-completions", provider="mock", model="mock-1",
    )  # fmt: skip
    body = body_for(openai_model("http://h"), Context(messages=[user(), turn, user("more")]))
    assert body["messages"][1] == {"role": "assistant", "content": "answer", "reasoning_content": "t1"}


def test_replayed_tool_call_arguments_are_written_as_javascript_writes_them() -> None:
    # JSON.stringify writes 1 (not 1.0), 1e+21 and 1e-7 (not 1e-07), and NaN as null
    call = ToolCall(
        id="call_1", name="ls", arguments={"n": 1.0, "big": 1e21, "small": 1e-7, "nan": float("nan")}
    )
    turn = AssistantMessage(
        content=[call], api="openai-completions", provider="mock", model="mock-1", stop_reason="toolUse"
    )
    answer = ToolResultMessage(tool_call_id="call_1", tool_name="ls", content=[TextContent(text="f")])
    body = body_for(openai_model("http://h"), Context(messages=[user(), turn, answer, user("more")]))
    arguments = body["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert arguments == '{"n":1,"big":1e+21,"small":1e-7,"nan":null}'


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------


def test_thinking_text_and_tool_calls_stream() -> None:
    turn = {
        "blocks": [
            {"thinking": "Let me see."},
            {"text": "Here."},
            {"tool_call": {"name": "ls", "arguments": {"path": "."}}},
        ]
    }
    with LLMServer([turn, {**turn, "reasoning_field": "reasoning"}]) as server:
        model = openai_model(server.base_url)
        events = collect(stream, model, Context(messages=[user()]))
        other = collect(stream, model, Context(messages=[user()]))
    types = [e.type for e in events]
    assert types[:3] == ["start", "thinking_start", "thinking_delta"]
    message = final(events)
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Let me see." and thinking.thinking_signature == "reasoning_content"
    assert message.content[1] == TextContent(text="Here.")
    assert message.content[2] == ToolCall(id=message.content[2].id, name="ls", arguments={"path": "."})
    assert types[-4:] == ["thinking_end", "text_end", "toolcall_end", "done"]
    assert final(other).content[0].thinking_signature == "reasoning"  # type: ignore[union-attr]


def test_usage_with_cached_tokens_and_cost() -> None:
    turns = [
        {"blocks": [{"text": "a"}], "usage": {"input": 70, "output": 10, "cacheRead": 30}},
        {"sse": [{"id": "x", "choices": [{"delta": {"content": "b"}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 100, "completion_tokens": 5,
                            "prompt_tokens_details": {"cached_tokens": 50, "cache_write_tokens": 20}}}]},
    ]  # fmt: skip
    with LLMServer(turns) as server:
        model = openai_model(
            server.base_url, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
        )
        first = final(collect(stream, model, Context(messages=[user()])))
        second = final(collect(stream, model, Context(messages=[user()])))
    usage = first.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (70, 10, 30, 0)
    assert usage.cost.input == 3 / 1_000_000 * 70 and usage.cost.cache_read == 0.3 / 1_000_000 * 30
    assert usage.cost.total == usage.cost.input + usage.cost.output + usage.cost.cache_read
    usage = second.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (50, 5, 30, 20)
    assert usage.total_tokens == 105


def test_finish_reasons() -> None:
    turns = [
        {"blocks": [{"text": "cut"}], "stop_reason": "length"},
        {"blocks": [{"text": "bad"}], "stop_reason": "content_filter"},
        {"blocks": [{"text": "x"}], "model": "mock-1-2025-01-01"},
    ]
    with LLMServer(turns) as server:
        model = openai_model(server.base_url)
        assert final(collect(stream, model, Context(messages=[user()]))).stop_reason == "length"
        filtered = collect(stream, model, Context(messages=[user()]))
        renamed = final(collect(stream, model, Context(messages=[user()])))
    assert filtered[-1].type == "error"
    assert final(filtered).error_message == "Provider finish_reason: content_filter"
    assert final(filtered).content == [TextContent(text="bad")]
    assert renamed.response_model == "mock-1-2025-01-01"


def test_encrypted_reasoning_details_ride_on_tool_calls() -> None:
    detail = {"type": "reasoning.encrypted", "id": "call_9", "data": "enc=="}
    turn = {"sse": [
        {"id": "r", "choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_9", "type": "function",
                                                          "function": {"name": "ls", "arguments": "{}"}}]}}]},
        {"id": "r", "choices": [{"delta": {"reasoning_details": [detail]}, "finish_reason": "tool_calls"}]},
        "data: [DONE]\n\n",
    ]}  # fmt: skip
    with LLMServer([turn]) as server:
        model = openai_model(server.base_url)
        message = final(collect(stream, model, Context(messages=[user()])))
    call = message.content[0]
    assert isinstance(call, ToolCall) and json.loads(call.thought_signature or "") == detail
    body = body_for(model, Context(messages=[user(), message]))
    assert body["messages"][1]["reasoning_details"] == [detail]


def test_mid_stream_error_chunk_and_unparsable_chunk() -> None:
    turns = [
        {
            "blocks": [{"text": "a b c"}],
            "stream_error": {"after": 2, "body": {"error": {"message": "Overloaded"}}},
        },
        {"sse": ["data: {not json\n\n"]},
    ]
    with LLMServer(turns) as server:
        model = openai_model(server.base_url)
        errored = final(collect(stream, model, Context(messages=[user()])))
        broken = final(collect(stream, model, Context(messages=[user()])))
    assert errored.stop_reason == "error" and errored.error_message == "Overloaded"
    assert errored.content == [TextContent(text="a b ")]
    assert broken.stop_reason == "error" and broken.error_message.startswith("Could not parse chunk as JSON")  # type: ignore[union-attr]


def test_fast_path_keeps_escapes_quotes_and_unicode_right() -> None:
    texts = ["plain ", 'with "quotes" ', "back\\slash ", "naïve ü ", "emoji 🙈 ", "tab\there ", "more "]
    chunks: list[Any] = [
        {"id": "f", "model": "mock-1", "choices": [{"index": 0, "delta": {"content": t}}]} for t in texts
    ]
    chunks.append(
        {"id": "f", "model": "mock-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    )
    with LLMServer([{"sse": [*chunks, "data: [DONE]\n\n"]}]) as server:
        events = collect(stream, openai_model(server.base_url), Context(messages=[user()]))
    assert [e.delta for e in events if e.type == "text_delta"] == texts
    assert final(events).content == [TextContent(text="".join(texts))]


# ---------------------------------------------------------------------------
# Errors, retries, network failures, abort, hooks
# ---------------------------------------------------------------------------


def no_retry(**changes: Any) -> StreamOptions:
    return StreamOptions(api_key="mock-key", extra={"max_retries": 0}, **changes)


def test_http_errors_are_worded_as_pi_words_them() -> None:
    turns = [
        {"error": {"status": 500}},
        {"status": 400, "error_body": {"error": {"message": "Bad thing", "type": "invalid_request_error"}}},
        {"status": 401},
        {"status": 403, "error_body": "plain text forbidden"},
        {
            "status": 429,
            "error_body": {"error": {"message": "Slow down", "metadata": {"raw": "upstream said no"}}},
        },
        {"status": 404, "error_body": {"detail": "nope"}},
    ]
    with LLMServer(turns) as server:
        model = openai_model(server.base_url)
        messages = [final(collect(stream, model, Context(messages=[user()]), no_retry())) for _ in turns]
    assert [m.error_message for m in messages] == [
        "500 The server had an error while processing your request. Sorry about that!",
        "400 Bad thing",
        "401 Incorrect API key provided.",
        "403 plain text forbidden",
        "429 Slow down\nupstream said no",
        "404 status code (no body)",
    ]
    for message in messages:
        assert message.stop_reason == "error" and message.content == []


def test_only_the_error_event_when_the_request_fails() -> None:
    with LLMServer([{"status": 500}]) as server:
        events = collect(stream, openai_model(server.base_url), Context(messages=[user()]), no_retry())
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "error"


def test_sdk_retries_transient_errors() -> None:
    turns = [
        {"status": 500},
        {"status": 429, "headers": {"retry-after-ms": "10"}},
        {"blocks": [{"text": "ok"}]},
    ]
    with LLMServer(turns) as server:
        started = time.monotonic()
        message = final(collect(stream, openai_model(server.base_url), Context(messages=[user()])))
        assert message.stop_reason == "stop" and len(server.requests) == 3
        assert time.monotonic() - started < 2


def test_persistent_500_is_tried_three_times_as_pi_does() -> None:
    # pi's transcript: 12 requests for 4 agent attempts (the SDK retries twice each time)
    assert len(pi_requests("f-retry-500-persistent-json")) == 12
    with LLMServer([{"error": {"status": 500}, "repeat": True}]) as server:
        message = final(collect(stream, openai_model(server.base_url), Context(messages=[user()])))
        assert len(server.requests) == 3
    expected = json.loads(
        (SAMPLES / "f-retry-500-persistent-json" / "stdout.txt").read_text().splitlines()[5]
    )
    assert message.error_message == expected["message"]["errorMessage"]


def test_client_errors_and_long_retry_after_are_not_retried() -> None:
    with LLMServer(
        [{"status": 400}, {"status": 429, "headers": {"retry-after": "120"}}, {"status": 409}]
    ) as server:
        model = openai_model(server.base_url)
        assert (
            final(collect(stream, model, Context(messages=[user()]))).error_message == "400 Invalid request."
        )
        assert len(server.requests) == 1
        limited = final(collect(stream, model, Context(messages=[user()])))
        assert limited.error_message == "429 Rate limit reached for requests."
        assert len(server.requests) == 2


def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = openai_model(f"http://127.0.0.1:{port}")
    events = collect(stream, model, Context(messages=[user()]), no_retry())
    assert [e.type for e in events] == ["error"]
    assert final(events).error_message == "Connection error."


def test_stream_cut_mid_way_keeps_the_partial_content() -> None:
    with LLMServer([{"blocks": [{"text": "one two three four"}], "cut_after": 3}]) as server:
        events = collect(stream, openai_model(server.base_url), Context(messages=[user()]))
    message = final(events)
    assert message.stop_reason == "error" and message.error_message == "terminated"
    assert message.content == [TextContent(text="one two three ")]
    assert [e.type for e in events][:2] == ["start", "text_start"]


def test_stalled_server_times_out() -> None:
    # had the client waited, the stall would end in an answer: the timed-out errors prove it did not
    turns = [{"blocks": [{"text": "x"}], "stall_s": 10}, {"blocks": [{"text": "y"}], "headers_delay_s": 10}]
    with LLMServer(turns) as server:
        stalled = final(
            collect(
                stream, openai_model(server.base_url), Context(messages=[user()]), no_retry(timeout_s=0.3)
            )
        )
        slow = final(
            collect(
                stream, openai_model(server.base_url), Context(messages=[user()]), no_retry(timeout_s=0.3)
            )
        )
    assert stalled.error_message == "Request timed out." and stalled.stop_reason == "error"
    assert slow.error_message == "Request timed out."


def test_abort_mid_stream_from_another_task_stops_at_once() -> None:
    message = final(assert_abort_ends_a_pause(stream, openai_model, pause_after=1))
    assert message.stop_reason == "aborted"
    assert message.content and message.content[0].text.startswith("a ")  # type: ignore[union-attr]


def test_abort_by_the_consumer_and_before_the_request() -> None:
    with LLMServer([{"blocks": [{"text": "a b c d e f"}]}]) as server:
        model = openai_model(server.base_url)

        async def run() -> list[StreamEvent]:
            controller = AbortController()
            events = []
            async for event in stream(
                model, Context(messages=[user()]), StreamOptions(api_key="k", signal=controller.signal)
            ):
                events.append(event)
                if event.type == "text_delta":
                    controller.abort()
            return events

        events = asyncio.run(run())
        assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
        controller = AbortController()
        controller.abort()
        early = collect(
            stream, model, Context(messages=[user()]), StreamOptions(api_key="k", signal=controller.signal)
        )
        assert len(server.requests) == 1  # nothing sent after the abort
    assert [e.type for e in early] == ["error"] and early[0].reason == "aborted"
    assert final(early).error_message == "Request was aborted."


def test_abort_during_a_stall() -> None:
    # a stall longer than the test's bound: only the abort can end it in time
    with LLMServer([{"blocks": [{"text": "x"}], "stall_s": 60}]) as server:
        model = openai_model(server.base_url)

        async def run() -> list[StreamEvent]:
            controller = AbortController()
            asyncio.get_running_loop().call_later(0.2, controller.abort)
            return [
                e
                async for e in stream(
                    model, Context(messages=[user()]), StreamOptions(api_key="k", signal=controller.signal)
                )
            ]

        events = asyncio.run(asyncio.wait_for(run(), timeout=30))
    assert [e.type for e in events] == ["start", "error"] and events[-1].reason == "aborted"


def test_on_payload_replaces_the_body_and_on_response_sees_the_answer() -> None:
    seen: dict[str, Any] = {}

    async def on_payload(payload: Any, model: Model) -> Any:
        seen["payload_model"] = payload["model"]
        return {**payload, "temperature": 0.5, "custom": True}

    async def on_response(status: int, headers: dict[str, str], model: Model) -> None:
        seen["status"] = status
        seen["header"] = headers.get("x-extra")

    with LLMServer([{"blocks": [{"text": "ok"}], "headers": {"x-extra": "1"}}]) as server:
        options = StreamOptions(api_key="k", on_payload=on_payload, on_response=on_response)
        collect(stream, openai_model(server.base_url), Context(messages=[user()]), options)
        body = server.requests[0]["body"]
    assert body["custom"] is True and body["temperature"] == 0.5
    assert seen == {"payload_model": "mock-1", "status": 200, "header": "1"}


def test_missing_api_key_is_an_error_event() -> None:
    events = collect(stream, openai_model("http://127.0.0.1:9"), Context(messages=[user()]), StreamOptions())
    assert [e.type for e in events] == ["error"]
    assert final(events).error_message == "No API key for provider: mock"


def test_registration_module_points_at_the_stream() -> None:
    from piko.plugins.providers import openai_completions

    registered: list[Any] = []
    openai_completions.piko_register_provider_apis(registered.append)
    assert registered[0].name == "openai-completions"
    assert registered[0].resolved("stream") is stream
    assert Path(openai_completions.__file__).read_text().count("import httpx") == 0
