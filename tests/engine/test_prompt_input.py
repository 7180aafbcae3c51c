"""A prompt's way in (``piko.engine.prompt_input``): extension commands, the ``input`` hook, templates, ``before_agent_start``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.faux_answers import recording
from support.faux_answers import user_texts

from piko.lib.abort import AbortError

COMMANDS = """
def activate(pi):
    pi.register_command("greet", handler=lambda args, ctx: "say hi to " + args)
    def broken(args, ctx):
        raise ValueError("command bug")
    pi.register_command("broken", handler=broken)
"""

INPUT = """
def activate(pi):
    def shout(event, ctx):
        if event.text == "skip me":
            return {"action": "handled"}
        if event.text == "empty me":
            return {"action": "transform", "text": ""}
        return {"action": "transform", "text": event.text.upper()}
    pi.on("input", shout)
"""

HANGING_INPUT = """
import asyncio

def activate(pi):
    async def hang(event, ctx):
        await asyncio.sleep(60)
    pi.on("input", hang)
"""

BEFORE_START = """
def activate(pi):
    def before(event, ctx):
        if event.prompt != "first":
            return None
        return {"system_prompt": event.system_prompt + "\\nBe brief.",
                "messages": [{"customType": "hint", "content": "the user likes lists", "display": False}]}
    pi.on("before_agent_start", before)
"""


def test_an_extension_command_runs_and_its_text_is_prompted(rig, run) -> None:
    ext = rig.write_extension("commands", COMMANDS)
    seen: list[Any] = []
    errors: list[Any] = []

    async def scenario() -> Any:
        session = await rig.session([recording(seen)], extensions=[ext])
        session.app.dispatcher.error_listeners.append(errors.append)
        await session.prompt("/greet Ada")
        await session.prompt("/broken now")
        return session

    session = run(scenario())
    assert seen == [["say hi to Ada"]]
    (error,) = errors
    assert (error.event, error.error) == ("command", "command bug")
    assert len(session.messages) == 2  # the failing command sent nothing


def test_an_extension_command_cannot_wait_in_a_queue(rig, run) -> None:
    ext = rig.write_extension("commands", COMMANDS)

    async def scenario() -> None:
        session = await rig.session([], extensions=[ext])
        with pytest.raises(RuntimeError, match='Extension command "/greet" cannot be queued'):
            await session.steer("/greet later")
        with pytest.raises(RuntimeError, match='Extension command "/greet" cannot be queued'):
            await session.follow_up("/greet later")
        await session.follow_up("/unknown is plain text")
        assert session.queues.pending_count == 1

    run(scenario())


def test_input_handlers_transform_or_take_the_prompt(rig, run) -> None:
    ext = rig.write_extension("input", INPUT)
    seen: list[Any] = []

    async def scenario() -> None:
        session = await rig.session([recording(seen)], extensions=[ext])
        await session.prompt("skip me")
        await session.prompt("empty me")
        await session.prompt("hello there")

    run(scenario())
    assert seen == [["HELLO THERE"]]


def test_prompt_templates_expand_and_unknown_names_pass_through(rig, run) -> None:
    rig.write_prompt_template("review", "Review $1 carefully.\n")
    seen: list[Any] = []

    async def scenario() -> None:
        session = await rig.session([recording(seen), recording(seen)])
        await session.prompt("/review parser.py")
        await session.prompt("/nothing here")

    run(scenario())
    assert seen[0] == ["Review parser.py carefully.\n"]
    assert seen[1][-1] == "/nothing here"


def test_before_agent_start_adds_messages_and_replaces_the_system_prompt_for_one_prompt(rig, run) -> None:
    ext = rig.write_extension("before", BEFORE_START)
    prompts: list[str] = []
    texts: list[Any] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> str:
        prompts.append(context.system_prompt)
        texts.append(user_texts(context))
        return "ok"

    async def scenario() -> Any:
        session = await rig.session([reply, reply], extensions=[ext])
        await session.prompt("first")
        await session.prompt("second")
        return session

    session = run(scenario())
    assert prompts[0] == prompts[1] + "\nBe brief."
    assert session.get_system_prompt() == prompts[1]  # the override held for its prompt only
    assert texts == [["first", "the user likes lists"], ["first", "the user likes lists", "second"]]


def test_abort_ends_a_prompt_whose_input_handler_hangs(rig, run) -> None:
    ext = rig.write_extension("hang", HANGING_INPUT)

    async def scenario() -> Any:
        session = await rig.session(["never"], extensions=[ext])
        task = asyncio.ensure_future(session.prompt("hello"))
        await asyncio.sleep(0.05)
        await session.abort()
        with pytest.raises(AbortError, match="Operation aborted"):
            await asyncio.wait_for(task, 10)
        return session

    session = run(scenario())
    assert session.messages == []
