"""Provider faults through ``pi -p`` and RPC: 429 with retry-after, 5xx, a stream cut mid-body, a
stall, slow headers, a server that always fails, a refused connection. Each run ends in a retried
success or one clear error, and the session file is whole."""

from __future__ import annotations

import json
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
from support.llm_server import LLMServer

ANSWER = "recovered fine"
OK = {"blocks": [{"text": ANSWER}]}
LONG = {"blocks": [{"text": " ".join(f"w{n}" for n in range(200))}]}
SETTINGS = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 20,
                      "provider": {"timeoutMs": 1000, "maxRetries": 1}}}  # fmt: skip

FAULTS: dict[str, tuple[list[dict[str, Any]], bool]] = {  # turns, whether the run must succeed
    "429 with retry-after": ([{"status": 429, "headers": {"retry-after": "1"}}, OK], True),
    "503": ([{"status": 503}, OK], True),
    "500 then 502": ([{"status": 500}, {"status": 502}, OK], True),
    "stream cut mid-body": ([dict(LONG, cut_after=3), OK], True),
    "stall after the headers": ([dict(OK, stall_s=3), OK], True),
    "headers late": ([dict(OK, headers_delay_s=3), OK], True),
    "always 500": ([{"status": 500, "repeat": True}], False),
    "connection refused": ([], False),
}


def _refuse(env: PiEnv) -> None:
    """Point the mock provider at a port nothing listens on."""

    def change(models: dict[str, Any]) -> None:
        models["providers"]["mock"]["baseUrl"] = "http://127.0.0.1:9/v1"

    env.models(change)


def _check_session(env: PiEnv, tally: Tally, name: str, succeeded: bool) -> None:
    sessions = env.sessions()
    if len(sessions) != 1:
        tally.fail(f"{name}: {len(sessions)} session files")
        return
    objects, bad = read_lines(sessions[0])
    if bad:
        tally.fail(f"{name}: unreadable session lines {bad}")
    messages = [o["message"] for o in objects if o.get("type") == "message"]
    if not any(m.get("role") == "user" for m in messages):
        tally.lose(1, f"{name}: the user's message is not in the session")
    last = messages[-1] if messages else {}
    wanted = "stop" if succeeded else "error"
    if last.get("role") != "assistant" or last.get("stopReason") != wanted:
        tally.fail(f"{name}: the session ends with {str(last)[:200]}, not a {wanted!r} answer")


def _print_run(env: PiEnv, tally: Tally, name: str, succeed: bool) -> None:
    result = env.run("-p", *MOCK, "hi there", timeout=120)
    errors = [
        line for line in result.stderr.splitlines() if line.strip() and not line.startswith("Warning: ")
    ]
    if succeed and (result.returncode != 0 or result.stdout.strip() != ANSWER):
        tally.fail(f"{name}: exit {result.returncode}, {result.stdout[-100:]!r}, {result.stderr[-300:]!r}")
    if not succeed and (result.returncode != 1 or len(errors) != 1 or result.stdout):
        tally.fail(
            f"{name}: wanted one clear error, got exit {result.returncode}, stderr {result.stderr[-300:]!r}"
        )
    _check_session(env, tally, name, succeed)


def _rpc_run(env: PiEnv, tally: Tally, name: str, succeed: bool) -> None:
    process = rpc_process(env, *MOCK)
    try:
        accepted = process.request({"id": "p", "type": "prompt", "message": "hi there"}, timeout=60)
        if not accepted.get("success"):
            tally.fail(f"{name}: prompt refused: {accepted}")
            return
        if not _until_settled(process, 120):
            tally.fail(f"{name}: the run did not settle; stderr {process.stderr[-300:]!r}")
            return
        state = process.request({"id": "s", "type": "get_state"}, timeout=60)
        text = process.request({"id": "t", "type": "get_last_assistant_text"}, timeout=60)["data"]["text"]
        if not state.get("success") or state["data"]["isStreaming"]:
            tally.fail(f"{name}: get_state after the run: {state}")
        if succeed and text != ANSWER:
            tally.fail(f"{name}: the last answer is {text!r}")
        ends = [r for r in process.records if r.get("type") == "agent_end"]
        final = ends[-1]["messages"][-1] if ends and ends[-1].get("messages") else {}
        if not succeed and (final.get("stopReason") != "error" or not final.get("errorMessage")):
            tally.fail(f"{name}: wanted one clear error, the run ended with {str(final)[:200]}")
        if process.close(timeout=60) != 0:
            tally.fail(f"{name}: exit code after end of input")
    finally:
        process.kill()
    _check_session(env, tally, name, succeed)


_RUN_EVENTS = ("agent_start", "agent_end", "auto_retry_start", "auto_retry_end")


def _until_settled(process: Any, timeout: float) -> bool:
    """Wait until the run and its retries are over: not streaming, and the last run event is an
    ``agent_end`` or an ``auto_retry_end``, twice in a row a little apart."""
    deadline = time.monotonic() + timeout
    calm = 0
    asked = 0
    while time.monotonic() < deadline and process.proc.poll() is None:
        asked += 1
        state = process.request({"id": f"settle-{asked}", "type": "get_state"}, timeout=60)["data"]
        events = [r["type"] for r in process.records if r.get("type") in _RUN_EVENTS]
        over = bool(events) and events[-1] in ("agent_end", "auto_retry_end") and not state["isStreaming"]
        calm = calm + 1 if over else 0
        if calm >= 2:
            return True
        time.sleep(0.25)
    return False


@both_sizes_within(3600)
def test_each_fault_ends_in_a_retried_success_or_one_clear_error(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    for name, (turns, succeed) in FAULTS.items():
        for mode, run in (("print", _print_run), ("rpc", _rpc_run)):
            tally = battery.case(f"provider fault: {name} ({mode})")
            for n in tally.attempts(tries(1, 5, slow=slow)):
                with LLMServer(json.loads(json.dumps(turns))) as server:
                    env = make_env(tmp_path / f"{name}-{mode}-{n}".replace(" ", "-"), server, SETTINGS)
                    if name == "connection refused":
                        _refuse(env)
                    run(env, tally, name, succeed)
