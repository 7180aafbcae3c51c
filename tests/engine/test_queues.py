"""Message queues (``piko.engine.queues``): steering and follow-ups while a run streams, clearing, next-turn messages."""

from __future__ import annotations

import asyncio
from typing import Any

from support.faux_answers import Held
from support.faux_answers import recording
from support.faux_answers import user_texts

from piko.data.messages import CustomMessage
from piko.engine.queues import ClearedQueue


async def _streaming(session: Any, calls: list[Any], prompt: str = "start") -> asyncio.Task[None]:
    """A run held inside its first model call (which appends to ``calls``) until its gate opens.

    Streaming alone is not enough: a message queued before the first request is built goes into
    it (as in pi), so the test waits for the request to be out (raced on a loaded machine)."""
    task = asyncio.ensure_future(session.prompt(prompt))
    while not calls:
        await asyncio.sleep(0.001)
    return task


def test_steering_reaches_the_next_model_call_and_follow_ups_come_after(rig, run) -> None:
    seen: list[list[str]] = []
    held = Held({"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "missing.txt"}}}]}, seen)

    async def scenario() -> Any:
        session = await rig.session([held, recording(seen, "read it"), recording(seen, "summarized")])
        task = await _streaming(session, seen)
        await session.steer("look at b too")
        await session.follow_up("then summarize")
        pending = session.queues.pending_count
        held.gate.set()
        await task
        return session, pending

    session, pending = run(scenario())
    assert pending == 2
    assert seen == [
        ["start"],
        ["start", "look at b too"],  # steering: before the model is called again
        ["start", "look at b too", "then summarize"],  # the follow-up: once the model would stop
    ]
    updates = [(e.steering, e.follow_up) for e in rig.of_type("queue_update")]
    assert updates == [
        (["look at b too"], []),
        (["look at b too"], ["then summarize"]),
        ([], ["then summarize"]),
        ([], []),
    ]
    assert session.queues.pending_count == 0 and not session.queues.has_pending()


def test_clear_returns_what_was_queued_and_nothing_is_delivered(rig, run) -> None:
    calls: list[list[str]] = []
    held = Held("done", calls)

    async def scenario() -> tuple[ClearedQueue, int]:
        session = await rig.session([held])
        task = await _streaming(session, calls)
        await session.steer("one")
        await session.follow_up("two")
        await session.follow_up("three")
        before = len(rig.of_type("queue_update"))
        cleared = session.queues.clear()
        told_at_once = len(rig.of_type("queue_update")) - before
        held.gate.set()
        await task
        return cleared, told_at_once

    cleared, told_at_once = run(scenario())
    assert cleared == ClearedQueue(steering=["one"], follow_up=["two", "three"])
    assert told_at_once == 1 and rig.of_type("queue_update")[-1].steering == []
    assert calls == [["start"]]  # no second model call: the queue was empty when the run ended


def test_next_turn_messages_wait_for_the_next_prompt_and_go_once(rig, run) -> None:
    seen: list[list[str]] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> str:
        seen.append(user_texts(context))  # a custom message reaches the model as a user message
        return "ok"

    async def scenario() -> Any:
        session = await rig.session([reply, reply])
        note = CustomMessage(custom_type="note", content="remember the tests", display=False)
        session.queues.defer_to_next_turn(note)
        waiting = session.queues.has_pending(), session.queues.pending_count
        await session.prompt("first")
        await session.prompt("second")
        return waiting

    waiting = run(scenario())
    assert waiting == (True, 0)  # pending, but not a queued user message
    assert seen == [["first", "remember the tests"], ["first", "remember the tests", "second"]]


def test_queue_modes_are_set_on_the_agent_and_saved(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        session.queues.set_steering_mode("all")
        session.queues.set_follow_up_mode("all")
        return session

    session = run(scenario())
    assert (session.queues.steering_mode, session.queues.follow_up_mode) == ("all", "all")
    assert (session.agent.steering.mode, session.agent.follow_ups.mode) == ("all", "all")
    assert rig.settings()["steeringMode"] == "all" and rig.settings()["followUpMode"] == "all"


def test_reset_forgets_the_queue_without_telling_anyone(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        await session.queues.add("kept?", None, follow_up=True)
        told = len(rig.of_type("queue_update"))
        session.queues.reset()
        return session, told

    session, told = run(scenario())
    assert told == 1 and len(rig.of_type("queue_update")) == 1
    assert session.queues.pending_count == 0 and not session.agent.has_queued_messages()
