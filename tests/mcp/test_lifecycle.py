"""Servers that crash, and processes that must not outlive piko; RPC mode and ``/mcp``."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from mcp_support import answer
from mcp_support import call
from mcp_support import stdio_entry
from mcp_support import tool_messages
from support.processes import reaped

pytestmark = pytest.mark.timeout(120)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its parent counts as gone
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    """The processes of ``pids`` still alive after ``seconds`` (which are then killed: no test leaks)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return []
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def _read_pids(path, seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError("the server did not start")


def test_no_orphan_after_a_normal_exit(mcp_env, tmp_path):
    pid_file = tmp_path / "pids"
    env = mcp_env([call("mcp__kid__echo", {"text": "x"}), answer()])
    env.write_mcp({"kid": stdio_entry("grandchild", exposure="direct", env={"DEMO_PID_FILE": str(pid_file)})})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    assert _wait_gone(_read_pids(pid_file)) == []


def test_no_orphan_after_sigterm_during_a_tool_call(mcp_env, tmp_path):
    pid_file = tmp_path / "pids"
    env = mcp_env([call("mcp__kid__slow", {"seconds": 60}), answer()])
    env.write_mcp({"kid": stdio_entry("grandchild", exposure="direct", env={"DEMO_PID_FILE": str(pid_file)})})
    process = env.start("-p", "--provider", "mock", "--model", "mock-1", "go")
    assert process.stdin is not None
    process.stdin.close()  # print mode reads piped stdin to its end first
    with reaped(process):
        pids = _read_pids(pid_file)
        deadline = time.monotonic() + 30
        while not env.server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the tool call is under way
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode in (143, 1, -15)
    assert _wait_gone(pids) == []


def test_crashed_server_reconnects_on_next_use(mcp_env):
    env = mcp_env([call("mcp__demo__die"), call("mcp__demo__echo", {"text": "back"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    bodies = env.bodies()
    crashed = tool_messages(bodies[1])[-1]["content"]
    assert 'MCP server "demo"' in crashed
    assert tool_messages(bodies[2])[-1]["content"] == "echo: back"


def test_rpc_prompt_and_mcp_command(mcp_env):
    env = mcp_env([call("mcp__demo__echo", {"text": "rpc"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    process = env.start("--mode", "rpc", "--provider", "mock", "--model", "mock-1")
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "go"}) + "\n")
        process.stdin.flush()
        lines: list[dict] = []
        while True:
            line = process.stdout.readline()
            assert line, "rpc ended early"
            lines.append(json.loads(line))
            if lines[-1].get("type") == "agent_end":
                break
        process.stdin.write(json.dumps({"id": "m", "type": "prompt", "message": "/mcp"}) + "\n")
        process.stdin.flush()
        notices: list[dict] = []
        while not notices:
            line = process.stdout.readline()
            assert line, "rpc ended early"
            event = json.loads(line)
            if event.get("method") == "notify":
                notices.append(event)
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    ends = [e for e in lines if e.get("type") == "tool_execution_end"]
    assert ends[0]["result"]["content"][0]["text"] == "echo: rpc"
    assert notices[0]["message"].startswith("demo: connected, 11 tools (direct, global)")
