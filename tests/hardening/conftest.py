"""The hardening battery: fault, fuzz and bad-input runs, each reporting what it tried and lost.

Every battery test takes the ``battery`` fixture and records, per case, how many tries it made,
how many failed and how many pieces of data were lost (a session entry, an auth key, an answer
to a request). The counts print in one table at the end of the run, and a test fails when any
case records a failure or a loss. Full-size runs are marked ``slow`` (``pytest -m slow
tests/hardening``); the default run takes a CI-sized sample of each (``SAMPLE``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from battery import Battery
from battery import Tally
from support.clean_env import clean_environment


@pytest.fixture
def battery(request: pytest.FixtureRequest) -> Iterator[Battery]:
    """Records tries, failures and losses of the calling test's cases."""
    recorder = Battery(request.node.nodeid)
    yield recorder
    request.config.stash.setdefault(_TALLIES, []).extend(recorder.tallies)
    recorder.check()


@pytest.fixture
def clean_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path``, with the environment cleaned and pointed into it (``clean_environment``)."""
    clean_environment(monkeypatch, tmp_path)
    return tmp_path


_TALLIES = pytest.StashKey[list[Tally]]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    tallies = config.stash.get(_TALLIES, [])
    if not tallies:
        return
    terminalreporter.section("hardening battery")
    terminalreporter.write_line(f"{'case':58} {'tries':>7} {'failed':>7} {'lost':>5}")
    for tally in tallies:
        terminalreporter.write_line(
            f"{tally.case[:58]:58} {tally.tries:>7} {tally.failures:>7} {tally.lost:>5}"
        )
