"""Start-up and shutdown: end of input, signals, and what is flushed on the way out."""

from __future__ import annotations

import json
import signal
from typing import Any

SESSION_ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
LONG = {"blocks": [{"text": " ".join(["word"] * 300)}], "delay_s": 0.05}


def test_end_of_input_stops_a_running_prompt_and_flushes_the_session(rpc: Any) -> None:
    process = rpc([LONG], args=SESSION_ARGS, extensions=("rpc_ui_ext.py",))
    process.request({"id": "p", "type": "prompt", "message": "talk a lot"})
    process.wait_for(lambda r: r.get("type") == "message_update")
    state = process.request({"id": "s", "type": "get_state"})["data"]
    assert process.close(timeout=20) == 0
    assert (process.work / "shutdown.txt").read_text() == "quit\n"
    end = process.events("agent_end")[-1]
    assert end["messages"][-1]["stopReason"] == "aborted"
    lines = [json.loads(line) for line in open(state["sessionFile"], encoding="utf-8")]
    messages = [e["message"] for e in lines if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1]["stopReason"] == "aborted"


def test_sigterm_shuts_down_with_pis_exit_code(rpc: Any) -> None:
    process = rpc(extensions=("rpc_ui_ext.py",))
    assert process.request({"id": "s", "type": "get_state"})["success"]
    process.proc.send_signal(signal.SIGTERM)
    assert process.proc.wait(timeout=20) == 143
    assert (process.work / "shutdown.txt").read_text() == "quit\n"


def test_a_bad_start_says_why_on_stderr(rpc: Any) -> None:
    process = rpc(args=["--mode", "rpc", "--session", "no-such-session-id"])
    assert process.proc.wait(timeout=20) == 1
    process.close()
    assert process.records == []
    assert process.stderr.startswith("Error: ")


def test_warnings_go_to_stderr(rpc: Any) -> None:
    process = rpc(args=["--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1",
                        "--tools", "read,nosuchtool"])  # fmt: skip
    assert process.request({"id": "s", "type": "get_state"})["success"]
    assert process.close() == 0
    assert "nosuchtool" in process.stderr
    assert all(r.get("type") in ("response",) for r in process.records)
