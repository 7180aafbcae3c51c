"""anthropic-messages against the scripted server: pi's request bodies, thinking, caching, OAuth, errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from support.llm_server import LLMServer
from support.stream_runs import assert_abort_ends_a_pause
from support.streams import FIXTURES
from support.streams import anthropic_model
from support.streams import collect
from support.streams import final
from support.streams import pi_updates
from support.streams import summary
from support.streams import token_counts

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
from piko.plugins.providers.anthropic_messages import wire as am
from piko.plugins.providers.anthropic_messages.wire import stream

CAPTURE = FIXTURES / "pi_captures" / "anthropic-thinking-tools"
TOOL = ToolSpec(name="bash", description="Run a command", parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})  # fmt: skip


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def body_for(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    spec, _ = am.build_request(model, context, StreamOptions(api_key=options.pop("api_key", "k"), **options))
    return spec.body  # type: ignore[no-any-return]


def headers_for(model: Model, context: Context, **options: Any) -> dict[str, str]:
    spec, _ = am.build_request(model, context, StreamOptions(api_key=options.pop("api_key", "k"), **options))
    return spec.headers


# ---------------------------------------------------------------------------
# Conformance with a capture of the real pi
# ---------------------------------------------------------------------------


def captured() -> tuple[list[dict[str, Any]], list[Any]]:
    requests = json.loads((CAPTURE / "requests.json").read_text())
    messages = []
    for line in (CAPTURE / "stdout.jsonl").read_text().splitlines():
        data = json.loads(line)
        if data.get("type") == "message_end":
            messages.append(message_from_wire(data["message"]))
    return requests, messages


def captured_context(request: dict[str, Any], messages: list[Any]) -> Context:
    body = request["body"]
    tools = [
        ToolSpec(name=t["name"], description=t["description"], parameters=t["input_schema"])
        for t in body["tools"]
    ]
    return Context(system_prompt=body["system"][0]["text"], messages=messages, tools=tools)


def test_request_bodies_and_headers_equal_pis() -> None:
    requests, messages = captured()
    turns = json.loads((CAPTURE / "scenario.json").read_text())
    with LLMServer(turns) as server:
        model = anthropic_model(server.base_url)
        options = StreamOptions(api_key="mock-key", reasoning="medium")
        first = collect(stream, model, captured_context(requests[0], messages[:1]), options)
        collect(stream, model, captured_context(requests[1], messages[:3]), options)
        ours = server.requests
    assert [r["body"] for r in ours] == [r["body"] for r in requests]
    for mine, pis in zip(ours, requests, strict=True):
        for name in ("x-api-key", "anthropic-version", "anthropic-beta", "accept", "anthropic-dangerous-direct-browser-access", "content-type", "content-length"):  # fmt: skip
            assert mine["headers"][name] == pis["headers"][name], name
    # and the events decoded from the same stream are pi's
    assert summary(first)[1:-1] == pi_updates(CAPTURE / "stdout.jsonl", 0)
    assert final(first).content == messages[1].content


# ---------------------------------------------------------------------------
# Thinking
# ---------------------------------------------------------------------------


def test_thinking_budgets_per_level() -> None:
    model = anthropic_model("http://h", max_tokens=64000)
    context = Context(messages=[user()])
    expected = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384}
    for level, budget in expected.items():
        body = body_for(model, context, reasoning=level)
        assert body["thinking"] == {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
        assert body["max_tokens"] == 32000 + budget
    custom = body_for(model, context, reasoning="high", thinking_budgets={"high": 4000})
    assert custom["thinking"]["budget_tokens"] == 4000 and custom["max_tokens"] == 36000
    # the model's limit wins; the budget leaves 1024 tokens of output when it must
    small = anthropic_model("http://h", max_tokens=8000)
    clamped = body_for(small, context, reasoning="high")
    assert clamped["max_tokens"] == 8000 and clamped["thinking"]["budget_tokens"] == 6976
    off = body_for(model, context, temperature=0.3)
    assert off["thinking"] == {"type": "disabled"} and off["temperature"] == 0.3
    assert "temperature" not in body_for(model, context, reasoning="low", temperature=0.3)
    plain = anthropic_model("http://h", reasoning=False)
    assert "thinking" not in body_for(plain, context, reasoning="high")


def test_adaptive_thinking_models() -> None:
    model = anthropic_model("http://h", id="claude-opus-4-6")
    body = body_for(model, Context(messages=[user()]), reasoning="minimal")
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "low"} and body["max_tokens"] == 32000
    mapped = anthropic_model("http://h", id="claude-opus-4-7", thinking_level_map={"xhigh": "xhigh"})
    assert body_for(mapped, Context(messages=[user()]), reasoning="xhigh")["output_config"] == {
        "effort": "xhigh"
    }
    assert "anthropic-beta" not in headers_for(model, Context(messages=[user()]))
    assert (
        headers_for(anthropic_model("http://h"), Context(messages=[user()]))["anthropic-beta"]
        == am.INTERLEAVED_THINKING_BETA
    )


def test_signed_redacted_and_unsigned_thinking_replay() -> None:
    model = anthropic_model("http://h")
    own = AssistantMessage(
        content=[
            ThinkingContent(thinking="signed", thinking_signature="sig1"),
            ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque", redacted=True),
            ThinkingContent(thinking="unsigned", thinking_signature=""),
            TextContent(text="answer"),
        ],
        api="anthropic-messages", provider="mock-anthropic", model="mock-claude",
    )  # fmt: skip
    body = body_for(model, Context(messages=[user(), own, user("more")]))
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "signed", "signature": "sig1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "unsigned"},
        {"type": "text", "text": "answer"},
    ]
    foreign = AssistantMessage(content=own.content, api="openai-completions", provider="mock", model="mock-1")
    body = body_for(model, Context(messages=[user(), foreign, user("more")]))
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "signed"},
        {"type": "text", "text": "unsigned"},
        {"type": "text", "text": "answer"},
    ]


def test_redacted_thinking_and_signatures_are_decoded() -> None:
    turn = {
        "blocks": [
            {"redacted_thinking": "ENCRYPTED"},
            {"thinking": "visible", "signature": "abc"},
            {"text": "Hi"},
        ]
    }
    with LLMServer([turn]) as server:
        message = final(collect(stream, anthropic_model(server.base_url), Context(messages=[user()])))
    assert message.content[0] == ThinkingContent(
        thinking="[Reasoning redacted]", thinking_signature="ENCRYPTED", redacted=True
    )
    assert message.content[1] == ThinkingContent(thinking="visible", thinking_signature="abc")
    assert message.content[2] == TextContent(text="Hi")
    assert all(block.extra == {} for block in message.content)


# ---------------------------------------------------------------------------
# Caching, tools, messages
# ---------------------------------------------------------------------------


def test_cache_retention() -> None:
    model = anthropic_model("http://h")
    context = Context(system_prompt="sys", messages=[user()], tools=[TOOL])
    short = body_for(model, context)
    assert short["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert short["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert short["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    long = body_for(model, context, cache_retention="long")
    assert long["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    none = json.dumps(body_for(model, context, cache_retention="none"))
    assert "cache_control" not in none
    no_long = anthropic_model("http://h", compat={"supportsLongCacheRetention": False})
    assert body_for(no_long, context, cache_retention="long")["system"][0]["cache_control"] == {
        "type": "ephemeral"
    }


def test_tool_results_images_and_fine_grained_streaming() -> None:
    image = ImageContent(data="aW1n", mime_type="image/jpeg")
    history = [
        UserMessage(content=[TextContent(text="  "), TextContent(text="see"), image], timestamp=1),
        AssistantMessage(content=[ToolCall(id="call|weird id", name="bash", arguments={"command": "ls"}),
                                  ToolCall(id="t2", name="bash", arguments={})],
                         api="openai-responses", provider="openai", model="gpt", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call|weird id", tool_name="bash", content=[TextContent(text="a"), TextContent(text="b")]),
        ToolResultMessage(tool_call_id="t2", tool_name="bash", content=[image], is_error=True),
    ]  # fmt: skip
    model = anthropic_model(
        "http://h", input=["text", "image"], compat={"supportsEagerToolInputStreaming": False}
    )
    context = Context(messages=history, tools=[TOOL])
    body = body_for(model, context, cache_retention="none")
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "aW1n"}},
    ]
    assert body["messages"][1]["content"][0]["id"] == "call_weird_id"
    results = body["messages"][2]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "call_weird_id",
        "content": "a\nb",
        "is_error": False,
    }
    assert (
        results[1]["content"][0] == {"type": "text", "text": "(see attached image)"}
        and results[1]["is_error"] is True
    )
    assert "eager_input_streaming" not in body["tools"][0]
    assert am.FINE_GRAINED_TOOL_STREAMING_BETA in headers_for(model, context)["anthropic-beta"]


def test_oauth_tokens_are_sent_as_claude_code_sends_them() -> None:
    turn = {"blocks": [{"tool_call": {"name": "Bash", "arguments": {"command": "ls"}}}]}
    tools = [ToolSpec(name="bash", parameters=TOOL.parameters), ToolSpec(name="my_tool")]
    with LLMServer([turn]) as server:
        model = anthropic_model(server.base_url)
        message = final(collect(stream, model, Context(system_prompt="sys", messages=[user()], tools=tools),
                                StreamOptions(api_key="sk-ant-oat01-secret")))  # fmt: skip
        request = server.requests[0]
    headers = request["headers"]
    assert headers["authorization"] == "Bearer sk-ant-oat01-secret" and "x-api-key" not in headers
    assert (
        headers["anthropic-beta"] == "claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14"
    )
    assert headers["user-agent"] == "claude-cli/2.1.75" and headers["x-app"] == "cli"
    body = request["body"]
    assert [s["text"] for s in body["system"]] == [
        "You are Claude Code, Anthropic's official CLI for Claude.",
        "sys",
    ]
    assert [t["name"] for t in body["tools"]] == ["Bash", "my_tool"]
    call = message.content[0]
    assert isinstance(call, ToolCall) and call.name == "bash"  # mapped back to the tool's own name


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------


def test_text_thinking_tool_use_and_usage() -> None:
    turn = {
        "blocks": [{"thinking": "plan"}, {"text": "Hello world"}, {"tool_call": {"name": "bash", "arguments": {"command": "echo a long command line"}}}],
        "usage": {"input": 50, "output": 40, "cacheRead": 1000, "cacheWrite": 200},
    }  # fmt: skip
    with LLMServer([turn]) as server:
        model = anthropic_model(
            server.base_url, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
        )

        async def run() -> tuple[list[StreamEvent], list[dict[str, Any]]]:
            events, partials = [], []
            async for event in stream(
                model, Context(messages=[user()], tools=[TOOL]), StreamOptions(api_key="k")
            ):
                events.append(event)
                if event.type == "toolcall_delta" and event.partial is not None:
                    partials.append(dict(event.partial.content[2].arguments))  # type: ignore[union-attr]
            return events, partials

        events, partials = asyncio.run(run())
    message = final(events)
    assert message.stop_reason == "toolUse" and message.response_id == "msg_mock0001"
    usage = message.usage
    assert token_counts(usage) == (50, 40, 1000, 200, 1290)
    assert usage.cost.cache_write == 3.75 / 1_000_000 * 200
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert "".join(deltas) == '{"command":"echo a long command line"}' and len(deltas) > 2
    assert partials[:2] == [{"command": ""}, {"command": "echo a long "}]  # parsed as it streams
    assert message.content[2].arguments == {"command": "echo a long command line"}  # type: ignore[union-attr]


def test_stop_reasons() -> None:
    turns = [
        {"blocks": [{"text": "cut"}], "stop_reason": "max_tokens"},
        {"blocks": [{"text": "no"}], "stop_reason": "refusal"},
        {"blocks": [{"text": "?"}], "stop_reason": "brand_new_reason"},
        {"blocks": [{"text": "p"}], "stop_reason": "pause_turn"},
    ]
    with LLMServer(turns) as server:
        model = anthropic_model(server.base_url)
        results = [final(collect(stream, model, Context(messages=[user()]))) for _ in turns]
    assert results[0].stop_reason == "length"
    assert (results[1].stop_reason, results[1].error_message) == ("error", "An unknown error occurred")
    assert (results[2].stop_reason, results[2].error_message) == (
        "error",
        "Unhandled stop reason: brand_new_reason",
    )
    assert results[3].stop_reason == "stop"


def test_errors() -> None:
    turns = [
        {"status": 529},
        {"status": 429, "headers": {"retry-after": "90"}},
        {"status": 401},
        {"blocks": [{"text": "a b c"}], "stream_error": {"after": 3}},
        {"sse": [{"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}}]},
    ]
    with LLMServer(turns) as server:
        model = anthropic_model(server.base_url)
        options = StreamOptions(api_key="k", extra={"max_retries": 0})
        messages = [final(collect(stream, model, Context(messages=[user()]), options)) for _ in turns]
    assert [m.error_message for m in messages] == [
        '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit."}}',
        '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        "Anthropic stream ended before message_stop",
    ]
    assert messages[3].content == [TextContent(text="a ")]
    assert messages[4].usage.input == 3


def test_overloaded_is_retried_by_default() -> None:
    with LLMServer([{"status": 529}, {"blocks": [{"text": "fine"}]}]) as server:
        message = final(collect(stream, anthropic_model(server.base_url), Context(messages=[user()])))
        assert message.content == [TextContent(text="fine")] and len(server.requests) == 2


def test_abort_mid_stream() -> None:
    assert_abort_ends_a_pause(stream, anthropic_model, pause_after=3)


def test_registration_module_points_at_the_stream() -> None:
    from piko.plugins.providers import anthropic_messages

    registered: list[Any] = []
    anthropic_messages.piko_register_provider_apis(registered.append)
    assert registered[0].name == "anthropic-messages" and registered[0].resolved("stream") is stream
