"""docs/plugins.md, "Sending messages: what arrives when" and "/reload": each row checked through
an extension file, piko.testing's in-process session and the scripted server's recorded requests."""

from __future__ import annotations

from typing import Any

import pytest

from piko.testing import LLMServer
from piko.testing import PikoHome
from piko.testing import PikoSession

# A tool ``send`` that calls pi.send_message / pi.send_user_message while the agent runs, and the
# commands /note, /kick, /ask and /later that do the same while it is idle.
SENDER = """
import asyncio


def activate(pi):
    def message(text):
        return {"custom_type": "note", "content": text, "display": True}

    async def send(tool_call_id, params, signal, on_update, ctx):
        how, text = params["how"], params["text"]
        if how == "user":
            pi.send_user_message(text)
        elif how == "user-awaited":
            await pi.send_user_message(text)
        elif how == "user-followUp":
            pi.send_user_message(text, deliver_as="followUp")
        else:
            pi.send_message(message(text), deliver_as=how or None)
        return {"content": [{"type": "text", "text": "sent"}]}

    pi.register_tool(
        name="send", label="Send", description="Send a message",
        parameters={"type": "object", "properties": {"how": {"type": "string"}, "text": {"type": "string"}}},
        execute=send,
    )

    async def note(args, ctx):
        await pi.send_message(message(args))

    async def kick(args, ctx):
        await pi.send_message(message(args), trigger_turn=True)

    async def ask(args, ctx):
        await pi.send_user_message(args)

    async def later(args, ctx):
        await pi.send_user_message(args, deliver_as="followUp")

    pi.register_command("note", description="note", handler=note)
    pi.register_command("kick", description="kick", handler=kick)
    pi.register_command("ask", description="ask", handler=ask)
    async def steer_later(args, ctx):
        await pi.send_user_message(args, deliver_as="steer")

    pi.register_command("later", description="later", handler=later)
    pi.register_command("steer-later", description="steer later", handler=steer_later)

    sources = []
    pi.on("input", lambda event, ctx: sources.append((event.text, event.source)))
    pi.register_command("sources", description="sources", handler=lambda args, ctx: ctx.ui.notify(repr(sources)))
"""


def _send(how: str, text: str) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": "send", "arguments": {"how": how, "text": text}}}]}


def _texts(request: dict[str, Any]) -> list[str]:
    """The user-side texts of a chat-completions request, in order (tool results as ``tool``)."""
    out: list[str] = []
    for message in request["body"]["messages"]:
        if message["role"] == "tool":
            out.append("tool")
        elif message["role"] == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


@pytest.fixture
def sender(piko_home: PikoHome) -> str:
    return str(piko_home.write("sender.py", SENDER))


def _run(session: PikoSession, sender: str, *prompts: str, turns: list[Any]) -> Any:
    return session.run(*prompts, turns=turns, extensions=[sender], tools=["send"])


def test_steer_arrives_before_the_next_model_call(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    _run(piko_session, sender, "go", turns=[_send("", "steered"), {"blocks": [{"text": "done"}]}])
    assert [_texts(r) for r in llm_server.requests] == [["go"], ["go", "tool", "steered"]]


def test_follow_up_waits_until_the_agent_would_stop(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    turns = [
        _send("followUp", "later"),
        {"blocks": [{"text": "first answer"}]},
        {"blocks": [{"text": "then"}]},
    ]
    run = _run(piko_session, sender, "go", turns=turns)
    assert [_texts(r) for r in llm_server.requests] == [["go"], ["go", "tool"], ["go", "tool", "later"]]
    assert run.text == "then"


def test_next_turn_is_sent_after_the_next_prompt(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    turns = [_send("nextTurn", "context"), {"blocks": [{"text": "ok"}]}, {"blocks": [{"text": "again"}]}]
    _run(piko_session, sender, "go", "second", turns=turns)
    assert [_texts(r) for r in llm_server.requests] == [
        ["go"],
        ["go", "tool"],
        ["go", "tool", "second", "context"],
    ]


def test_idle_message_joins_without_a_model_call(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    run = _run(piko_session, sender, "/note remember this", turns=[])
    assert llm_server.requests == []
    assert [(m.custom_type, m.content) for m in run.messages] == [("note", "remember this")]
    assert "message_end" in run.types
    assert [e.type for e in run.entries if e.type.startswith("custom")] == ["custom_message"]


def test_idle_message_with_trigger_turn_starts_one(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    _run(piko_session, sender, "/kick look at this", turns=[{"blocks": [{"text": "looked"}]}])
    assert [_texts(r) for r in llm_server.requests] == [["look at this"]]


def test_user_message_steers_while_running(piko_session: PikoSession, llm_server: LLMServer, sender: str):
    # awaited in the tool, it is queued before the tool returns: the next model call has it
    _run(
        piko_session, sender, "go", turns=[_send("user-awaited", "also this"), {"blocks": [{"text": "done"}]}]
    )
    assert [_texts(r) for r in llm_server.requests] == [["go"], ["go", "tool", "also this"]]


def test_unawaited_user_message_may_come_one_call_later(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    # not awaited, it passes the input handlers first: if the next call has left by then, the
    # agent goes on for it after that call's answer; either way this run delivers it
    turns = [_send("user", "also this"), {"blocks": [{"text": "done"}]}, {"blocks": [{"text": "and this"}]}]
    _run(piko_session, sender, "go", turns=turns)
    assert [_texts(r) for r in llm_server.requests][-1] == ["go", "tool", "also this"]


def test_idle_user_message_starts_a_turn_as_a_prompt(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    run = _run(piko_session, sender, "/ask /not-a-command", "/sources", turns=[{"blocks": [{"text": "hi"}]}])
    assert [_texts(r) for r in llm_server.requests] == [["/not-a-command"]]  # sent as typed
    assert run.ui.notifications[-1][0] == "[('/not-a-command', 'extension')]"


def test_user_follow_up_while_running_and_queued_when_idle(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    turns = [_send("user-followUp", "after")] + [{"blocks": [{"text": f"answer {n}"}]} for n in range(4)]
    _run(piko_session, sender, "go", "/later queued", "next", turns=turns)
    requests = [_texts(r) for r in llm_server.requests]
    assert requests[:3] == [["go"], ["go", "tool"], ["go", "tool", "after"]]
    # idle, the follow-up waits for the next run: after the model answered the next prompt
    assert requests[3:] == [["go", "tool", "after", "next"], ["go", "tool", "after", "next", "queued"]]


def test_user_steer_when_idle_waits_for_the_next_prompt(
    piko_session: PikoSession, llm_server: LLMServer, sender: str
):
    turns = [{"blocks": [{"text": f"answer {n}"}]} for n in range(3)]
    _run(piko_session, sender, "/steer-later steered", "next", turns=turns)
    assert [_texts(r) for r in llm_server.requests] == [["next", "steered"]]  # no call before "next"


# The command /bump rewrites this very file (the tool answers TWO instead of ONE) and reloads.
RELOADED = """
from pathlib import Path


def activate(pi):
    pi.register_tool(
        name="version", label="Version", description="Which version",
        parameters={"type": "object", "properties": {}},
        execute=lambda *a: {"content": [{"type": "text", "text": "ONE"}]},
    )

    async def bump(args, ctx):
        here = Path(__file__)
        here.write_text(here.read_text().replace("ONE", "TWO"))
        await ctx.reload()

    pi.register_command("bump", description="edit and reload", handler=bump)
"""


def test_reload_imports_an_edited_extension_file_again(piko_session: PikoSession, piko_home: PikoHome):
    path = piko_home.write("versioned.py", RELOADED)
    call = {"blocks": [{"tool_call": {"name": "version", "arguments": {}}}]}
    turns = [call, {"blocks": [{"text": "a"}]}, call, {"blocks": [{"text": "b"}]}]
    run = piko_session.run("which?", "/bump", "which now?", turns=turns, extensions=[path], tools=["version"])
    assert [r.content[0].text for r in run.tool_results] == ["ONE", "TWO"]
