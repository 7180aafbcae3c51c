"""Extensions that block: RPC keeps answering, abort and SIGTERM work, garbage results fail closed."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

CHAOS = str(Path(__file__).resolve().parents[1] / "support" / "chaos_extension.py")
ARGS = ["--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1", "-e", CHAOS]
BASH_CALL = {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo hi"}}}]}
STALL_CALL = {"blocks": [{"tool_call": {"name": "stall", "arguments": {}}}]}
DONE = {"blocks": [{"text": "done"}]}


def _start(rpc: Any, tmp_path: Path, turns: list[dict[str, Any]], event: str, mode: str, **env: str) -> Any:
    mark = tmp_path / "mark.txt"
    environment = {"CHAOS_EVENT": event, "CHAOS_MODE": mode, "CHAOS_MARK": str(mark), **env}
    process = rpc(turns, args=ARGS, env=environment)
    process.mark = mark
    return process


def _wait_for_mark(process: Any) -> None:
    """Until the misbehaving handler has been entered."""
    deadline = time.monotonic() + 20
    while not (process.mark.exists() and process.mark.read_text()):
        assert time.monotonic() < deadline, "the handler was never reached"
        time.sleep(0.02)


def _prompt_held_by_the_input_handler(rpc: Any, tmp_path: Path) -> Any:
    """A process whose prompt ``p`` (``hello``) sits in an input handler that never returns."""
    process = _start(rpc, tmp_path, [DONE], "input", "hang_sync")
    process.send({"id": "p", "type": "prompt", "message": "hello"})
    _wait_for_mark(process)
    return process


@pytest.mark.parametrize(("event", "mode"), [("tool_call", "hang_sync"), ("tool_call", "hang_async")])
def test_get_state_and_abort_answer_while_a_tool_call_handler_hangs(
    rpc: Any, tmp_path: Path, event: str, mode: str
) -> None:
    """Default 30 s budget: abort must cancel the handler, not wait for the budget."""
    process = _start(rpc, tmp_path, [BASH_CALL, DONE], event, mode)
    assert process.request({"id": "p", "type": "prompt", "message": "run it"})["success"]
    _wait_for_mark(process)
    state = process.request({"id": "s", "type": "get_state"}, timeout=10)
    assert state["success"] and state["data"]["isStreaming"] is True
    assert process.request({"id": "a", "type": "abort"}, timeout=10)["success"]
    end = process.wait_for(lambda r: r.get("type") == "agent_end", timeout=10)
    results = [m for m in end["messages"] if m["role"] == "toolResult"]
    assert [(r["isError"], r["content"][0]["text"]) for r in results] == [(True, "Operation aborted")]
    process.proc.send_signal(signal.SIGTERM)
    assert process.proc.wait(timeout=20) == 143


def test_sigterm_ends_the_process_while_an_input_handler_blocks(rpc: Any, tmp_path: Path) -> None:
    process = _prompt_held_by_the_input_handler(rpc, tmp_path)
    assert process.request({"id": "s", "type": "get_state"}, timeout=10)["success"]
    process.proc.send_signal(signal.SIGTERM)
    assert process.proc.wait(timeout=20) == 143


def test_abort_ends_a_prompt_whose_input_handler_blocks(rpc: Any, tmp_path: Path) -> None:
    process = _prompt_held_by_the_input_handler(rpc, tmp_path)
    assert process.request({"id": "a", "type": "abort"}, timeout=10)["success"]
    answer = process.wait_for(lambda r: r.get("type") == "response" and r.get("id") == "p", timeout=10)
    assert answer["success"] is False and answer["error"] == "Operation aborted"
    assert process.server.requests == []  # nothing was sent to the model


def test_abort_ends_a_plain_tool_that_blocks(rpc: Any, tmp_path: Path) -> None:
    process = _start(rpc, tmp_path, [STALL_CALL, DONE], "", "", CHAOS_TOOL="1")
    assert process.request({"id": "p", "type": "prompt", "message": "stall"})["success"]
    _wait_for_mark(process)
    assert process.request({"id": "s", "type": "get_state"}, timeout=10)["success"]
    assert process.request({"id": "a", "type": "abort"}, timeout=10)["success"]
    end = process.wait_for(lambda r: r.get("type") == "agent_end", timeout=10)
    results = [m for m in end["messages"] if m["role"] == "toolResult"]
    assert [r["content"][0]["text"] for r in results] == ["Operation aborted"]


def test_a_garbage_tool_call_result_blocks_the_tool_and_names_the_extension(rpc: Any, tmp_path: Path) -> None:
    process = _start(rpc, tmp_path, [BASH_CALL, DONE], "tool_call", "garbage")
    assert process.request({"id": "p", "type": "prompt", "message": "run it"})["success"]
    end = process.wait_for(lambda r: r.get("type") == "agent_end", timeout=20)
    (result,) = [m for m in end["messages"] if m["role"] == "toolResult"]
    problem = "a str ('allow it'), not None or {block, reason, input, additional_context}"
    assert result["isError"] is True
    assert result["content"][0]["text"] == f"Blocked: the tool_call handler of {CHAOS} returned {problem}"
    (error,) = process.events("extension_error")
    assert error["extensionPath"] == CHAOS and error["event"] == "tool_call"
