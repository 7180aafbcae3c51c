"""Messages from extensions (``piko.engine.extension_messages``): delivered as asked, idle or while a run streams."""

from __future__ import annotations

import asyncio
from typing import Any

from support.faux_answers import Held
from support.faux_answers import recording

from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import text_of
from piko.engine.extension_messages import custom_message_from


def test_an_idle_custom_message_joins_the_conversation_without_a_turn(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session(["hello back"])
        await session.prompt("hello")
        await session.send_custom_message(
            {"custom_type": "status", "content": "build passed", "display": True}
        )
        return session

    session = run(scenario())
    custom = session.messages[-1]
    assert isinstance(custom, CustomMessage) and (custom.custom_type, custom.content) == (
        "status",
        "build passed",
    )
    assert [e.message for e in rig.of_type("message_start")][-1] is custom
    assert [e.message for e in rig.of_type("message_end")][-1] is custom
    (entry,) = [e for e in rig.entries(session) if e["type"] == "custom_message"]
    assert (entry["customType"], entry["content"]) == ("status", "build passed")


def test_a_custom_message_may_start_a_turn(rig, run) -> None:
    seen: list[list[str]] = []

    async def scenario() -> Any:
        session = await rig.session([recording(seen, "on it")])
        await session.send_custom_message({"content": "tests failed: fix them"}, trigger_turn=True)
        return session

    session = run(scenario())
    assert seen == [["tests failed: fix them"]]
    assert session.messages[0].custom_type == "extension" and text_of(session.messages[-1].content) == "on it"


def test_while_streaming_custom_messages_steer_or_follow_up(rig, run) -> None:
    seen: list[list[str]] = []
    held = Held({"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "missing.txt"}}}]}, seen)

    async def scenario() -> None:
        session = await rig.session([held, recording(seen), recording(seen)])
        task = asyncio.ensure_future(session.prompt("start"))
        while not seen:  # the first request is out: the run is streaming
            await asyncio.sleep(0.001)
        await session.send_custom_message({"content": "later"}, deliver_as="followUp")
        await session.send_custom_message({"content": "now"})  # steer, while streaming
        assert session.queues.pending_count == 0  # not shown as queued user messages
        held.gate.set()
        await task

    run(scenario())
    assert seen == [["start"], ["start", "now"], ["start", "now", "later"]]


def test_user_messages_from_extensions_skip_expansion_and_carry_images(rig, run) -> None:
    rig.write_prompt_template("review", "Review $1.\n")
    seen: list[Any] = []

    async def scenario() -> Any:
        session = await rig.session([lambda c, o, s, m: seen.append(c.messages[-1]) or "ok"])
        blocks = [
            {"type": "text", "text": "/review this"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        ]
        await session.send_user_message(blocks)
        await session.send_user_message("queued for later", deliver_as="followUp")  # idle: waits in the queue
        return session

    session = run(scenario())
    (sent,) = seen
    assert sent.content == [
        TextContent(text="/review this"),
        ImageContent(data="aGk=", mime_type="image/png"),
    ]
    assert session.queues.pending_count == 1


def test_custom_messages_from_dicts_and_objects() -> None:
    made = custom_message_from({"customType": "note", "content": 42, "display": False, "details": {"a": 1}})
    assert (made.custom_type, made.content, made.display, made.details) == ("note", "42", False, {"a": 1})
    assert made.timestamp > 0
    blocks = custom_message_from({"content": [{"type": "text", "text": "hi"}]})
    assert blocks.content == [TextContent(text="hi")] and blocks.custom_type == "extension"
    mine = CustomMessage(custom_type="x", content="y")
    assert custom_message_from(mine) is mine and mine.timestamp > 0
