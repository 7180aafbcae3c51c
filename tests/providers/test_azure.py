"""The azure-openai-responses API: Azure's URL, key header and deployment names on the responses wire."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.llm_server import LLMServer
from support.llm_server import cassette_turns
from support.provider_wires import WIRES
from support.stream_runs import PiRecording
from support.stream_runs import collect
from support.stream_runs import collect_aborting
from support.stream_runs import context
from support.stream_runs import model
from support.stream_runs import options_factory
from support.stream_runs import types
from support.streams import CASSETTES

from piko.data.messages import ToolCall
from piko.data.streaming import Context
from piko.plugins.providers.azure_openai_responses.wire import build_params
from piko.plugins.providers.azure_openai_responses.wire import normalize_base_url
from piko.plugins.providers.azure_openai_responses.wire import parse_deployment_map
from piko.plugins.providers.azure_openai_responses.wire import resolve_config

API = "azure-openai-responses"
stream = WIRES[API].stream
azure = WIRES[API].model


@pytest.fixture(autouse=True)
def _no_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_RESOURCE_NAME", "AZURE_OPENAI_API_VERSION",
                 "AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "AZURE_OPENAI_API_KEY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


opts = options_factory(api_key="azure-key")


def test_streams_text_and_tools_with_the_api_key_header(monkeypatch: pytest.MonkeyPatch) -> None:
    turn = {"blocks": [{"text": "Reading."}, {"tool_call": {"name": "read", "arguments": {"path": "x"}}}]}
    with LLMServer([turn]) as server:
        monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-test=my-deploy, other=x")
        events = collect(stream, azure(server), context(), opts())
        request = server.requests[0]
    assert types(events) == ["start", "text_start", "text_end", "toolcall_start", "toolcall_end", "done"]
    message = events[-1].message
    assert message is not None and message.api == API and message.stop_reason == "toolUse"
    assert isinstance(message.content[1], ToolCall) and message.content[1].arguments == {"path": "x"}
    assert request["path"] == "/openai/v1/responses"
    assert request["query"] == {"api-version": "v1"}
    assert request["headers"]["api-key"] == "azure-key"
    assert "authorization" not in request["headers"]
    assert request["body"]["model"] == "my-deploy"
    assert "store" not in request["body"]


def test_base_url_and_version_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
        monkeypatch.setenv("AZURE_OPENAI_BASE_URL", server.base_url + "/custom/")
        monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")
        events = collect(stream, model(API, "http://127.0.0.1:9/ignored", "gpt-test"), context(), opts())
        request = server.requests[0]
    assert events[-1].type == "done"
    assert request["path"] == "/custom/responses"
    assert request["query"] == {"api-version": "2025-04-01-preview"}


def test_config_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    m = model(API, "", "gpt-test")
    with pytest.raises(Exception, match="Azure OpenAI base URL is required"):
        resolve_config(m, opts())
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "myres")
    assert resolve_config(m, opts()) == ("https://myres.openai.azure.com/openai/v1", "v1")
    assert normalize_base_url("https://x.openai.azure.com") == "https://x.openai.azure.com/openai/v1"
    assert (
        normalize_base_url("https://x.cognitiveservices.azure.com/openai/")
        == "https://x.cognitiveservices.azure.com/openai/v1"
    )
    assert normalize_base_url("https://proxy.example/azure/") == "https://proxy.example/azure"
    assert parse_deployment_map("a=b,,bad, c = d ,=e") == {"a": "b", "c": "d"}


def test_missing_base_url_is_an_error_event() -> None:
    events = collect(stream, model(API, "", "gpt-test"), context(), opts())
    assert [e.type for e in events] == ["error"]
    assert events[0].error is not None and events[0].error.error_message is not None
    assert events[0].error.error_message.startswith("Azure OpenAI base URL is required.")


def test_rate_limit_retry_and_abort() -> None:
    turns = [
        {"status": 429, "headers": {"retry-after": "0"}},
        {"blocks": [{"text": "a b c d e f g h"}], "delay_s": 0.2},
    ]
    with LLMServer(turns) as server:
        events, seconds = collect_aborting(stream, azure(server), context(), opts())
        assert len(server.requests) == 2
    assert events[-1].reason == "aborted" and seconds < 0.5


def test_recorded_auth_failure_cassette() -> None:
    """pi_agent_rust's recorded Azure 401 body, served verbatim."""
    cassette = CASSETTES / "azure_auth_failure_401.json"
    expected = json.loads(json.loads(cassette.read_text())["interactions"][0]["response"]["body_chunks"][0])
    with LLMServer(cassette_turns(cassette)) as server:
        events = collect(stream, azure(server), context(), opts())
    assert events[-1].error is not None
    assert events[-1].error.error_message == f"401 {expected['error']['message']}"


def test_request_body_matches_what_pi_sends(pi_recording: PiRecording) -> None:
    m = pi_recording.request_model(azure)

    def build(ctx: Context, session_id: str) -> Any:
        return build_params(m, ctx, opts(reasoning="medium", session_id=session_id), m.id)

    for request in pi_recording.assert_responses_bodies(build):
        assert request["query"] == {"api-version": "v1"} and request["headers"]["api-key"] == "test-key"


def test_streamed_message_matches_pis(pi_recording: PiRecording) -> None:
    pi_recording.assert_streamed_message(stream, azure, opts(reasoning="medium"))
