"""Loop events retold to extensions (``piko.engine.extension_events``): turn numbers, ``message_end`` replacements."""

from __future__ import annotations

import json
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import text_of

TURNS = """
import json, os

def activate(pi):
    def log(entry):
        with open(os.path.join(os.environ["HOME"], "turns.jsonl"), "a") as fh:
            fh.write(json.dumps(entry) + "\\n")

    pi.on("agent_start", lambda e, ctx: log(["agent_start"]))
    pi.on("turn_start", lambda e, ctx: log(["turn_start", e.turn_index]))
    pi.on("turn_end", lambda e, ctx: log(["turn_end", e.turn_index, len(e.tool_results)]))
"""

REPLACE = """
from piko.data.messages import AssistantMessage, TextContent

def activate(pi):
    def tidy(event, ctx):
        if isinstance(event.message, AssistantMessage):
            text = "".join(getattr(b, "text", "") for b in event.message.content)
            return {"message": AssistantMessage(content=[TextContent(text=text.replace("teh", "the"))],
                                                stop_reason=event.message.stop_reason)}
    pi.on("message_end", tidy)
"""


def test_turns_are_numbered_from_zero_in_each_run(rig, run) -> None:
    ext = rig.write_extension("turns", TURNS)
    read = {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "missing.txt"}}}]}

    async def scenario() -> None:
        session = await rig.session([read, "done", "again"], extensions=[ext])
        await session.prompt("first")
        await session.prompt("second")

    run(scenario())
    log = [json.loads(line) for line in (rig.root / "home" / "turns.jsonl").read_text().splitlines()]
    assert log == [
        ["agent_start"], ["turn_start", 0], ["turn_end", 0, 1], ["turn_start", 1], ["turn_end", 1, 0],
        ["agent_start"], ["turn_start", 0], ["turn_end", 0, 0],
    ]  # fmt: skip


def test_a_message_end_replacement_takes_the_place_of_the_message_everywhere(rig, run) -> None:
    ext = rig.write_extension("replace", REPLACE)

    async def scenario() -> Any:
        session = await rig.session(["teh answer"], extensions=[ext])
        await session.prompt("q")
        return session

    session = run(scenario())
    answer = session.messages[-1]
    assert isinstance(answer, AssistantMessage) and text_of(answer.content) == "the answer"
    assert rig.of_type("message_end")[-1].message is answer  # listeners see the replacement
    saved = [e for e in rig.entries(session) if e["type"] == "message"][-1]
    assert saved["message"]["content"][0]["text"] == "the answer"
