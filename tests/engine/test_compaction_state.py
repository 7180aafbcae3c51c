"""The compaction switch and state (``piko.engine.compaction_state``): enabled, running, cancel, the last outcome."""

from __future__ import annotations

from typing import Any

from piko.engine.compaction_state import CompactionState
from piko.engine.session_services import SessionServices
from piko.lib.abort import AbortController


def test_the_switch_reads_and_saves_the_setting() -> None:
    saved: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    state = CompactionState(SessionServices(settings=settings, save_setting=saved.__setitem__))
    assert state.enabled is True and state.running is False
    state.set_enabled(False)
    assert saved == {"compaction.enabled": False}
    settings["compaction.enabled"] = False
    assert state.enabled is False


def test_abort_cancels_only_a_compaction_under_way() -> None:
    state = CompactionState(SessionServices(settings={}))
    state.abort()  # nothing runs: nothing to cancel
    state.controller = controller = AbortController()
    state.abort()
    assert controller.signal.aborted


def test_a_manual_compaction_leaves_its_outcome(rig, run) -> None:
    turns = ["one", "two", "## Goal\nSUMMARY", "## Goal\nPREFIX"]

    async def scenario() -> Any:
        session = await rig.session(turns, settings={"compaction": {"keepRecentTokens": 1}})
        await session.prompt("first")
        await session.prompt("second")
        result = await session.compact()
        return session, result

    session, result = run(scenario())
    state = session.compaction
    assert state.last_result is result and state.last_error is None
    assert state.running is False and state.controller is None
    assert result.first_kept_entry_id and result.summary.startswith("## Goal\n")


def test_automatic_compaction_can_be_switched_off_for_the_next_start(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        session.compaction.set_enabled(False)
        return session

    session = run(scenario())
    assert rig.settings()["compaction"] == {"enabled": False}
    assert session.compaction.enabled is False
