"""``ctx.run_ephemeral_turn`` bounds its recursion: the ``context`` and provider hooks of a running
side turn cannot start another, the caller's ``on_text_delta`` can (a real extension, a real ``pi``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NESTING = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]
state = {"probing": False, "nested_from_delta": False}

def record(**data):
    with open(LOG, "a") as fh:
        fh.write(json.dumps(data) + "\\n")

def activate(pi):
    async def on_context(event, ctx):
        if state["probing"]:
            state["probing"] = False
            try:
                await ctx.run_ephemeral_turn({"promptText": "nested"})
                record(hook="allowed")
            except RuntimeError as exc:
                record(hook=str(exc))
    pi.on("context", on_context)

    async def probe(args, ctx):
        async def on_delta(delta):
            if not state["nested_from_delta"]:
                state["nested_from_delta"] = True
                inner = await ctx.run_ephemeral_turn({"promptText": "from the delta", "tools": False})
                record(delta_turn=inner.reply_text)
        state["probing"] = True
        outer = await ctx.run_ephemeral_turn({"promptText": "outer", "tools": False, "onTextDelta": on_delta})
        record(outer=outer.reply_text)
    pi.register_command("probe", {"description": "side turns", "handler": probe})
"""


def test_hooks_of_a_side_turn_cannot_start_another_but_its_delta_callback_can(
    pi_env: Any, tmp_path: Path
) -> None:
    ext = tmp_path / "nesting.py"
    ext.write_text(NESTING)
    log = tmp_path / "log.jsonl"
    env = pi_env([{"blocks": [{"text": "outer answer"}]}, {"blocks": [{"text": "inner answer"}]}])
    done = env.run(
        "-e",
        str(ext),
        "--provider",
        "mock",
        "--model",
        "mock-1",
        "-p",
        "/probe",
        env={"PIKO_TEST_LOG": str(log)},
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows == [
        {"hook": "run_ephemeral_turn: a side turn cannot start another from its context or provider hooks"},
        {"delta_turn": "inner answer"},
        {"outer": "outer answer"},
    ]
    assert len(env.server.requests) == 2
