"""A tool registered with ``strict: True`` asks OpenAI's strict mode for its arguments; others do not
(a real extension, a real ``pi``, the request as the scripted server got it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    ext = tmp_path / "strict.py"
    ext.write_text(STRICT)
    env = pi_env([{"blocks": [{"text": "ok"}]}])
    done = env.run("-e", str(ext), "--provider", "mock", "--model", "mock-1", "-p", "go")
    assert done.returncode == 0, done.stderr
    tools = {t["function"]["name"]: t["function"] for t in env.server.requests[0]["body"]["tools"]}
    assert tools["strict_tool"]["strict"] is True
    assert tools["loose_tool"]["strict"] is False and tools["read"]["strict"] is False
