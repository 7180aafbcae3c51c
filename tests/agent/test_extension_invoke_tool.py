"""pi's ``ctx.invokeTool(params, options)`` from a real extension: a tool that overrides a built-in
runs the native one, which gets the call's progress callback; a net-new tool has nothing to
delegate to (a real ``pi --mode json`` against the scripted server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import json_lines
from agent_harness import run_extension
from agent_harness import with_record

WRAPPER = with_record("""
def activate(pi):
    async def logged_bash(tool_call_id, params, signal, on_update, ctx):
        record(wrapped=params["command"])
        result = await ctx.invoke_tool(params)  # the native bash, with this call's on_update
        return {"content": [{"type": "text", "text": "wrapped: " + result.content[0].text}]}

    pi.register_tool({"name": "bash", "description": "bash, logged", "override": True,
                      "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                      "execute": logged_bash})

    async def fresh(tool_call_id, params, signal, on_update, ctx):
        try:
            await ctx.invoke_tool({})
        except RuntimeError as exc:
            record(fresh=str(exc))
        return "fresh done"

    pi.register_tool({"name": "fresh_tool", "description": "a new tool",
                      "parameters": {"type": "object", "properties": {}}, "execute": fresh})
""")


def test_invoke_tool_params_runs_the_native_built_in_with_the_calls_updates(
    pi_env: Any, tmp_path: Path
) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo native-output"}}}]},
        {"blocks": [{"tool_call": {"name": "fresh_tool", "arguments": {}}}]},
        {"blocks": [{"text": "done"}]},
    ]
    _env, done, rows = run_extension(
        pi_env, tmp_path, WRAPPER, turns, "--mode", "json", "go", name="wrapper.py"
    )
    assert rows == [
        {"wrapped": "echo native-output"},
        {"fresh": "tool 'fresh_tool' overrides no built-in: there is nothing to delegate to"},
    ]
    events = json_lines(done.stdout)
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert ends[0]["result"]["content"][0]["text"] == "wrapped: native-output\n"
    call_id = ends[0]["toolCallId"]
    updates = [e for e in events if e["type"] == "tool_execution_update" and e["toolCallId"] == call_id]
    assert updates and "native-output" in json.dumps(updates[-1])  # the native bash streamed through
