"""The garbage collector during a real ``pi -p`` run: rare collections at start-up, usual ones after the first turn."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from agent_harness import run_logging_extension

from piko.engine import startup_gc

PROBE = """
import gc, json, os

def record(name):
    with open(os.environ["PIKO_TEST_LOG"], "a") as fh:
        fh.write(json.dumps([name, gc.get_threshold()[0], gc.get_freeze_count()]) + "\\n")

def activate(pi):
    for name in ["session_start", "turn_start", "turn_end", "agent_end"]:
        pi.on(name, (lambda n: lambda event, ctx: record(n))(name))
"""


def test_collections_are_rare_until_the_first_turn_ends(pi_env: Any, tmp_path: Path) -> None:
    rows = run_logging_extension(pi_env, tmp_path, PROBE)  # two turns: a tool call, then the answer
    usual = gc.get_threshold()[0] if not startup_gc._saved else startup_gc._saved[0]
    thresholds = [(name, threshold) for name, threshold, _frozen in rows]
    assert thresholds == [
        ("session_start", startup_gc.STARTUP_THRESHOLD),
        ("turn_start", startup_gc.STARTUP_THRESHOLD),
        ("turn_end", startup_gc.STARTUP_THRESHOLD),  # extensions hear it before the session resumes
        ("turn_start", usual),  # the second turn runs with the usual collections
        ("turn_end", usual),
        ("agent_end", usual),
    ]
    assert rows[3][2] > rows[2][2]  # what the first turn made alive was frozen


def test_pause_and_resume() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    try:
        startup_gc.pause()
        startup_gc.pause()  # a second pause keeps the first saved thresholds
        assert gc.get_threshold() == (startup_gc.STARTUP_THRESHOLD, before[1], before[2])
        startup_gc.resume()
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() >= frozen
        startup_gc.resume()  # nothing to do
        assert gc.get_threshold() == before
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
