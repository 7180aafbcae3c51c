"""The battery's own bookkeeping: a failure or a loss fails the case and names it."""

from __future__ import annotations

import pytest
from battery import Battery
from battery import tries


def test_a_clean_case_passes_and_a_lossy_one_names_what_was_lost() -> None:
    clean = Battery("t")
    case = clean.case("clean")
    case.tries = 3
    clean.check()
    lossy = Battery("t")
    bad = lossy.case("lossy")
    bad.tries = 2
    bad.lose(1, "entry 7 missing after reload")
    with pytest.raises(AssertionError, match="lossy: 0/2 failed, 1 lost; lost 1: entry 7 missing"):
        lossy.check()


def test_the_sample_is_small_and_the_slow_run_full() -> None:
    assert tries(5, 500, slow=True) == 500
    assert tries(5, 500, slow=False) <= 500
