"""The session's listeners (``piko.engine.listeners``): order, async listeners, a broken one, unsubscribing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from piko.data.events import QueueUpdateEvent
from piko.engine.listeners import Listeners


def test_listeners_hear_each_event_in_subscription_order_and_async_ones_are_awaited() -> None:
    listeners = Listeners()
    heard: list[str] = []

    async def slow(event: Any) -> None:
        await asyncio.sleep(0)
        heard.append("async")

    listeners.subscribe(lambda event: heard.append("first"))
    listeners.subscribe(slow)
    listeners.subscribe(lambda event: heard.append("last"))
    asyncio.run(listeners.notify(QueueUpdateEvent()))
    assert heard == ["first", "async", "last"]


def test_a_broken_listener_is_reported_and_the_others_still_hear(capsys: pytest.CaptureFixture[str]) -> None:
    listeners = Listeners()
    heard: list[Any] = []

    def broken(event: Any) -> None:
        raise ValueError("listener bug")

    listeners.subscribe(broken)
    listeners.subscribe(heard.append)
    event = QueueUpdateEvent(steering=["a"])
    asyncio.run(listeners.notify(event))
    listeners.emit_now(event)
    assert heard == [event, event]
    assert capsys.readouterr().err.count("piko: event listener failed on queue_update: listener bug") == 2


def test_emit_now_tells_plain_listeners_at_once_and_schedules_async_ones() -> None:
    async def scenario() -> list[str]:
        listeners = Listeners()
        heard: list[str] = []

        async def later(event: Any) -> None:
            heard.append("async")

        listeners.subscribe(later)
        listeners.subscribe(lambda event: heard.append("plain"))
        listeners.emit_now(QueueUpdateEvent())
        assert heard == ["plain"]  # the async listener waits for the loop
        await asyncio.sleep(0)
        return heard

    assert asyncio.run(scenario()) == ["plain", "async"]


def test_unsubscribe_stops_events_and_is_harmless_twice() -> None:
    listeners = Listeners()
    heard: list[Any] = []
    unsubscribe = listeners.subscribe(heard.append)
    unsubscribe()
    unsubscribe()
    listeners.emit_now(QueueUpdateEvent())
    assert heard == []


def test_spawn_without_a_running_loop_runs_the_work_at_once() -> None:
    done: list[bool] = []

    async def work() -> None:
        done.append(True)

    Listeners().spawn(work())
    assert done == [True]
