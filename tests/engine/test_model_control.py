"""Model and thinking control (``piko.engine.model_control``): switching, cycling, clamping, what is recorded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from piko.data.messages import Model

RECORDER = """
import json, os

def activate(pi):
    def log(entry):
        with open(os.path.join(os.environ["HOME"], "model-events.jsonl"), "a") as fh:
            fh.write(json.dumps(entry) + "\\n")

    pi.on("model_select", lambda e, ctx: log({
        "event": "model_select", "model": e.model.id, "previous": e.previous_model and e.previous_model.id,
        "source": e.source}))
    pi.on("thinking_level_select", lambda e, ctx: log({
        "event": "thinking_level_select", "level": e.level, "previous": e.previous_level}))
"""


def _extension_log(rig: Any) -> list[dict[str, Any]]:
    path = rig.root / "home" / "model-events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _changes(session: Any) -> list[tuple[str, Any]]:
    out = []
    for entry in session.session_manager.get_entries():
        if entry.type == "model_change":
            out.append(("model", f"{entry.provider}/{entry.model_id}"))
        elif entry.type == "thinking_level_change":
            out.append(("thinking", entry.thinking_level))
    return out


def test_switching_to_a_reasoning_model_records_it_saves_it_and_tells_extensions(rig, run) -> None:
    ext = rig.write_extension("recorder", RECORDER)

    async def scenario() -> Any:
        session = await rig.session([], extensions=[ext])
        before = _changes(session)
        await session.models.set_model(session.model_registry.find("local", "think-1"))
        for _ in range(1000):  # thinking_level_select is told in the background
            if len(_extension_log(rig)) == 2:
                break
            await asyncio.sleep(0.005)
        return session, before

    session, before = run(scenario())
    assert before == [("model", "faux/faux-1"), ("thinking", "off")]
    assert session.model.id == "think-1" and session.thinking_level == "medium"  # the default level
    assert _changes(session)[2:] == [("model", "local/think-1"), ("thinking", "medium")]
    settings = rig.settings()
    assert (settings["defaultProvider"], settings["defaultModel"]) == ("local", "think-1")
    assert settings["defaultThinkingLevel"] == "medium"
    assert [e.level for e in rig.of_type("thinking_level_changed")] == ["medium"]
    # in the background, thinking_level_select may come before or after model_select
    assert sorted(_extension_log(rig), key=lambda e: e["event"]) == [
        {"event": "model_select", "model": "think-1", "previous": "faux-1", "source": "set"},
        {"event": "thinking_level_select", "level": "medium", "previous": "off"},
    ]


def test_a_model_without_credentials_is_refused(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        with pytest.raises(RuntimeError, match="No API key for nowhere/x"):
            await session.models.set_model(Model(id="x", provider="nowhere"))
        return session

    session = run(scenario())
    assert session.model.id == "faux-1"


def test_cycling_goes_through_the_available_models_both_ways(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([], options={"provider": "local", "model": "plain-1"})
        forward = await session.models.cycle()
        back = await session.models.cycle("backward")
        return forward, back

    forward, back = run(scenario())
    # cycling keeps the level where the next model can take it (here: off, as before)
    assert (forward.model.id, forward.thinking_level, forward.is_scoped) == ("think-1", "off", False)
    assert (back.model.id, back.thinking_level, back.is_scoped) == ("plain-1", "off", False)


def test_cycling_a_scope_takes_each_models_own_thinking_level(rig, run) -> None:
    options = {"provider": "local", "model": "plain-1", "models": "local/plain-1,local/think-1:high"}

    async def scenario() -> Any:
        session = await rig.session([], options=options)
        return session, await session.models.cycle()

    session, cycled = run(scenario())
    assert [s.model.id for s in session.models.scoped_models] == ["plain-1", "think-1"]
    assert (cycled.model.id, cycled.thinking_level, cycled.is_scoped) == ("think-1", "high", True)
    assert [
        e.source for e in rig.of_type("model_select")
    ] == []  # extensions only: listeners see no model_select


def test_one_model_alone_does_not_cycle(rig, run) -> None:
    options = {"provider": "local", "model": "plain-1", "models": "local/plain-1"}

    async def scenario() -> Any:
        session = await rig.session([], options=options)
        return await session.models.cycle()

    assert run(scenario()) is None


def test_thinking_levels_are_clamped_to_the_model_and_recorded_once(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([], options={"provider": "local", "model": "think-1", "thinking": "low"})
        levels = session.models.available_thinking_levels()
        session.models.set_thinking_level("xhigh")  # think-1 has no xhigh: the nearest is high
        clamped = session.thinking_level
        session.models.set_thinking_level("high")  # no change: nothing recorded
        cycled = session.models.cycle_thinking_level()
        return session, levels, clamped, cycled

    session, levels, clamped, cycled = run(scenario())
    assert levels == ["off", "minimal", "low", "medium", "high"]
    assert (clamped, cycled) == ("high", "off")
    assert [e.level for e in rig.of_type("thinking_level_changed")] == ["high", "off"]
    assert [c for c in _changes(session) if c[0] == "thinking"][-2:] == [
        ("thinking", "high"),
        ("thinking", "off"),
    ]


def test_a_model_that_does_not_reason_has_no_thinking_to_cycle(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([], options={"provider": "local", "model": "plain-1"})
        return session, session.models.cycle_thinking_level()

    session, cycled = run(scenario())
    assert cycled is None and not session.models.supports_thinking()
    assert session.models.available_thinking_levels() == ["off"]


def test_require_ready_explains_what_is_missing(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        session.models.require_ready()  # faux needs no key
        session.model = Model(id="x", provider="nowhere")
        with pytest.raises(RuntimeError, match="nowhere"):
            session.models.require_ready()
        session.model = None
        with pytest.raises(RuntimeError, match="model"):
            session.models.require_ready()

    run(scenario())
