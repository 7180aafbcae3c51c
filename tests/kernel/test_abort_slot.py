"""``AbortSlot``: the one abortable piece of work under way (the agent's run, the retry wait, a user's command)."""

from __future__ import annotations

import pytest

from piko.lib.abort import AbortSlot


def test_abort_reaches_the_work_under_way_and_the_slot_empties_when_it_ends() -> None:
    slot = AbortSlot()
    assert not slot.busy and slot.signal is None
    slot.abort()  # nothing runs: nothing happens
    with slot.running() as signal:
        assert slot.busy and slot.signal is signal and not signal.aborted
        slot.abort()
        assert signal.aborted
    assert not slot.busy and slot.signal is None


def test_each_piece_of_work_gets_a_fresh_signal_and_a_failure_still_empties_the_slot() -> None:
    slot = AbortSlot()
    with pytest.raises(ValueError), slot.running() as first:
        slot.abort()
        raise ValueError("the work failed")
    assert not slot.busy
    with slot.running() as second:
        assert second is not first and not second.aborted
