"""``ctx.run_ephemeral_turn`` bounds its recursion: the ``context`` and provider hooks of a running
side turn cannot start another, the caller's ``on_text_delta`` can (a real extension, a real ``pi``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_harness import run_extension
from agent_harness import with_record

NESTING = with_record("""
state = {"probing": False, "nested_from_delta": False}

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
""")


def test_hooks_of_a_side_turn_cannot_start_another_but_its_delta_callback_can(
    pi_env: Any, tmp_path: Path
) -> None:
    turns = [{"blocks": [{"text": "outer answer"}]}, {"blocks": [{"text": "inner answer"}]}]
    env, _done, rows = run_extension(pi_env, tmp_path, NESTING, turns, "-p", "/probe", name="nesting.py")
    assert rows == [
        {"hook": "run_ephemeral_turn: a side turn cannot start another from its context or provider hooks"},
        {"delta_turn": "inner answer"},
        {"outer": "outer answer"},
    ]
    assert len(env.server.requests) == 2
