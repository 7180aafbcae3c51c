"""Battery: MCP servers that misbehave, many tool calls in a run, and agents ended mid-call.

Cases:

* **bad servers listed**: ``pi mcp list --json`` over a good server and servers that crash,
  hang in ``initialize``, send malformed JSON-RPC, flood stderr, do not exist, plus invalid
  entries. Each bad one must have a one-line state, the good one must connect, the exit status
  must be 1, and no server process may be left (a survivor is killed and counted).
* **tool calls in a session**: ``pi -p`` through a run of MCP tool calls (results, errors, long
  results); a result missing from the next request counts as lost.
* **SIGTERM mid-call**: ``pi -p`` ended by SIGTERM during a long MCP call; any server process
  left (the server or its grandchild) is killed and counted.

Server processes are found by a marker in their command line (``--name``).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from battery import Battery
from battery import both_sizes_within
from battery import tries
from hangs_support import ANSWER_BOUND
from hangs_support import pids_with
from hangs_support import survivors
from support.llm_server import LLMServer
from support.pi_dirs import make_pi_dirs
from support.processes import reaped

PI = str(Path(sys.executable).with_name("pi"))
DEMO_SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "demo_server.py")
_serial = itertools.count(1)


def _marker() -> str:
    return f"mcpbattery{os.getpid()}x{next(_serial)}"


def _entry(marker: str, behave: str = "normal", **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [DEMO_SERVER, "--behave", behave, "--name", marker], **extra}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("PIKO_")}
    env.update(PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent))
    return env


def _write_mcp(home: Path, servers: dict[str, Any]) -> None:
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def _bad_servers(battery: Battery, root: Path, count: int) -> None:
    tally = battery.case("mcp: bad servers listed")
    tally.tries = count
    for attempt in range(count):
        home = root / f"bad{attempt}" / "home" / ".pi" / "agent"
        home.mkdir(parents=True)
        marker = _marker()
        _write_mcp(home, {
            "good": _entry(marker),
            "crash": _entry(marker, "crash-on-start"),
            "hang": _entry(marker, "hang-initialize", timeout=2),
            "garbage": _entry(marker, "garbage"),
            "flood": _entry(marker, "flood-stderr"),
            "missing": {"command": f"/nonexistent/{marker}"},
            "sse": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "bad name!": {"command": "x"},
        })  # fmt: skip
        try:
            done = subprocess.run([PI, "mcp", "list", "--json"], env=_env(home), cwd=home, capture_output=True,
                                  text=True, timeout=ANSWER_BOUND * 2, stdin=subprocess.DEVNULL)  # fmt: skip
            report = json.loads(done.stdout)
        except (subprocess.TimeoutExpired, ValueError) as error:
            tally.fail(f"pi mcp list: {type(error).__name__}")
            continue
        states = {s["name"]: s for s in report["servers"]}
        if done.returncode != 1:
            tally.fail(f"exit status {done.returncode}")
        if states.get("good", {}).get("state") != "connected":
            tally.fail(f"good server: {states.get('good')}")
        for name in ("crash", "hang", "missing"):
            error = str(states.get(name, {}).get("error") or "")
            if states.get(name, {}).get("state") != "failed" or not error or "\n" in error:
                tally.fail(f"{name}: {states.get(name)}")
        if len(report["errors"]) != 2:
            tally.fail(f"config errors: {report['errors']}")
        left = survivors(marker)
        if left:
            tally.fail(f"{len(left)} server processes left")


def _tool_calls(battery: Battery, root: Path, runs: int, calls: int) -> None:
    tally = battery.case("mcp: tool calls in a session")
    tally.tries = runs * calls
    for run in range(runs):
        marker = _marker()
        script: list[dict[str, Any]] = []
        expected: list[str] = []
        for i in range(calls):
            kind = i % 3
            if kind == 0:
                script.append(
                    {"blocks": [{"tool_call": {"name": "mcp__demo__echo", "arguments": {"text": f"n{i}"}}}]}
                )
                expected.append(f"echo: n{i}")
            elif kind == 1:
                script.append(
                    {"blocks": [{"tool_call": {"name": "mcp__demo__fail", "arguments": {"reason": f"r{i}"}}}]}
                )
                expected.append(f"r{i}")
            else:
                script.append(
                    {"blocks": [{"tool_call": {"name": "mcp__demo__big", "arguments": {"size": 30000 + i}}}]}
                )
                expected.append("chars truncated")
        script.append({"blocks": [{"text": "done"}]})
        with LLMServer(script) as server:
            home, work = make_pi_dirs(root / f"calls{run}", server)
            _write_mcp(home, {"demo": _entry(marker, exposure="direct")})
            try:
                done = subprocess.run([PI, "-p", "--provider", "mock", "--model", "mock-1", "go"], env=_env(home),
                                      cwd=work, capture_output=True, text=True, timeout=ANSWER_BOUND * 4,
                                      stdin=subprocess.DEVNULL)  # fmt: skip
            except subprocess.TimeoutExpired:
                tally.fail("pi -p hung")
                tally.lose(calls, "no answer")
                continue
            if done.returncode != 0:
                tally.fail(f"exit status {done.returncode}: {done.stderr[-200:]}")
            bodies = [r["body"] for r in server.requests]
        for i, text in enumerate(expected):
            body = bodies[i + 1] if i + 1 < len(bodies) else {"messages": []}
            results = [m for m in body["messages"] if m.get("role") == "tool"]
            if not results or text not in json.dumps(results[-1]):
                tally.lose(1, f"call {i} result missing")
        if survivors(marker):
            tally.fail("server process left after the run")


def _sigterm_mid_call(battery: Battery, root: Path, count: int) -> None:
    tally = battery.case("mcp: SIGTERM mid-call leaves no server")
    tally.tries = count
    for attempt in range(count):
        marker = _marker()
        script = [{"blocks": [{"tool_call": {"name": "mcp__demo__slow", "arguments": {"seconds": 60}}}]}]
        with LLMServer(script) as server:
            home, work = make_pi_dirs(root / f"term{attempt}", server)
            pid_file = root / f"term{attempt}" / "pids"
            _write_mcp(home, {"demo": _entry(marker, "grandchild", exposure="direct",
                                             env={"DEMO_PID_FILE": str(pid_file)})})  # fmt: skip
            process = subprocess.Popen([PI, "-p", "--provider", "mock", "--model", "mock-1", "go"], env=_env(home),
                                       cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)  # fmt: skip
            with reaped(process):
                deadline = time.monotonic() + ANSWER_BOUND
                while not (server.requests and pid_file.exists()) and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(0.5)
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=ANSWER_BOUND)
                except subprocess.TimeoutExpired:
                    tally.fail("pi did not exit after SIGTERM")
        grandchildren: list[int] = []
        if pid_file.exists():
            grandchildren = [int(p) for p in pid_file.read_text().split()[1:]]
        left = survivors(marker) + [p for p in grandchildren if _alive_now(p)]
        if left:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            tally.fail(f"{len(left)} processes left")
        if not pids_with(marker) and not pid_file.exists():
            tally.fail("the server never started")


def _alive_now(pid: int, grace: float = 3.0) -> bool:
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return False
        except OSError:
            return False
        time.sleep(0.05)
    return True


@both_sizes_within(900)
def test_mcp_servers_battery(battery: Battery, tmp_path: Path, slow: bool) -> None:
    _bad_servers(battery, tmp_path, tries(1, 6, slow=slow))
    _tool_calls(battery, tmp_path, tries(1, 5, slow=slow), 6 if not slow else 15)
    _sigterm_mid_call(battery, tmp_path, tries(1, 5, slow=slow))
