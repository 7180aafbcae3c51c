"""piko.lib.subscriptions: the unsubscribe function every listener list hands back."""

from __future__ import annotations

from piko.extensions.event_bus import EventBus
from piko.lib.abort import AbortController
from piko.lib.subscriptions import subscribe


def test_the_unsubscribe_removes_the_callback_once() -> None:
    callbacks: list[str] = ["a"]
    unsubscribe = subscribe(callbacks, "b")
    assert callbacks == ["a", "b"]
    unsubscribe()
    assert callbacks == ["a"]
    unsubscribe()  # a second call, like one after the list was cleared, does nothing
    callbacks.clear()
    unsubscribe()
    assert callbacks == []


def test_a_callback_subscribed_twice_needs_two_unsubscribes() -> None:
    callbacks: list[str] = []
    first, second = subscribe(callbacks, "x"), subscribe(callbacks, "x")
    first()
    assert callbacks == ["x"]
    second()
    assert callbacks == []


def test_the_listener_lists_hand_it_back() -> None:
    heard: list[object] = []
    bus = EventBus()
    off = bus.on("ping", heard.append)
    bus.emit("ping", 1)
    off()
    off()
    bus.emit("ping", 2)
    controller = AbortController()
    remove = controller.signal.add_listener(lambda: heard.append("aborted"))
    remove()
    controller.abort()
    assert heard == [1]
