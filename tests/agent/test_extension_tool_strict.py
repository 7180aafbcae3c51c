"""A tool registered with ``strict: True`` asks OpenAI's strict mode for its arguments; others do not
(a real extension, a real ``pi``, the request as the scripted server got it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_harness import run_extension

STRICT = """
def activate(pi):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
              "additionalProperties": False}
    pi.register_tool({"name": "strict_tool", "description": "strict", "parameters": schema,
                      "strict": True, "execute": lambda *a: "ok"})
    pi.register_tool({"name": "loose_tool", "description": "loose", "parameters": schema,
                      "execute": lambda *a: "ok"})
"""


def test_strict_reaches_the_openai_tool_definition(pi_env: Any, tmp_path: Path) -> None:
    env, _done, _rows = run_extension(
        pi_env, tmp_path, STRICT, [{"blocks": [{"text": "ok"}]}], "-p", "go", name="strict.py"
    )
    tools = {t["function"]["name"]: t["function"] for t in env.server.requests[0]["body"]["tools"]}
    assert tools["strict_tool"]["strict"] is True
    assert tools["loose_tool"]["strict"] is False and tools["read"]["strict"] is False
