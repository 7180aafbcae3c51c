"""Battery: extensions that raise, hang (plainly or as coroutines) or return garbage, on six events.

Through ``pi --mode rpc``: the prompt is answered, ``get_state`` is answered while the bad
handler runs, the run ends (by the handler budget, or at once by ``abort`` for the hangs), and
every message the session reports is in its file. Through ``pi -p``: the process ends with the
answer or a clear error, and the session holds the prompt and the final answer.
"""

from __future__ import annotations

import time
from itertools import product
from pathlib import Path

from battery import Battery
from battery import Tally
from battery import both_sizes
from battery import tries
from hangs_support import ANSWER_BOUND
from hangs_support import CHAOS_EXTENSION
from hangs_support import answers
from hangs_support import rpc_session
from hangs_support import run_print
from hangs_support import session_messages

from piko.testing import text_turn
from piko.testing import tool_turn

EVENTS = ("tool_call", "tool_result", "input", "before_agent_start", "context", "message_update")
MODES = ("raise", "hang_sync", "hang_async", "garbage")
HANGS = ("hang_sync", "hang_async")
BUDGET_MS = 500
SETTINGS = {"extensionHandlers": {"timeoutMs": BUDGET_MS, "toolCallTimeoutMs": BUDGET_MS}}
TURNS = [tool_turn("bash", {"command": "echo chaos"}), text_turn("all done, no more")]
# The CI-sized sample: each event and each mode at least once, both hang kinds aborted.
SAMPLE = [
    ("tool_call", "hang_sync"),
    ("tool_result", "hang_async"),
    ("input", "hang_sync"),
    ("before_agent_start", "garbage"),
    ("context", "raise"),
    ("message_update", "hang_sync"),
    ("tool_call", "garbage"),
    ("message_update", "hang_async"),
]


def _environment(root: Path, event: str, mode: str) -> dict[str, str]:
    return {"CHAOS_EVENT": event, "CHAOS_MODE": mode, "CHAOS_MARK": str(root / "mark.txt")}


def _wait_for_mark(root: Path) -> bool:
    mark = root / "mark.txt"
    deadline = time.monotonic() + ANSWER_BOUND
    while time.monotonic() < deadline:
        if mark.exists() and mark.read_text():
            return True
        time.sleep(0.02)
    return False


def _rpc_try(root: Path, event: str, mode: str, abort: bool, tally: Tally) -> None:
    env = _environment(root, event, mode)
    with rpc_session(root, TURNS, env=env, settings=SETTINGS, extra_args=("-e", CHAOS_EXTENSION)) as process:
        process.send({"id": "p", "type": "prompt", "message": "misbehave"})
        if not _wait_for_mark(root):
            tally.fail("the handler was never called")
            return
        if not answers(process, "s1"):
            tally.fail("get_state was not answered while the handler ran")
            return
        if abort and not process.request({"id": "a", "type": "abort"}, timeout=ANSWER_BOUND).get("success"):
            tally.fail("abort was not answered")
            return
        try:
            answer = process.wait_for(
                lambda r: r.get("type") == "response" and r.get("id") == "p", ANSWER_BOUND
            )
        except (TimeoutError, EOFError):
            tally.fail("the prompt got no answer")
            return
        if answer["success"]:
            try:
                end = process.wait_for(lambda r: r.get("type") == "agent_end", timeout=ANSWER_BOUND)
            except (TimeoutError, EOFError):
                tally.fail("the run did not end")
                return
            last = end["messages"][-1] if end["messages"] else {}
            expected = "aborted" if abort else "stop"
            if last.get("role") != "assistant" or last.get("stopReason") != expected:
                tally.fail(f"the run ended with {last.get('role')} {last.get('stopReason')}, not {expected}")
        elif not (abort and answer.get("error") == "Operation aborted"):
            tally.fail(f"the prompt was refused: {answer.get('error')}")
        if not answers(process, "s2"):
            tally.fail("get_state was not answered after the run")
            return
        reported = process.request({"id": "m", "type": "get_messages"}, timeout=ANSWER_BOUND)["data"][
            "messages"
        ]
        if process.close(timeout=ANSWER_BOUND) != 0:
            tally.fail(f"exit code {process.proc.returncode}")
    saved = {(m["role"], m.get("timestamp")) for m in session_messages(root)}
    missing = [m for m in reported if (m["role"], m.get("timestamp")) not in saved]
    tally.lose(len(missing), f"messages not in the session file: {[m['role'] for m in missing]}")


def _print_try(root: Path, event: str, mode: str, tally: Tally) -> None:
    env = _environment(root, event, mode)
    done = run_print(root, TURNS, "misbehave", env=env, settings=SETTINGS, extra_args=("-e", CHAOS_EXTENSION))
    if done is None:
        tally.fail("pi -p did not end")
        return
    if done.returncode != 0 or "all done" not in done.stdout:
        tally.fail(
            f"exit {done.returncode}, stdout {done.stdout[-80:]!r}, stderr {done.stderr.strip()[-160:]!r}"
        )
    roles = [m["role"] for m in session_messages(root)]
    if not roles or roles[0] != "user" or roles[-1] != "assistant":
        tally.lose(1, f"session holds {roles}")


def _combos(slow: bool) -> list[tuple[str, str]]:
    return list(product(EVENTS, MODES)) if slow else SAMPLE


@both_sizes
def test_rpc_keeps_answering_and_aborting_whatever_a_handler_does(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    for event, mode in _combos(slow):
        for abort in (False, True) if mode in HANGS else (False,):
            how = "abort" if abort else "budget"
            tally = battery.case(f"hangs chaos rpc: {event} {mode} ({how})")
            for attempt in tally.attempts(tries(1, 2, slow=slow)):
                _rpc_try(tmp_path / f"{event}-{mode}-{how}-{attempt}", event, mode, abort, tally)


@both_sizes
def test_print_mode_answers_whatever_a_handler_does(battery: Battery, tmp_path: Path, slow: bool) -> None:
    combos: list[tuple[str, str]] = _combos(slow) if slow else SAMPLE[:4]
    for event, mode in combos:
        tally = battery.case(f"hangs chaos pi -p: {event} {mode}")
        for attempt in tally.attempts(tries(1, 2, slow=slow)):
            _print_try(tmp_path / f"print-{event}-{mode}-{attempt}", event, mode, tally)
