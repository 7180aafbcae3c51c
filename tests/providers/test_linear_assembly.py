"""Streamed content is assembled in linear time: the work counted grows with the size, not its square.

Each provider API streams the same turn at two sizes (a ``write`` call whose content arrives in
12-character argument deltas, plus text and thinking word by word) from the scripted server on
127.0.0.1. We count what assembly does: the Python lines run (a tracer counts them), the
characters joined and parsed (``piko.data.stream_blocks.WORK``), and the bytes of the
``message_update`` records the JSON and RPC modes would write; four times the size must cost at
most about four times the work.
No wall time is measured. Before the fix, every argument delta re-parsed the arguments from
the start and every record carried the whole message, so both grew with the square.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models
from support.provider_wires import WIRES
from support.stream_runs import context

from piko.data.events import MessageUpdateEvent
from piko.data.events import event_to_wire
from piko.data.stream_blocks import WORK
from piko.data.streaming import StreamOptions

SMALL = 24_000
LARGE = 4 * SMALL
# four times the size may cost four times the work, plus what does not grow with the size
SLACK = 4.3
# characters joined and parsed per character streamed: each is joined at most twice (into a run
# of pieces, then into the whole) and parsed once
WORK_PER_CHARACTER = 3.0


@pytest.fixture(autouse=True)
def _aws_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    yield


def streamed_characters(size: int) -> int:
    """The characters of thinking, text and tool-call JSON that :func:`turn` streams."""
    blocks = turn(size)["blocks"]
    return (
        len(blocks[0]["thinking"])
        + len(blocks[1]["text"])
        + len(json.dumps(blocks[2]["tool_call"]["arguments"]))
    )


def turn(size: int) -> dict[str, Any]:
    line = "x" * 59 + "\n"
    words = " ".join(["word"] * (size // 10))
    return {
        "blocks": [
            {"thinking": words},
            {"text": words},
            {
                "tool_call": {
                    "name": "write",
                    "arguments": {"path": "big.txt", "content": line * (size // 60)},
                }
            },
        ],
        "coalesce": True,
    }


class LineCounter:
    """Counts the Python lines this thread runs while installed (the server's threads are not counted)."""

    def __init__(self) -> None:
        self.lines = 0

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines += 1
        return self._local

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        return self._local

    def __enter__(self) -> LineCounter:
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(None)


def measure(api_name: str, size: int) -> tuple[int, int, int, int, dict[str, Any]]:
    """(characters joined and parsed, partial parses, wire bytes of the updates, Python lines run,
    final arguments)."""
    wire = WIRES[api_name]
    stream = wire.stream
    with LLMServer([turn(size)]) as server:
        m = wire.model(server, model_id="test-model", reasoning=True)

        async def run() -> tuple[int, dict[str, Any]]:
            wire_bytes = 0
            final: Any = None
            async for event in stream(m, context(), StreamOptions(api_key="k", reasoning="low")):
                if event.type in ("done", "error"):
                    final = event.final
                elif event.type != "start":
                    record = MessageUpdateEvent(assistant_message_event=event, message=event.partial)
                    wire_bytes += len(json.dumps(event_to_wire(record)))
            assert final is not None and final.stop_reason == "toolUse", final.error_message
            return wire_bytes, final.content[-1].arguments

        WORK.reset()
        with LineCounter() as counter:
            wire_bytes, arguments = asyncio.run(run())
    return WORK.chars_joined + WORK.chars_parsed, WORK.parses, wire_bytes, counter.lines, arguments


@pytest.mark.parametrize("api_name", list(WIRES))
def test_assembly_work_grows_linearly_with_the_stream(api_name: str) -> None:
    small_work, small_parses, small_bytes, small_lines, small_args = measure(api_name, SMALL)
    large_work, large_parses, large_bytes, large_lines, large_args = measure(api_name, LARGE)
    assert len(small_args["content"]) == SMALL // 60 * 60
    assert len(large_args["content"]) == LARGE // 60 * 60
    # the partial arguments are never parsed when nobody reads them: no parse per delta
    assert small_parses == large_parses <= 1
    assert small_work <= WORK_PER_CHARACTER * streamed_characters(SMALL), small_work
    assert large_work <= WORK_PER_CHARACTER * streamed_characters(LARGE), large_work
    assert large_bytes <= SLACK * small_bytes, (small_bytes, large_bytes)
    assert large_lines <= SLACK * small_lines, (small_lines, large_lines)


def test_reading_partial_arguments_scans_each_character_once() -> None:
    """A consumer that reads the arguments after every delta (an extension on ``message_update``)
    pays one parse per read, but the scan of the JSON resumes where the last read stopped."""
    from piko.data.stream_blocks import StreamingToolCall

    def reads(size: int) -> int:
        call = StreamingToolCall(id="c", name="write")
        text = json.dumps({"path": "a", "content": "y" * size})
        WORK.reset()
        for start in range(0, len(text), 12):
            call.append_json(text[start : start + 12])
            assert call.arguments.get("path") == "a"
        assert call.arguments["content"] == "y" * size
        return WORK.parses

    assert reads(4000) * 4 == pytest.approx(reads(16000), rel=0.01)


def test_the_agent_session_and_json_records_stay_linear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole in-process pipeline: provider, agent loop, session file, an extension on
    ``message_update`` and the JSON-mode records, at two sizes."""
    from piko.app.application import App
    from piko.engine.session import AgentSession
    from piko.extensions.extension_api import ExtensionAPI
    from piko.sessions.manager import SessionManager

    def run(size: int) -> tuple[int, int, int]:
        work = tmp_path / str(size)
        agent = work / "agent"
        agent.mkdir(parents=True)
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
        with LLMServer([turn(size), {"blocks": [{"text": "Done."}]}]) as server:
            write_mock_models(agent, server.base_url, [{"id": "mock-1"}])

            async def go() -> int:
                app = App(cwd=str(work), agent_dir=str(agent))
                app.boot()
                app.model_registry.load()
                seen: list[int] = []
                api = ExtensionAPI("watcher", "watcher", app)
                api.on("message_update", lambda event, ctx: seen.append(1))
                app.pm.register(api.compile(), "watcher")
                session = AgentSession(
                    app,
                    SessionManager.create(str(work), str(work / "sessions")),
                    model=app.model_registry.find("mock", "mock-1"),
                )
                wire = [0]
                session.subscribe(
                    lambda event: wire.__setitem__(0, wire[0] + len(json.dumps(event_to_wire(event))))
                )
                WORK.reset()
                await session.prompt("write it")
                assert seen
                return wire[0]

            wire_bytes = asyncio.run(go())
        assert (work / "big.txt").stat().st_size == size // 60 * 60
        return WORK.chars_joined + WORK.chars_parsed, WORK.parses, wire_bytes

    small_work, small_parses, small_bytes = run(SMALL)
    large_work, large_parses, large_bytes = run(LARGE)
    assert small_parses == large_parses <= 1
    assert small_work <= WORK_PER_CHARACTER * streamed_characters(SMALL), small_work
    assert large_work <= WORK_PER_CHARACTER * streamed_characters(LARGE), large_work
    assert large_bytes <= SLACK * small_bytes, (small_bytes, large_bytes)
