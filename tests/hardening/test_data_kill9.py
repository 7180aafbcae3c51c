"""kill -9 at random points while an answer streams or a tool runs (``pi -p`` and RPC), then a
reload: the file parses, every entry written before the kill is intact, a torn last line does
not swallow what comes next, and ``pi --continue`` works without sending an unpaired tool result."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from battery import Battery
from battery import Tally
from battery import both_sizes_within
from battery import tries
from data_harness import MOCK
from data_harness import PiEnv
from data_harness import make_env
from data_harness import read_lines
from data_harness import rpc_process
from data_harness import unpaired_tool_results
from support.llm_server import LLMServer

LONG_TEXT = " ".join(f"word{n}" for n in range(150))


def _turns(phase: str, work: Path) -> list[dict[str, Any]]:
    if phase == "stream":
        return [{"blocks": [{"text": LONG_TEXT}], "delay_s": 0.01}]
    marker = work / "tool-started"
    command = f"touch {marker}; sleep 1; echo done"
    return [
        {
            "blocks": [
                {"text": "running it"},
                {"tool_call": {"name": "bash", "arguments": {"command": command}}},
            ]
        },
        {"blocks": [{"text": LONG_TEXT}], "delay_s": 0.01},
    ]


def _start(env: PiEnv, mode: str) -> Any:
    """The run to kill, continuing the session an earlier run wrote (a new session writes
    nothing before its first answer, as pi)."""
    if mode == "print":
        return env.start("-p", *MOCK, "--continue", "please do the thing")
    process = rpc_process(env, *MOCK, "--continue")
    process.send({"id": "p", "type": "prompt", "message": "please do the thing"})
    return process.proc


def _wait_for_the_moment(env: PiEnv, phase: str, rng: random.Random, asked: int) -> None:
    """Until the answer streams (a request after the first ``asked``) or the tool runs, then a
    random while longer."""
    deadline = time.monotonic() + 30
    if phase == "stream":
        while len(env.server.requests) <= asked and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 1.4))
    else:
        while not (env.work / "tool-started").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.9))


def _check_reload(env: PiEnv, tally: Tally, before: dict[Path, bytes]) -> None:
    """The reload check of one try (see the module docstring)."""
    for path, data in before.items():
        objects, bad = read_lines(path)
        total = len([line for line in data.split(b"\n") if line.strip()])
        if bad and (bad != [total] or data.endswith(b"\n")):
            tally.fail(f"{path.name}: unreadable lines {bad} that are not a torn last line")
        ids = {o.get("id") for o in objects}
        broken = [o["id"] for o in objects[1:] if o.get("parentId") and o["parentId"] not in ids]
        if broken:
            tally.fail(f"{path.name}: entries whose parent is missing: {broken}")
    env.server.add_turns([{"blocks": [{"text": "resumed fine"}]}])
    asked = len(env.server.requests)
    result = env.run("-p", *MOCK, "--continue", "carry on", timeout=60)
    if result.returncode != 0 or result.stdout.strip() != "resumed fine":
        tally.fail(
            f"--continue: exit {result.returncode}, {result.stdout[-200:]!r}, {result.stderr[-300:]!r}"
        )
        return
    for request in env.server.requests[asked:]:
        unpaired = unpaired_tool_results(request["body"])
        if unpaired:
            tally.fail(f"--continue sent tool results without their call: {unpaired}")
    for path, data in before.items():
        after = path.read_bytes()
        kept = [json.loads(line)["id"] for line in data.split(b"\n")[1:] if _is_json(line)]
        now = {o.get("id") for o in read_lines(path)[0]}
        tally.lose(len([i for i in kept if i not in now]), f"{path.name}: entries gone after --continue")
        if not after.startswith(data):
            tally.fail(f"{path.name}: what was written before the kill was rewritten")
        _objects, bad = read_lines(path)
        torn = [] if data.endswith(b"\n") or not data else [len(data.split(b"\n"))]
        if [n for n in bad if n not in torn]:
            tally.fail(f"{path.name}: unreadable lines after --continue: {bad} (torn: {torn})")


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return bool(line.strip())


def _one_try(tmp: Path, tally: Tally, mode: str, phase: str, rng: random.Random) -> None:
    with LLMServer() as server:
        env = make_env(tmp, server)
        server.add_turns([{"blocks": [{"text": "first answer"}]}])
        if env.run("-p", *MOCK, "start").returncode != 0:
            tally.fail("the first run failed")
            return
        server.add_turns(_turns(phase, env.work))
        asked = len(server.requests)
        proc = _start(env, mode)
        try:
            _wait_for_the_moment(env, phase, rng, asked)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        before = {path: path.read_bytes() for path in env.sessions()}
        time.sleep(1.1)  # the tool's shell (now an orphan) finishes its sleep
        server.turns.clear()
        _check_reload(env, tally, before)


@both_sizes_within(3600)
def test_kill_9_loses_no_entry_and_the_session_continues(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    rng = random.Random(99 + int(slow))
    for mode in ("print", "rpc"):
        for phase in ("stream", "tool"):
            tally = battery.case(
                f"kill -9 during {'streaming' if phase == 'stream' else 'a tool call'} ({mode})"
            )
            for n in tally.attempts(tries(1, 15, slow=slow)):
                try:
                    _one_try(tmp_path / f"{mode}-{phase}-{n}", tally, mode, phase, rng)
                except (subprocess.TimeoutExpired, OSError) as exc:
                    tally.fail(f"try {n}: {exc}")
