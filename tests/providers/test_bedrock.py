"""The bedrock-converse-stream API against a real HTTP server speaking the AWS event-stream format."""

from __future__ import annotations

import os
from typing import Any

import pytest
from support.llm_server import LLMServer
from support.stream_runs import SEQUENTIAL_READS
from support.stream_runs import PiRecording
from support.stream_runs import assert_cut_stall_and_abort
from support.stream_runs import broken_off
from support.stream_runs import claude_message
from support.stream_runs import collect
from support.stream_runs import context
from support.stream_runs import model
from support.stream_runs import options_factory
from support.stream_runs import reading_turn
from support.stream_runs import refused
from support.stream_runs import stream_fn
from support.stream_runs import types
from support.streams import token_counts
from support.wire_bedrock import error_turn

from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.plugins.providers import aws_sigv4
from piko.plugins.providers.aws_eventstream import encode_event
from piko.plugins.providers.bedrock_converse.wire import build_body
from piko.plugins.providers.bedrock_converse.wire import http_error_message
from piko.plugins.providers.bedrock_converse.wire import model_url
from piko.plugins.providers.bedrock_converse.wire import resolve_endpoint

API = "bedrock-converse-stream"
CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
stream = stream_fn("bedrock_converse.wire")


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")


def bedrock(server: LLMServer | None, model_id: str = CLAUDE, **fields: Any):
    fields.setdefault("provider", "amazon-bedrock")
    base_url = fields.pop(
        "base_url", server.base_url if server else "https://bedrock-runtime.us-east-1.amazonaws.com"
    )
    return model(API, base_url, model_id, **fields)


opts = options_factory()


def test_text_thinking_tools_usage_and_signing() -> None:
    usage = {"input": 70, "output": 30, "cacheRead": 20, "cacheWrite": 5}
    turn = reading_turn(
        "Think first.", "Reading two.", {"path": "a"}, {"path": "b", "deep": {"x": [1, 2]}}, usage=usage
    )
    with LLMServer([turn]) as server:
        events = collect(stream, bedrock(server, reasoning=True), context(), opts(reasoning="low"))
        request = server.requests[0]
        base_url = server.base_url
    assert types(events) == SEQUENTIAL_READS
    message = events[-1].message
    assert message is not None and message.stop_reason == "toolUse" and message.api == API
    thinking, text, first, second = message.content
    assert (
        isinstance(thinking, ThinkingContent)
        and thinking.thinking == "Think first."
        and thinking.thinking_signature
    )
    assert isinstance(text, TextContent) and text.text == "Reading two."
    assert (
        isinstance(first, ToolCall) and first.arguments == {"path": "a"} and first.id.startswith("tooluse_")
    )
    assert isinstance(second, ToolCall) and second.arguments == {"path": "b", "deep": {"x": [1, 2]}}
    usage = message.usage
    assert token_counts(usage) == (70, 30, 20, 5, 125)
    assert usage.cost.total == pytest.approx((3 * 70 + 15 * 30 + 0.3 * 20 + 3.75 * 5) / 1e6)
    # the request: URL-escaped model id, a SigV4 signature that verifies
    assert request["path"] == "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
    headers = request["headers"]
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/bedrock/aws4_request" in headers["authorization"]
    assert verify_signature(request, base_url)
    assert request["body"]["additionalModelRequestFields"]["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2048,
        "display": "summarized",
    }


def verify_signature(request: dict[str, Any], base_url: str) -> bool:
    """Recompute the signature from what the server received (as AWS does on its side)."""
    import json

    raw_body = json.dumps(request["body"], separators=(",", ":"), ensure_ascii=False).encode()
    signed = request["headers"]["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {name: request["headers"][name] for name in signed}
    credentials = aws_sigv4.Credentials(
        access_key_id="AKIDEXAMPLE", secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"]
    )
    again = aws_sigv4.sign(
        "POST",
        base_url + request["path"],
        headers,
        raw_body,
        credentials,
        region="us-east-1",
        service="bedrock",
    )
    return again.headers["authorization"] == request["headers"]["authorization"]


def test_session_token_and_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "tok")
    with LLMServer([{"blocks": [{"text": "a"}]}, {"blocks": [{"text": "b"}]}]) as server:
        collect(stream, bedrock(server), context(), opts())
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bearer-123")
        events = collect(stream, bedrock(server), context(), opts())
        first, second = server.requests
    assert first["headers"]["x-amz-security-token"] == "tok"
    assert "x-amz-security-token" in first["headers"]["authorization"].split("SignedHeaders=")[1].split(",")[
        0
    ].split(";")
    assert second["headers"]["authorization"] == "Bearer bearer-123"
    assert events[-1].type == "done"


def test_missing_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    events = collect(stream, bedrock(None), context(), opts())
    assert [e.type for e in events] == ["error"]
    assert (
        events[0].error is not None
        and events[0].error.error_message == "Could not load credentials from any providers"
    )


def test_region_and_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    standard = bedrock(None, base_url="https://bedrock-runtime.eu-west-1.amazonaws.com")
    assert resolve_endpoint(standard, opts()) == (
        "https://bedrock-runtime.eu-west-1.amazonaws.com",
        "eu-west-1",
    )
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    assert resolve_endpoint(standard, opts()) == (
        "https://bedrock-runtime.ap-south-1.amazonaws.com",
        "ap-south-1",
    )
    proxy = bedrock(None, base_url="https://proxy.example/bedrock/")
    assert resolve_endpoint(proxy, opts()) == ("https://proxy.example/bedrock", "ap-south-1")
    monkeypatch.delenv("AWS_REGION")
    assert resolve_endpoint(proxy, opts()) == ("https://proxy.example/bedrock", "us-east-1")
    assert model_url("https://h", "arn:aws:bedrock:us-east-1:1:inference-profile/x") == (
        "https://h/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fx/converse-stream"
    )


def test_history_cache_points_and_tool_results() -> None:
    call = ToolCall(id="toolu_1|odd id", name="read", arguments={"path": "a"})
    assistant = claude_message(
        ThinkingContent(thinking="t", thinking_signature="sig"),
        TextContent(text="x"),
        call,
        model="claude-sonnet-4",
    )
    results = [
        ToolResultMessage(tool_call_id="toolu_1|odd id", tool_name="read", content=[TextContent(text="A")]),
    ]
    ctx = Context(system_prompt="sys", messages=[UserMessage(content="go"), assistant, *results])
    body = build_body(bedrock(None), ctx, opts(cache_retention="long"))
    assert body["system"] == [{"text": "sys"}, {"cachePoint": {"type": "default", "ttl": "1h"}}]
    # another model's thinking became text; the id was cleaned for Bedrock
    assert body["messages"][1]["content"] == [
        {"text": "t"},
        {"text": "x"},
        {"toolUse": {"toolUseId": "toolu_1_odd_id", "name": "read", "input": {"path": "a"}}},
    ]
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "toolu_1_odd_id", "content": [{"text": "A"}], "status": "success"}},
        {"cachePoint": {"type": "default", "ttl": "1h"}},
    ]
    nova = build_body(bedrock(None, "amazon.nova-pro-v1:0"), ctx, opts())
    assert "cachePoint" not in str(nova)


def test_adaptive_thinking_models() -> None:
    m = bedrock(None, "us.anthropic.claude-opus-4-6-v1", reasoning=True)
    body = build_body(m, context(), opts(reasoning="xhigh"))
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "high"},
    }
    assert body["inferenceConfig"] == {"maxTokens": 16384}


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "Validation error: The provided model identifier is invalid."),
        (403, "AccessDeniedException: You don't have access to the model with the specified model ID."),
    ],
)
def test_http_errors_use_pis_prefixes(status: int, message: str) -> None:
    assert refused(stream, bedrock, opts(), error_turn(status)) == (message, 1)


def test_throttling_is_retried_like_the_sdk() -> None:
    turn = error_turn(429, repeat=True, headers={"retry-after": "0"})
    throttled = "Throttling error: Too many requests, please wait before trying again."
    assert refused(stream, bedrock, opts(), turn) == (throttled, 3)  # the AWS SDK's three attempts


def test_server_errors_are_retried_and_unknown_types_named() -> None:
    # what the real pi reported for these answers (three tries for a 500, one for a 401)
    internal = "Internal server error: The system encountered an unexpected error during processing. Try your request again."
    assert refused(stream, bedrock, opts(), error_turn(500, repeat=True)) == (internal, 3)
    assert refused(stream, bedrock, opts(), error_turn(401, repeat=True)) == ("UnknownError: Error 401", 1)


def test_error_wording_without_a_type() -> None:
    assert http_error_message(500, {}, b"") == "500: UnknownError"
    assert (
        http_error_message(400, {}, b'{"__type":"com.amazon#ValidationException","Message":"m"}')
        == "Validation error: m"
    )


def test_exception_frame_in_the_stream() -> None:
    body = {"type": "modelStreamErrorException", "message": "broke"}
    message = broken_off(stream, bedrock, opts(), after=2, body=body, text="a b c")
    assert message == "Model stream error: broke"


def test_corrupted_frame_is_an_error() -> None:
    good = encode_event("messageStart", b'{"role":"assistant"}')
    bad = bytearray(encode_event("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"hi"}}'))
    bad[-5] ^= 0xFF  # payload byte: the message CRC no longer matches
    with LLMServer([{"sse": [good, bytes(bad)]}]) as server:
        events = collect(stream, bedrock(server), context(), opts())
    assert events[-1].error is not None and events[-1].error.error_message == "message checksum mismatch"


def test_cut_stall_abort() -> None:
    events = assert_cut_stall_and_abort(stream, bedrock, opts, cut_after=3)
    assert events[-1].error is not None and events[-1].error.error_message == "Request was aborted"


def test_max_tokens_stop_and_on_payload() -> None:
    async def on_payload(payload: Any, _model: Any) -> Any:
        return {**payload, "inferenceConfig": {"maxTokens": 7}}

    with LLMServer([{"blocks": [{"text": "cut"}], "stop_reason": "max_tokens"}]) as server:
        events = collect(stream, bedrock(server), context(), opts(on_payload=on_payload))
        body = server.requests[0]["body"]
    assert events[-1].reason == "length"
    assert body["inferenceConfig"] == {"maxTokens": 7} and "modelId" not in body


def test_request_body_matches_what_pi_sends(pi_recording: PiRecording) -> None:
    m = pi_recording.request_model(bedrock, base_url="http://127.0.0.1:1")

    def build(messages: list[Any], request: dict[str, Any]) -> Any:
        body = request["body"]
        specs = [t["toolSpec"] for t in body["toolConfig"]["tools"]]
        tools = pi_recording.tool_specs(specs, lambda t: t["inputSchema"]["json"])
        ctx = Context(system_prompt=body["system"][0]["text"], messages=messages, tools=tools)
        ours = build_body(m, ctx, opts(reasoning="medium"))
        assert ours.pop("modelId") == m.id
        return ours

    for request in pi_recording.assert_request_bodies(build):
        assert request["path"] == "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"


def test_streamed_message_matches_pis(pi_recording: PiRecording) -> None:
    pi_recording.assert_streamed_message(stream, bedrock, opts(reasoning="medium"))
