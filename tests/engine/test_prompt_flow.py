"""A prompt's path into the agent (``piko.engine.prompt_flow``) and the session's system prompt
(``piko.engine.system_prompt.SessionSystemPrompt``): dispositions, queued batches and
``before_agent_start``, the flags over the project's prompt files."""

from __future__ import annotations

import asyncio
from typing import Any

from piko.engine.system_prompt import SessionSystemPrompt
from piko.resources.loader import Resources
from piko.resources.loader import SystemPromptFiles

COMMAND = """
def activate(pi):
    pi.register_command("noop", handler=lambda args, ctx: None)
"""

STEER_POLICY = """
def activate(pi):
    def before(event, ctx):
        if event.prompt == "steered":
            return {"system_prompt": "steered prompt"}
    pi.on("before_agent_start", before)
"""


def test_the_flags_win_over_the_prompt_files_and_a_handler_prompt_stands_apart() -> None:
    resources = Resources(system_prompts=SystemPromptFiles(system="From SYSTEM.md", append=["From APPEND"]))
    from_files = SessionSystemPrompt(None, None, [])
    from_files.rebuild("/work", [], resources)
    assert from_files.base.startswith("From SYSTEM.md\n\nFrom APPEND\n")
    flags = SessionSystemPrompt(None, "From --system-prompt", ["From --append-system-prompt"])
    flags.rebuild("/work", [], resources)
    assert flags.base.startswith("From --system-prompt\n\nFrom --append-system-prompt\n")
    assert "SYSTEM.md" not in flags.base and flags.options.custom_prompt == "From --system-prompt"
    flags.override = "a handler's prompt"
    assert flags.current == "a handler's prompt"
    flags.override = None
    assert flags.current == flags.base


def test_each_prompt_says_whether_it_ran_was_handled_or_was_queued(rig, run) -> None:
    ext = rig.write_extension("command", COMMAND)
    release = asyncio.Event()
    dispositions: list[str] = []

    async def slow(context: Any, options: Any, state: Any, model: Any) -> str:
        await release.wait()
        return "done"

    async def scenario() -> None:
        session = await rig.session([slow, "later"], extensions=[ext])
        await session.prompt("/noop")
        dispositions.append(session.prompt_disposition)
        running = asyncio.create_task(session.prompt("first"))
        while not session.is_streaming:
            await asyncio.sleep(0.01)
        dispositions.append(session.prompt_disposition)
        await session.prompt("meanwhile", streaming_behavior="followUp")
        dispositions.append(session.prompt_disposition)
        release.set()
        await running

    run(scenario())
    assert dispositions == ["handled", "started", "queued"]


def test_a_steered_batch_goes_through_before_agent_start(rig, run) -> None:
    ext = rig.write_extension("policy", STEER_POLICY)
    release = asyncio.Event()
    prompts: list[str] = []

    asking = asyncio.Event()

    async def first(context: Any, options: Any, state: Any, model: Any) -> str:
        prompts.append(context.system_prompt)
        asking.set()
        await release.wait()
        return "first answer"

    def second(context: Any, options: Any, state: Any, model: Any) -> str:
        prompts.append(context.system_prompt)
        return "second answer"

    async def scenario() -> None:
        session = await rig.session([first, second], extensions=[ext])
        running = asyncio.create_task(session.prompt("go"))
        await asking.wait()  # the first request is out: the steer waits for the next one
        assert await session.steer("steered") == "queued"
        release.set()
        await running

    run(scenario())
    assert prompts[0] != "steered prompt"
    assert "steered prompt" in prompts[1:]
