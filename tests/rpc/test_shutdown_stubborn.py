"""RPC shutdown while a tool ignores the abort: bounded, ``session_shutdown`` fired, pi's exit code."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

STUBBORN = str(Path(__file__).resolve().parents[1] / "support" / "stubborn_tool_ext.py")
ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1", "-e", STUBBORN]


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("how", "tool", "code"),
    [
        ("SIGTERM", "very_stubborn", 143),
        ("SIGINT", "blocking", 130),
        ("SIGHUP", "stubborn", 129),
        ("end of input", "very_stubborn", 0),
    ],
)
def test_shutdown_ends_although_a_tool_ignores_the_abort(rpc: Any, how: str, tool: str, code: int) -> None:
    turns = [{"blocks": [{"tool_call": {"name": tool, "arguments": {}}}]}, {"blocks": [{"text": "after"}]}]
    process = rpc(turns, args=ARGS, extensions=("rpc_ui_ext.py",))
    process.request({"id": "p", "type": "prompt", "message": "run it"})
    started = process.work / "tool-started.txt"
    deadline = time.monotonic() + 30
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)  # the file exists a moment before its text is written
    assert started.read_text() == tool
    if how == "end of input":
        assert process.proc.stdin is not None
        process.proc.stdin.close()
    else:
        process.proc.send_signal(getattr(signal, how))
    assert process.proc.wait(timeout=60) == code
    assert (process.work / "shutdown.txt").read_text() == "quit\n"
    assert "ignored the abort" in process.stderr or "did not stop" in process.stderr
