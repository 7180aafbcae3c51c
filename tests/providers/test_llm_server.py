"""The scripted LLM server: formats, directives, recording, replay, and its command-line mode."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.llm_server import LLMServer
from support.llm_server import TurnContext
from support.llm_server import WireFormat
from support.llm_server import as_bytes
from support.llm_server import block_hash
from support.llm_server import cassette_turns
from support.llm_server import pieces
from support.llm_server import register_format
from support.llm_server import words
from support.streams import CASSETTES
from support.streams import SAMPLES


def sse_datas(text: str) -> list[str]:
    return [line[6:] for line in text.splitlines() if line.startswith("data: ")]


def test_ids_and_chunking_follow_the_pi_transcripts() -> None:
    turns = json.loads((SAMPLES / "c-tools-json" / "scenario.json").read_text())
    with LLMServer(turns) as server:
        response = httpx.post(
            server.base_url + "/v1/chat/completions", json={"model": "mock-1", "stream": True}
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    datas = sse_datas(response.text)
    assert datas[-1] == "[DONE]"
    chunks = [json.loads(d) for d in datas[:-1]]
    assert {c["id"] for c in chunks} == {"chatcmpl-mock0001"}
    assert {c["model"] for c in chunks} == {"mock-1"}
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert [d["content"] for d in deltas if d.get("content")] == [
        "Let ",
        "me ",
        "run ",
        "a ",
        "command ",
        "first.",
    ]
    calls = [d["tool_calls"][0] for d in deltas if d.get("tool_calls")]
    assert calls[0] == {
        "index": 0,
        "id": "call_253d950f11ebdbeb4c2d54c5",
        "type": "function",
        "function": {"name": "bash", "arguments": ""},
    }
    assert [c["function"]["arguments"] for c in calls[1:]] == ['{"command":"', 'echo hello"}']
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


def test_helpers() -> None:
    assert words("Done: ran echo, read") == ["Done: ", "ran ", "echo, ", "read"]
    assert "".join(words("  lead and trail  ")) == "  lead and trail  "
    assert words("") == []
    assert pieces('{"path":"notes.txt"}') == ['{"path":"not', 'es.txt"}']
    assert block_hash(2, 0) == "98ce94b2b196906ca4859e06"  # the transcripts' second turn, first block


def test_anthropic_events() -> None:
    turn = {
        "blocks": [
            {"thinking": "Hmm ok"},
            {"text": "Hi there"},
            {"tool_call": {"name": "ls", "arguments": {}}},
        ]
    }
    with LLMServer([turn]) as server:
        response = httpx.post(server.base_url + "/v1/messages", json={"model": "claude-x"})
    events = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
    assert events[0] == "message_start" and events[-2:] == ["message_delta", "message_stop"]
    datas = [json.loads(d) for d in sse_datas(response.text)]
    start = datas[0]["message"]
    assert start["id"] == "msg_mock0001" and start["model"] == "claude-x"
    assert start["usage"]["input_tokens"] == 100
    kinds = [(d["type"], d.get("delta", {}).get("type")) for d in datas]
    assert ("content_block_delta", "signature_delta") in kinds
    tool = next(
        d for d in datas if d["type"] == "content_block_start" and d["content_block"]["type"] == "tool_use"
    )
    assert tool["content_block"]["id"] == "toolu_" + block_hash(1, 2)
    assert datas[-2]["delta"]["stop_reason"] == "tool_use" and datas[-2]["usage"]["output_tokens"] == 20


def test_records_requests_and_serves_turns_in_order() -> None:
    with LLMServer([{"blocks": [{"text": "one"}]}, {"blocks": [{"text": "two"}]}]) as server:
        for expected in ("one", "two"):
            response = httpx.post(
                server.base_url + "/v1/chat/completions?x=1", json={"model": "m"}, headers={"X-Test": "yes"}
            )
            assert expected in response.text
        exhausted = httpx.post(server.base_url + "/v1/chat/completions", json={"model": "m"})
        assert exhausted.status_code == 400
        assert "no scripted turn left for request 3" in exhausted.json()["error"]["message"]
        record = server.requests[0]
        assert record["method"] == "POST"
        assert record["path"] == "/v1/chat/completions"
        assert record["query"] == {"x": "1"}
        assert record["headers"]["x-test"] == "yes"
        assert record["body"] == {"model": "m"}
        assert len(server.requests) == 3
        assert server.pending_turns == 0


def test_error_turns_both_shapes_and_repeat() -> None:
    turns = [
        {"error": {"status": 500}},
        {"status": 429, "headers": {"retry-after": "7"}, "error_body": {"error": {"message": "slow down"}}},
        {"status": 529, "repeat": True},
    ]
    with LLMServer(turns) as server:
        first = httpx.post(server.base_url + "/v1/chat/completions", json={})
        assert first.status_code == 500
        assert first.json()["error"]["message"] == (
            "The server had an error while processing your request. Sorry about that!"
        )
        second = httpx.post(server.base_url + "/v1/chat/completions", json={})
        assert second.status_code == 429 and second.headers["retry-after"] == "7"
        assert second.json() == {"error": {"message": "slow down"}}
        for _ in range(3):
            overloaded = httpx.post(server.base_url + "/v1/messages", json={})
            assert overloaded.status_code == 529
            assert overloaded.json()["error"]["type"] == "overloaded_error"
        assert server.pending_turns == 1


def test_cut_after_drops_the_connection_mid_stream() -> None:
    with LLMServer([{"blocks": [{"text": "a b c d e f"}], "cut_after": 2}]) as server:
        with (
            httpx.Client() as client,
            client.stream("POST", server.base_url + "/v1/chat/completions", json={}) as r,
        ):
            received = []
            with pytest.raises(httpx.RemoteProtocolError):
                for line in r.iter_lines():
                    received.append(line)
    assert len(sse_datas("\n".join(received))) == 2


def test_stall_and_headers_delay_are_visible_to_a_client_with_a_timeout() -> None:
    turns = [{"blocks": [{"text": "late"}], "stall_s": 5}, {"blocks": [{"text": "x"}], "headers_delay_s": 5}]
    with LLMServer(turns) as server:  # the read timeouts show the stalls: the body and status come late
        with httpx.Client(timeout=0.3) as client:
            with client.stream("POST", server.base_url + "/v1/chat/completions", json={}) as r:
                assert r.status_code == 200  # headers came at once
                with pytest.raises(httpx.ReadTimeout):
                    r.read()
            with pytest.raises(httpx.ReadTimeout):
                client.post(server.base_url + "/v1/chat/completions", json={})
    # stopping the server does not wait for the stalled handlers


def test_delay_s_paces_chunks() -> None:
    with LLMServer([{"blocks": [{"text": "a b c d"}], "delay_s": 0.05}]) as server:
        started = time.monotonic()
        httpx.post(server.base_url + "/v1/chat/completions", json={})
        assert time.monotonic() - started >= 0.05 * 6


def test_raw_sse_stream_error_and_usage_overrides() -> None:
    turns = [
        {"sse": [{"id": "x", "choices": [{"delta": {"content": "raw"}}]}, "data: [DONE]\n\n"]},
        {"blocks": [{"text": "a b c"}], "stream_error": {"after": 1}},
        {"blocks": [{"text": "u"}], "usage": {"input": 7, "output": 3, "cacheRead": 5}},
    ]
    with LLMServer(turns) as server:
        raw = httpx.post(server.base_url + "/v1/chat/completions", json={}).text
        assert sse_datas(raw) == ['{"id":"x","choices":[{"delta":{"content":"raw"}}]}', "[DONE]"]
        errored = sse_datas(httpx.post(server.base_url + "/v1/chat/completions", json={}).text)
        assert len(errored) == 2 and json.loads(errored[1])["error"]["type"] == "server_error"
        usage = json.loads(sse_datas(httpx.post(server.base_url + "/v1/chat/completions", json={}).text)[-2])[
            "usage"
        ]
        assert usage["prompt_tokens"] == 12 and usage["completion_tokens"] == 3
        assert usage["prompt_tokens_details"] == {"cached_tokens": 5}


def test_replays_a_cassette_verbatim() -> None:
    cassette = CASSETTES / "anthropic_rate_limit_429.json"
    recorded = json.loads(cassette.read_text())["interactions"][0]["response"]
    with LLMServer(cassette=cassette) as server:
        response = httpx.post(server.base_url + "/anything", json={})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "30"
    assert response.text == "".join(recorded["body_chunks"])
    assert cassette_turns(cassette, last_only=True) == [{"replay": recorded}]


def test_unknown_path_is_a_404_and_formats_can_be_registered() -> None:
    def encode(turn: dict, ctx: TurnContext) -> list[bytes]:
        return [
            as_bytes({"seq": ctx.seq, "model": ctx.model, "text": b["text"]}) + b"\n" for b in turn["blocks"]
        ]

    register_format(
        WireFormat(
            name="test-ndjson",
            matches=lambda method, path: path.endswith(":testStream"),
            encode=encode,
            error_body=lambda status, ctx: b"{}",
            content_type="application/x-ndjson",
        )
    )
    with LLMServer([{"blocks": [{"text": "hi"}]}, {"blocks": [{"text": "never"}]}]) as server:
        custom = httpx.post(server.base_url + "/v1/models/gem-1:testStream", json={})
        assert custom.headers["content-type"] == "application/x-ndjson"
        assert json.loads(custom.text) == {"seq": 1, "model": "gem-1", "text": "hi"}
        missing = httpx.post(server.base_url + "/v2/unknown", json={})
        assert missing.status_code == 404


def test_command_line_mode_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"blocks": [{"text": "from a subprocess"}]}]))
    server = Path(__file__).resolve().parent.parent / "support" / "llm_server.py"
    proc = subprocess.Popen(
        [sys.executable, str(server), str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        text = httpx.post(base_url + "/v1/chat/completions", json={"model": "m"}).text
        assert '"content":"subprocess"' in text
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
