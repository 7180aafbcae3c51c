"""The google-generative-ai API against a real HTTP server speaking Gemini's streamGenerateContent SSE."""

from __future__ import annotations

from typing import Any

import pytest
from support.llm_server import LLMServer
from support.llm_server import cassette_turns
from support.provider_wires import WIRES
from support.stream_runs import SEQUENTIAL_READS
from support.stream_runs import PiRecording
from support.stream_runs import assert_cut_stall_and_abort
from support.stream_runs import broken_off
from support.stream_runs import collect
from support.stream_runs import context
from support.stream_runs import options_factory
from support.stream_runs import reading_turn
from support.stream_runs import types
from support.streams import CASSETTES

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.plugins.providers.google_generative_ai.wire import build_body
from piko.plugins.providers.google_generative_ai.wire import convert_messages
from piko.plugins.providers.google_generative_ai.wire import thinking_config

API = "google-generative-ai"
stream = WIRES[API].stream
gemini = WIRES[API].model
opts = options_factory(api_key="gem-key")


def test_text_thinking_and_parallel_calls_with_signatures() -> None:
    usage = {"input": 50, "output": 30, "cacheRead": 10}
    turn = reading_turn("Two files to read.", "Reading both.", {"path": "a"}, {"path": "b"}, usage=usage)
    with LLMServer([turn]) as server:
        events = collect(stream, gemini(server, reasoning=True), context(), opts(reasoning="medium"))
        request = server.requests[0]
    assert types(events) == SEQUENTIAL_READS
    message = events[-1].message
    assert message is not None and message.stop_reason == "toolUse" and message.api == API
    thinking, text, first, second = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Two files to read."
    assert thinking.thinking_signature  # the last thought part's signature
    assert isinstance(text, TextContent) and text.text == "Reading both."
    assert isinstance(first, ToolCall) and isinstance(second, ToolCall)
    assert first.arguments == {"path": "a"} and second.arguments == {"path": "b"}
    assert first.id != second.id and first.id.startswith("read_")
    assert first.thought_signature and second.thought_signature
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.total_tokens) == (50, 30, 10, 90)
    assert usage.cost.total == pytest.approx((3 * 50 + 15 * 30 + 0.3 * 10) / 1e6)
    assert request["path"] == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert request["query"] == {"alt": "sse"}
    assert request["headers"]["x-goog-api-key"] == "gem-key"
    assert request["body"]["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 8192,
    }


def test_signatures_are_replayed_to_the_same_model_only() -> None:
    sig = "c2lnbmF0dXJl"
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="hm", thinking_signature=sig),
            TextContent(text="ok", text_signature=sig),
            ToolCall(id="read_1", name="read", arguments={"path": "a"}, thought_signature=sig),
        ],
        api=API,
        provider="google",
        model="gemini-2.5-flash",
        stop_reason="toolUse",
    )
    result = ToolResultMessage(
        tool_call_id="read_1", tool_name="read", content=[TextContent(text="A")], is_error=True
    )
    ctx = Context(messages=[UserMessage(content="go"), assistant, result])
    same = convert_messages(gemini(None), ctx)
    assert same[1] == {
        "role": "model",
        "parts": [
            {"thought": True, "text": "hm", "thoughtSignature": sig},
            {"text": "ok", "thoughtSignature": sig},
            {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": sig},
        ],
    }
    assert same[2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read", "response": {"error": "A"}}}],
    }
    other = convert_messages(gemini(None, "gemini-2.5-pro"), ctx)
    assert other[1]["parts"] == [
        {"text": "hm"},
        {"text": "ok"},
        {"functionCall": {"name": "read", "args": {"path": "a"}}},
    ]
    # an invalid (non-base64) signature is never sent
    assistant.content[1] = TextContent(text="ok", text_signature="not base64!")
    assert convert_messages(gemini(None), ctx)[1]["parts"][1] == {"text": "ok"}


def test_thinking_config_per_model_family() -> None:
    def config(model_id: str, level: str | None, **extra: Any) -> Any:
        return thinking_config(gemini(None, model_id, reasoning=True), opts(reasoning=level, **extra))

    assert config("gemini-2.5-pro", "minimal") == {"includeThoughts": True, "thinkingBudget": 128}
    assert config("gemini-2.5-flash-lite", "high") == {"includeThoughts": True, "thinkingBudget": 24576}
    assert config("gemini-2.5-flash", "low", thinking_budgets={"low": 999}) == {
        "includeThoughts": True,
        "thinkingBudget": 999,
    }
    assert config("gemini-3-pro-preview", "medium") == {"includeThoughts": True, "thinkingLevel": "HIGH"}
    assert config("gemini-3-flash-preview", "low") == {"includeThoughts": True, "thinkingLevel": "LOW"}
    assert config("gemma-4-27b", "low") == {"includeThoughts": True, "thinkingLevel": "MINIMAL"}
    assert config("gemini-exp", "medium") == {"includeThoughts": True, "thinkingBudget": -1}
    assert config("gemini-2.5-flash", None) == {"thinkingBudget": 0}
    assert config("gemini-3-pro-preview", None) == {"thinkingLevel": "LOW"}
    assert config("gemini-3-flash-preview", None) == {"thinkingLevel": "MINIMAL"}
    assert thinking_config(gemini(None), opts(reasoning="high")) is None  # not a reasoning model


def test_images_and_tool_result_images() -> None:
    from piko.data.messages import ImageContent

    result = ToolResultMessage(
        tool_call_id="c", tool_name="read", content=[ImageContent(data="AAAA", mime_type="image/png")]
    )
    call = AssistantMessage(content=[ToolCall(id="c", name="read", arguments={})], api=API, provider="google",
                            model="gemini-2.5-flash", stop_reason="toolUse")  # fmt: skip
    ctx = Context(messages=[UserMessage(content="go"), call, result])
    two = convert_messages(gemini(None, input=["text", "image"]), ctx)
    assert two[2]["parts"][0]["functionResponse"]["response"] == {"output": "(see attached image)"}
    assert two[3] == {
        "role": "user",
        "parts": [{"text": "Tool result image:"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}],
    }
    three = convert_messages(gemini(None, "gemini-3-pro-preview", input=["text", "image"]), ctx)
    assert three[2]["parts"][0]["functionResponse"]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}
    ]
    text_only = convert_messages(gemini(None), ctx)
    assert text_only[2]["parts"][0]["functionResponse"]["response"] == {
        "output": "(tool image omitted: model does not support images)"
    }


def test_non_json_error_body_is_wrapped() -> None:
    with LLMServer([{"status": 500, "error_body": "upstream failed"}]) as server:
        events = collect(stream, gemini(server), context(), opts())
    assert events[-1].error is not None
    assert (
        events[-1].error.error_message
        == '{"error":{"message":"upstream failed","code":500,"status":"Internal Server Error"}}'
    )


def test_error_chunk_in_the_stream() -> None:
    message = broken_off(stream, gemini, opts(), after=2, body=None, text="one two three")
    assert message.startswith('got status: INTERNAL. {"error":{"code":500')


def test_safety_stop_is_an_error() -> None:
    with LLMServer([{"blocks": [{"text": "no"}], "stop_reason": "SAFETY"}]) as server:
        events = collect(stream, gemini(server), context(), opts())
    assert events[-1].error is not None and events[-1].error.error_message == "An unknown error occurred"


def test_max_tokens_is_length() -> None:
    with LLMServer([{"blocks": [{"text": "cut"}], "stop_reason": "MAX_TOKENS"}]) as server:
        events = collect(stream, gemini(server), context(), opts())
    assert events[-1].reason == "length"


def test_cut_stall_and_abort() -> None:
    assert_cut_stall_and_abort(stream, gemini, opts)


def test_recorded_cassettes_replay() -> None:
    """pi_agent_rust's Gemini cassettes: text split across chunks, a rate limit body."""
    with LLMServer(cassette_turns(CASSETTES / "gemini_multi_paragraph.json")) as server:
        events = collect(stream, gemini(server, "gemini-1.5-flash"), context(), opts())
    message = events[-1].message
    assert message is not None and message.content[0].text == "Paragraph 1.\n\nParagraph 2."  # type: ignore[union-attr]
    assert message.usage.input == 35 and message.usage.output == 12
    with LLMServer(cassette_turns(CASSETTES / "gemini_rate_limit_429.json")) as server:
        events = collect(stream, gemini(server, "gemini-1.5-flash"), context(), opts())
    assert events[-1].error is not None
    assert '"RESOURCE_EXHAUSTED"' in (events[-1].error.error_message or "")


def test_request_body_matches_what_pi_sends(pi_recording: PiRecording) -> None:
    m = pi_recording.request_model(gemini)

    def build(messages: list[Any], request: dict[str, Any]) -> Any:
        body = request["body"]
        decl = body["tools"][0]["functionDeclarations"]
        tools = pi_recording.tool_specs(decl, lambda t: t["parametersJsonSchema"])
        ctx = Context(
            system_prompt=body["systemInstruction"]["parts"][0]["text"], messages=messages, tools=tools
        )
        return build_body(m, ctx, opts(reasoning="medium"))

    for request in pi_recording.assert_request_bodies(build):
        assert request["query"] == {"alt": "sse"} and request["headers"]["x-goog-api-key"] == "test-key"


def test_streamed_message_matches_pis(pi_recording: PiRecording) -> None:
    # tool call ids are generated from the clock
    pi_recording.assert_streamed_message(stream, gemini, opts(reasoning="medium"), ignore_ids=True)
