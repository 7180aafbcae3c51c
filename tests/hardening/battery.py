"""Counting what a battery case tried, what failed and what was lost, with the first few reasons."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

SAMPLE = int(os.environ.get("PIKO_BATTERY_SAMPLE", "0") or 0) or None
"""Override the CI-sized sample (tries per case in the default run) from the environment."""


def both_sizes_within(seconds: float | None) -> pytest.MarkDecorator:
    """A battery test's two runs, through its ``slow`` argument: the CI-sized sample by default, the
    full size under ``-m slow``; each may take ``seconds`` (``None``: the suite's own limit)."""
    limit = [] if seconds is None else [pytest.mark.timeout(seconds)]
    return pytest.mark.parametrize(
        "slow", [pytest.param(False, marks=limit), pytest.param(True, marks=[pytest.mark.slow, *limit])]
    )


both_sizes = both_sizes_within(None)
"""The two runs of a battery test that keeps the suite's time limit (see :func:`both_sizes_within`)."""


def tries(default: int, full: int, *, slow: bool) -> int:
    """How many tries a case makes: ``full`` under ``-m slow``, else the sample size."""
    if slow:
        return full
    return SAMPLE or default


@attrs.define
class Tally:
    """One case's counts; ``reasons`` keeps the first few failures for the report."""

    case: str
    tries: int = 0
    failures: int = 0
    lost: int = 0
    reasons: list[str] = attrs.field(factory=list)

    def attempts(self, count: int) -> Iterator[int]:
        """``range(count)``, each attempt counted in :attr:`tries` as it starts."""
        for attempt in range(count):
            self.tries += 1
            yield attempt

    def fail(self, reason: str) -> None:
        self.failures += 1
        if len(self.reasons) < 5:
            self.reasons.append(reason)

    def lose(self, count: int, reason: str) -> None:
        if count > 0:
            self.lost += count
            if len(self.reasons) < 5:
                self.reasons.append(f"lost {count}: {reason}")


def run_seeded_tries(
    tally: Tally, count: int, seed: int, root: Path, try_one: Callable[[Path, random.Random, Tally], None]
) -> None:
    """Make ``count`` tries of ``try_one``, each in its own folder ``root/try<n>``, all drawing on
    one random generator seeded with ``seed`` (so a run can be repeated)."""
    rng = random.Random(seed)
    for attempt in tally.attempts(count):
        try_one(root / f"try{attempt}", rng, tally)


class Battery:
    """The tallies of one test; ``check()`` fails the test when any case failed or lost data."""

    def __init__(self, test: str) -> None:
        self.test = test
        self.tallies: list[Tally] = []

    def case(self, name: str, tries: int = 0) -> Tally:
        """A new case of this test; ``tries``: how many it will make, where that is fixed before it
        starts (else :meth:`Tally.attempts` counts them)."""
        tally = Tally(case=name, tries=tries)
        self.tallies.append(tally)
        return tally

    def check(self) -> None:
        bad = [t for t in self.tallies if t.failures or t.lost]
        if bad:
            lines = [
                f"{t.case}: {t.failures}/{t.tries} failed, {t.lost} lost; " + "; ".join(t.reasons)
                for t in bad
            ]
            raise AssertionError("battery cases went wrong:\n" + "\n".join(lines))
