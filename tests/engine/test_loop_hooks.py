"""The loop's set-up and hooks (``piko.engine.loop_hooks``): model checks, context, images, tool calls and results."""

from __future__ import annotations

from typing import Any

import pytest
from support.faux_answers import recording

from piko.data.messages import ImageContent
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.engine.llm_messages import IMAGES_BLOCKED
from piko.engine.loop_hooks import LoopHooks
from piko.engine.session_services import SessionServices

CONTEXT = """
from piko.data.messages import TextContent, UserMessage

def activate(pi):
    def inject(event, ctx):
        event.messages[0].content = "changed in the copy"
        return {"messages": event.messages + [UserMessage(content=[TextContent(text="(injected)")], timestamp=1)]}

    pi.on("context", inject)
"""

TOOLS = """
def activate(pi):
    def gate(event, ctx):
        if event.input.get("path") == "secret.txt":
            return {"block": True, "reason": "no secrets"}
        event.input["path"] = "notes.txt"

    def patch(event, ctx):
        return {"content": [{"type": "text", "text": "patched: " + event.content[0].text}]}

    pi.on("tool_call", gate)
    pi.on("tool_result", patch)
"""


def _read(path: str) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": path}}}]}


def test_a_run_needs_a_model_and_a_provider_api_for_it(rig, run) -> None:
    async def scenario() -> LoopHooks:
        session = await rig.session([])
        services = SessionServices(
            registry=session.model_registry,
            dispatcher=session.dispatcher,
            settings=session.settings,
            ctx=session.ctx,
        )
        return LoopHooks(services)

    hooks = run(scenario())

    async def options(signal: Any) -> Any:
        return None

    async def nothing() -> list[Any]:
        return []

    with pytest.raises(RuntimeError, match="model"):
        hooks.config(None, make_options=options, steering=nothing, follow_ups=nothing)
    with pytest.raises(RuntimeError, match='No provider API "nope" is registered for p/m'):
        hooks.config(
            Model(id="m", provider="p", api="nope"),
            make_options=options,
            steering=nothing,
            follow_ups=nothing,
        )


def test_context_handlers_change_what_the_model_sees_not_the_conversation(rig, run) -> None:
    ext = rig.write_extension("context", CONTEXT)
    seen: list[list[str]] = []

    async def scenario() -> Any:
        session = await rig.session([recording(seen)], extensions=[ext])
        await session.prompt("the question")
        return session

    session = run(scenario())
    assert seen == [["changed in the copy", "(injected)"]]
    assert [text_of(m.content) for m in session.messages if isinstance(m, UserMessage)] == ["the question"]


def test_blocked_images_reach_the_model_as_a_note(rig, run) -> None:
    seen: list[Any] = []

    async def scenario() -> Any:
        session = await rig.session([lambda c, o, s, m: seen.append(c.messages[0]) or "ok"],
                                    settings={"images": {"blockImages": True}})  # fmt: skip
        await session.prompt("look", [ImageContent(data="aGk=", mime_type="image/png")])
        return session

    session = run(scenario())
    (sent,) = seen
    assert sent.content == [TextContent(text="look"), TextContent(text=IMAGES_BLOCKED)]
    assert isinstance(session.messages[0].content[1], ImageContent)  # kept in the conversation


def test_tool_calls_may_be_blocked_or_revised_and_results_patched(rig, run) -> None:
    ext = rig.write_extension("tools", TOOLS)
    (rig.project / "notes.txt").write_text("the notes\n")

    async def scenario() -> Any:
        session = await rig.session([_read("secret.txt"), _read("elsewhere.txt"), "done"], extensions=[ext])
        await session.prompt("read things")
        return session

    session = run(scenario())
    blocked, revised = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert blocked.is_error is True and text_of(blocked.content) == "no secrets"
    assert revised.is_error is False and text_of(revised.content).startswith("patched: the notes")
