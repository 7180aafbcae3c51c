"""The user's shell (``piko.engine.user_shell``): run through ``user_bash``, recorded, held during a turn, aborted."""

from __future__ import annotations

import asyncio
from typing import Any

from support.faux_answers import Held

from piko.data.messages import BashExecutionMessage
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.engine.user_shell import NO_SHELL

CAMEL_RESULT = """
def activate(pi):
    def answer(event, ctx):
        return {"result": {"output": "from the extension: " + event.command, "exitCode": 7, "fullOutputPath": "/tmp/x"}}

    pi.on("user_bash", answer)
"""


def test_a_command_runs_in_the_session_cwd_and_is_recorded(rig, run) -> None:
    chunks: list[str] = []

    async def scenario() -> Any:
        session = await rig.session(["ok"])
        await session.prompt("hello")  # the session file exists once the model answered
        result = await session.shell.execute("pwd; exit 3", on_chunk=chunks.append)
        return session, result

    session, result = run(scenario())
    assert (result.output, result.exit_code, result.cancelled) == (f"{rig.project}\n", 3, False)
    assert "".join(chunks) == result.output
    message = session.messages[-1]
    assert isinstance(message, BashExecutionMessage)
    assert (message.command, message.exit_code, message.exclude_from_context) == ("pwd; exit 3", 3, None)
    (entry,) = [e for e in rig.entries(session) if e.get("message", {}).get("role") == "bashExecution"]
    assert entry["message"]["command"] == "pwd; exit 3" and entry["message"]["exitCode"] == 3


def test_an_excluded_command_is_kept_out_of_the_model_context(rig, run) -> None:
    seen: list[list[str]] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> str:
        seen.append([text_of(m.content) for m in context.messages if isinstance(m, UserMessage)])
        return "ok"

    async def scenario() -> Any:
        session = await rig.session([reply])
        await session.shell.execute("echo secret", exclude_from_context=True)
        await session.shell.execute("echo shared")
        await session.prompt("what ran?")
        return session

    session = run(scenario())
    bash = [m for m in session.messages if isinstance(m, BashExecutionMessage)]
    assert [m.exclude_from_context for m in bash] == [True, None]
    (texts,) = seen
    assert not any("secret" in t for t in texts) and any("shared" in t for t in texts)


def test_a_result_during_a_turn_waits_for_the_next_prompt(rig, run) -> None:
    held = Held("first answer")

    async def scenario() -> Any:
        session = await rig.session([held, "second answer"])
        task = asyncio.ensure_future(session.prompt("first"))
        while not session.is_streaming:
            await asyncio.sleep(0.001)
        await session.shell.execute("echo during")
        during = [type(m).__name__ for m in session.messages]
        held.gate.set()
        await task
        after_run = [type(m).__name__ for m in session.messages]
        await session.prompt("second")
        return during, after_run, [type(m).__name__ for m in session.messages]

    during, after_run, final = run(scenario())
    assert during == ["UserMessage"] and after_run == ["UserMessage", "AssistantMessage"]
    assert final == [
        "UserMessage", "AssistantMessage", "BashExecutionMessage", "UserMessage", "AssistantMessage",
    ]  # fmt: skip


def test_abort_stops_the_running_command(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        task = asyncio.ensure_future(session.shell.execute("sleep 30"))
        while not session.shell.is_running:
            await asyncio.sleep(0.001)
        session.shell.abort()
        result = await asyncio.wait_for(task, 20)
        return session, result

    session, result = run(scenario())
    assert result.cancelled is True and not session.shell.is_running


def test_an_extension_may_answer_with_a_camel_case_dict(rig, run) -> None:
    ext = rig.write_extension("camel", CAMEL_RESULT)

    async def scenario() -> Any:
        session = await rig.session([], extensions=[ext])
        return await session.shell.execute("ls")

    result = run(scenario())
    assert (result.output, result.exit_code, result.full_output_path) == (
        "from the extension: ls",
        7,
        "/tmp/x",
    )


def test_without_a_shell_plugin_the_user_is_told(rig, run, monkeypatch) -> None:
    monkeypatch.setenv("PIKO_DISABLE_PLUGINS", "tools.bash")

    async def scenario() -> Any:
        session = await rig.session([], options={"tools": "read"})
        return session, await session.shell.execute("ls")

    session, result = run(scenario())
    assert result.output == NO_SHELL and result.exit_code is None
    assert session.messages[-1].output == NO_SHELL


def test_the_session_s_abort_bash_stops_the_command_and_builds_no_shell_before_one(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        session.abort_bash()  # nothing runs: nothing to stop, and the shell is not built for it
        await session.abort()  # likewise the prompt flow, run control and retry
        untouched = sorted(n for n in ("shell", "_flow", "runs", "retry") if n in vars(session))
        task = asyncio.ensure_future(session.shell.execute("sleep 30"))
        while not session.shell.is_running:
            await asyncio.sleep(0.001)
        session.abort_bash()
        return untouched, await asyncio.wait_for(task, 20)

    untouched, result = run(scenario())
    assert untouched == []
    assert result.cancelled is True
