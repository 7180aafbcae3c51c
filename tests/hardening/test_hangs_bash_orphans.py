"""Battery: bash commands that leave children behind, ended by a timeout or an abort, leave nothing.

Each command starts ``sleep`` processes with a marker of their own in argv (background jobs,
loops, ``nohup``, jobs in their own process group or session, children that ignore SIGTERM,
pipelines, double forks). Through ``pi --mode rpc`` the bash tool ends them by its ``timeout``
or by ``abort``, and the RPC ``bash`` command by ``abort_bash``; ``pi -p`` by a timeout. Then
no process with the marker may be alive (a survivor is killed by the test and counted as a
failure); a tool result missing from the session file counts as lost.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest
from battery import Battery
from battery import Tally
from battery import both_sizes
from battery import tries
from hangs_support import ANSWER_BOUND
from hangs_support import pids_with
from hangs_support import rpc_session
from hangs_support import run_print
from hangs_support import session_messages
from hangs_support import survivors

from piko.testing import text_turn
from piko.testing import tool_turn

SCENARIOS = {
    "background child": "sleep {m} & sleep {m}",
    "sleep loop": "while true; do sleep {m}; done",
    "background loop": "(while true; do sleep {m}; done) & wait",
    "nohup": "nohup sleep {m} >/dev/null 2>&1 & sleep {m}",
    "own process group": "set -m; sleep {m} & wait",
    "own session": "setsid sleep {m} & wait",
    "ignores SIGTERM": "bash -c 'trap \"\" TERM HUP INT; sleep {m}' & wait",
    "pipeline": "sleep {m} | sleep {m}",
    "double fork": "( ( sleep {m} & ) & ); sleep {m}",
    "orphan in its own group": "( set -m; sleep {m} & ); sleep {m}",
}
_serial = itertools.count(1)


def _marker() -> str:
    """A ``sleep`` argument no other process has: this process's pid and a serial number."""
    return f"{4000 + next(_serial)}.{os.getpid():07d}1"


def _wait_for(marker: str) -> bool:
    deadline = time.monotonic() + ANSWER_BOUND
    while time.monotonic() < deadline:
        if pids_with(marker):
            return True
        time.sleep(0.02)
    return False


def _tally(battery: Battery, tallies: dict[str, Tally], name: str, how: str) -> Tally:
    if name not in tallies:
        tallies[name] = battery.case(f"hangs bash orphans: {name} ({how})")
    return tallies[name]


def _check(tally: Tally, marker: str) -> None:
    left = survivors(marker)
    if left:
        tally.fail(f"{len(left)} process(es) with the marker survived")


def _timeout_round(root: Path, battery: Battery, tallies: dict[str, Tally]) -> None:
    markers = {name: _marker() for name in SCENARIOS}
    turns = [
        tool_turn("bash", {"command": SCENARIOS[name].format(m=markers[name]), "timeout": 0.5})
        for name in SCENARIOS
    ]
    with rpc_session(root, [*turns, text_turn("done")]) as process:
        process.send({"id": "p", "type": "prompt", "message": "run them"})
        for name in SCENARIOS:
            tally = _tally(battery, tallies, name, "timeout")
            tally.tries += 1
            try:
                end = process.wait_for(lambda r: r.get("type") == "tool_execution_end", timeout=ANSWER_BOUND)
            except (TimeoutError, EOFError):
                tally.fail("no tool result")
                survivors(markers[name])
                return
            text = end["result"]["content"][0]["text"] if end["result"]["content"] else ""
            if "timed out" not in text:
                tally.fail(f"not ended by the timeout: {text[-80:]!r}")
            _check(tally, markers[name])
        process.wait_for(lambda r: r.get("type") == "agent_end", timeout=ANSWER_BOUND)
        process.close(timeout=ANSWER_BOUND)
    saved = [m for m in session_messages(root) if m["role"] == "toolResult"]
    first = tallies[next(iter(SCENARIOS))]
    first.lose(len(SCENARIOS) - len(saved), "tool results missing from the session file")


def _abort_round(root: Path, battery: Battery, tallies: dict[str, Tally]) -> None:
    markers = {name: _marker() for name in SCENARIOS}
    turns = [tool_turn("bash", {"command": SCENARIOS[name].format(m=markers[name])}) for name in SCENARIOS]
    with rpc_session(root, turns) as process:
        for index, name in enumerate(SCENARIOS):
            tally = _tally(battery, tallies, name, "abort")
            tally.tries += 1
            process.send({"id": f"p{index}", "type": "prompt", "message": name})
            if not _wait_for(markers[name]):
                tally.fail("the command never started")
                continue
            process.request({"id": f"a{index}", "type": "abort"}, timeout=ANSWER_BOUND)
            try:
                process.wait_for(lambda r: r.get("type") == "agent_end", timeout=ANSWER_BOUND)
            except (TimeoutError, EOFError):
                tally.fail("the run did not end after abort")
            _check(tally, markers[name])
        process.close(timeout=ANSWER_BOUND)
    saved = [m for m in session_messages(root) if m["role"] == "toolResult"]
    first = tallies[next(iter(SCENARIOS))]
    first.lose(len(SCENARIOS) - len(saved), "tool results missing from the session file")


def _abort_bash_round(root: Path, battery: Battery, tallies: dict[str, Tally]) -> None:
    with rpc_session(root, []) as process:
        for index, (name, command) in enumerate(SCENARIOS.items()):
            tally = _tally(battery, tallies, name, "abort_bash")
            tally.tries += 1
            marker = _marker()
            process.send({"id": f"b{index}", "type": "bash", "command": command.format(m=marker)})
            if not _wait_for(marker):
                tally.fail("the command never started")
                continue
            process.request({"id": f"x{index}", "type": "abort_bash"}, timeout=ANSWER_BOUND)
            try:
                process.wait_for(
                    lambda r, i=index: r.get("type") == "response" and r.get("id") == f"b{i}", ANSWER_BOUND
                )
            except (TimeoutError, EOFError):
                tally.fail("the bash command got no answer after abort_bash")
            _check(tally, marker)
        process.close(timeout=ANSWER_BOUND)


@both_sizes
@pytest.mark.parametrize("how", ["timeout", "abort", "abort_bash"])
def test_no_child_survives_a_timeout_or_an_abort(
    battery: Battery, tmp_path: Path, how: str, slow: bool
) -> None:
    tallies: dict[str, Tally] = {}
    run_round = {"timeout": _timeout_round, "abort": _abort_round, "abort_bash": _abort_bash_round}[how]
    for round_index in range(tries(1, 5, slow=slow)):
        run_round(tmp_path / f"{how}-{round_index}", battery, tallies)


@both_sizes
def test_print_mode_leaves_no_child_after_a_bash_timeout(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    names = list(SCENARIOS) if slow else ["own process group", "own session"]
    for name in names:
        tally = battery.case(f"hangs bash orphans: pi -p {name} (timeout)")
        for attempt in tally.attempts(tries(1, 2, slow=slow)):
            marker = _marker()
            call = tool_turn("bash", {"command": SCENARIOS[name].format(m=marker), "timeout": 0.5})
            root = tmp_path / f"print-{len(tally.case)}-{attempt}-{marker}"
            done = run_print(root, [call, text_turn("finished")], "run it")
            if done is None or done.returncode != 0:
                tally.fail("pi -p did not end cleanly" if done is None else f"exit {done.returncode}")
            _check(tally, marker)
