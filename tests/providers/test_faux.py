"""The faux provider: demo reply, scripts from code and from PIKO_FAUX_SCRIPT, pacing, abort, CLI."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.streams import collect
from support.streams import final

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.lib.abort import AbortController
from piko.plugins.providers import faux as faux_plugin
from piko.plugins.providers.faux import wire as faux
from piko.testing import PikoHome

CONTEXT = Context(system_prompt="sys", messages=[UserMessage(content="hello", timestamp=1)])


@pytest.fixture(autouse=True)
def fresh_faux(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(faux.SCRIPT_ENV, raising=False)
    monkeypatch.delenv(faux.PACE_ENV, raising=False)
    faux.reset()
    yield
    faux.reset()


def run(options: StreamOptions | None = None, context: Context = CONTEXT) -> list[StreamEvent]:
    return collect(faux.stream, faux.faux_model(), context, options or StreamOptions())


def test_demo_reply_without_a_script() -> None:
    events = run()
    message = final(events)
    assert message.stop_reason == "stop"
    assert message.content == [TextContent(text=faux.DEMO_REPLY)]
    assert "offline demo provider" in faux.DEMO_REPLY and faux.SCRIPT_ENV in faux.DEMO_REPLY
    assert (message.api, message.provider, message.model) == ("faux", "faux", "faux-1")
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert len(deltas) > 3 and all(12 <= len(d or "") <= 20 for d in deltas[:-1])  # 3-5 tokens of 4 chars


def test_scripted_turns_from_code() -> None:
    faux.set_responses(
        [
            {
                "blocks": [
                    {"thinking": "Plan it."},
                    {"text": "On it."},
                    {"tool_call": {"name": "bash", "arguments": {"command": "ls"}}},
                ]
            },
            "plain string reply",
            AssistantMessage(content=[TextContent(text="a message")]),
            lambda context, options, state, model: (
                f"call {state['callCount']} saw {len(context.messages)} message(s)"
            ),
        ]
    )
    first = run()
    types = [e.type for e in first]
    assert types[:3] == ["start", "thinking_start", "thinking_delta"]
    assert "toolcall_delta" in types and types[-2:] == ["toolcall_end", "done"]
    message = final(first)
    assert message.stop_reason == "toolUse"
    assert isinstance(message.content[0], ThinkingContent) and message.content[1] == TextContent(
        text="On it."
    )
    call = message.content[2]
    assert isinstance(call, ToolCall) and call.arguments == {"command": "ls"} and call.id.startswith("call_")
    assert final(run()).content == [TextContent(text="plain string reply")]
    assert final(run()).content == [TextContent(text="a message")]
    assert final(run()).content == [TextContent(text="call 4 saw 1 message(s)")]
    assert faux.pending_count() == 0 and faux.call_count() == 4
    exhausted = run()
    assert [e.type for e in exhausted] == ["error"] and final(
        exhausted
    ).error_message == "No more faux responses queued"


def test_script_file_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps([{"blocks": [{"text": "from the file"}]}, {"error": {"status": 500, "message": "boom"}}])
    )
    monkeypatch.setenv(faux.SCRIPT_ENV, str(script))
    assert final(run()).content == [TextContent(text="from the file")]
    failed = final(run())
    assert failed.stop_reason == "error" and failed.error_message == "500 boom"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    faux.reset()
    monkeypatch.setenv(faux.SCRIPT_ENV, str(bad))
    events = run()
    assert [e.type for e in events] == ["error"] and faux.SCRIPT_ENV in (final(events).error_message or "")


def test_usage_estimate_and_prompt_cache() -> None:
    faux.set_responses(["12345678", "abcd"])
    options = StreamOptions(session_id="s1")
    first = final(run(options)).usage
    assert first.output == 2 and first.cache_write == first.input and first.cache_read == 0
    second = final(run(options)).usage
    assert second.cache_read > 0 and second.output == 1


def test_pacing_and_abort() -> None:
    faux.configure(tokens_per_second=400, token_size=(1, 1))
    faux.set_responses(["x" * 40])  # 10 pieces of 1 token, 2.5 ms each
    started = time.monotonic()
    run()
    assert time.monotonic() - started >= 0.02

    faux.configure(tokens_per_second=50, token_size=(1, 1))
    faux.set_responses(["y" * 400])

    async def aborted() -> list[StreamEvent]:
        controller = AbortController()
        events = []
        async for event in faux.stream(faux.faux_model(), CONTEXT, StreamOptions(signal=controller.signal)):
            events.append(event)
            if event.type == "text_delta":
                controller.abort()
        return events

    events = asyncio.run(aborted())
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert final(events).error_message == "Request was aborted"


def test_on_response_and_registration() -> None:
    seen: list[Any] = []

    async def on_response(status: int, headers: dict[str, str], model: Any) -> None:
        seen.append((status, headers, model.id))

    run(StreamOptions(on_response=on_response))
    assert seen == [(200, {}, "faux-1")]
    apis: list[Any] = []
    providers: list[Any] = []
    faux_plugin.piko_register_provider_apis(apis.append)
    faux_plugin.piko_register_providers(providers.append)
    assert apis[0].name == "faux"
    config = providers[0]
    assert config.name == "faux" and config.stream_simple == faux_plugin.STREAM and not config.api_key
    assert config.extra == {"explicitOnly": True}  # never listed, never the default model
    assert [m.id for m in config.models] == ["faux-1"]


def test_cli_uses_faux_offline(tmp_path: Path) -> None:
    home = PikoHome(tmp_path)
    demo = home.pi("--provider", "faux", "-p", "hello")
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.strip() == faux.DEMO_REPLY
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"blocks": [{"text": "Scripted hello."}]}]))
    scripted = home.pi(
        "--provider", "faux", "--model", "faux-1", "-p", "hi", env={faux.SCRIPT_ENV: str(script)}
    )
    assert scripted.returncode == 0, scripted.stderr
    assert scripted.stdout.strip() == "Scripted hello."


@pytest.mark.parametrize(
    ("turn", "says"),
    [
        ({"blocks": [{"txt": "hi"}]}, "block 1 has none of 'text', 'thinking', 'tool_call' (it has 'txt')"),
        (
            {"text": "hi"},
            "unknown key 'text' (a turn has 'blocks', 'error', 'status', 'stop_reason', 'usage', 'delay_s')",
        ),
        ({}, "a turn needs 'blocks' or an 'error'"),
        ({"blocks": {"text": "hi"}}, "'blocks' must be a list of blocks, not dict"),
        ({"blocks": ["hi"]}, "block 1 must be an object, not str"),
        (
            {"blocks": [{"text": "a", "thinking": "b"}]},
            "block 1 has more than one of 'text', 'thinking', 'tool_call'",
        ),
        ({"blocks": [{"text": 3}]}, "block 1: 'text' must be a string, not int"),
        ({"blocks": [{"tool_call": {"arguments": {}}}]}, "block 1: a tool_call needs a 'name' (a string)"),
        (
            {"blocks": [{"tool_call": {"name": "ls", "arguments": "[1"}}]},
            "block 1: tool_call 'arguments' is not JSON: '[1'",
        ),
        (
            {"blocks": [{"tool_call": {"name": "ls", "arguments": [1]}}]},
            "block 1: tool_call 'arguments' must be an object, not list",
        ),
        (
            {"blocks": [], "stop_reason": "done"},
            "'stop_reason' must be one of 'stop', 'length', 'toolUse', 'error', 'aborted', not 'done'",
        ),
        ({"blocks": [], "usage": {"input": "many"}}, "'usage' input must be a number, not str"),
        (
            {"blocks": [], "usage": {"inputs": 3}},
            "'usage' has an unknown key 'inputs' (it takes 'input', 'output', 'cacheRead', 'cacheWrite')",
        ),
        (7, "a turn must be an object, a string or an AssistantMessage, not int"),
    ],
)
def test_a_malformed_turn_is_an_error_that_says_what_is_wrong(turn: Any, says: str) -> None:
    faux.set_responses([{"blocks": [{"text": "first"}]}, turn, {"blocks": [{"text": "after"}]}])
    assert final(run()).content == [TextContent(text="first")]
    events = run()
    assert [e.type for e in events] == ["error"]
    message = final(events).error_message or ""
    assert message == f"faux: scripted turn 2: {says}"
    assert final(run()).content == [TextContent(text="after")]  # the script goes on


def test_a_malformed_turn_of_the_script_file_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"blocks": [{"txt": "hi"}]}]))
    monkeypatch.setenv(faux.SCRIPT_ENV, str(script))
    assert final(run()).error_message == (
        f"faux: turn 1 of {faux.SCRIPT_ENV} ({script}): block 1 has none of 'text', 'thinking', 'tool_call' (it has 'txt')"
    )


def test_pi_prints_the_malformed_turn_error_and_exits_1(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"blocks": [{"txt": "hi"}]}]))
    result = PikoHome(tmp_path).pi("--provider", "faux", "-p", "hi", env={faux.SCRIPT_ENV: str(script)})
    assert result.returncode == 1
    assert result.stdout == ""
    assert "block 1 has none of 'text', 'thinking', 'tool_call' (it has 'txt')" in result.stderr


def test_a_server_only_directive_is_refused_by_name() -> None:
    faux.set_responses([{"blocks": [{"text": "hi"}], "stall_s": 5, "repeat": True}])
    assert final(run()).error_message == (
        "faux: scripted turn 1: 'stall_s', 'repeat': only the scripted LLM server (piko.testing) plays that; "
        "a faux turn has 'blocks', 'error', 'status', 'stop_reason', 'usage', 'delay_s'"
    )


def test_delay_s_is_played() -> None:
    faux.set_responses([{"blocks": [{"text": "slowly now"}], "delay_s": 0.01}, {"blocks": [], "delay_s": -1}])
    assert final(run()).content == [TextContent(text="slowly now")]
    assert (
        final(run()).error_message == "faux: scripted turn 2: 'delay_s' must be a number of seconds, not -1"
    )
