"""``pi.set_service_tier`` / ``pi.get_service_tiers`` from a real extension: the tier reaches OpenAI
requests from the next request on, a tier the family does not take is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TIERS_EXTENSION = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def record(**data):
    with open(LOG, "a") as fh:
        fh.write(json.dumps(data) + "\\n")

def activate(pi):
    def start(_event, _ctx):
        pi.set_service_tier("openai", "priority")
        pi.set_service_tier("anthropic", "priority")
        try:
            pi.set_service_tier("anthropic", "flex")
        except ValueError as exc:
            record(error=str(exc))
        snapshot = pi.get_service_tiers()
        snapshot["openai"] = "changed"  # a detached copy
        record(tiers=pi.get_service_tiers())
    pi.on("session_start", start)

    def clear(_id, _params, _signal, _update, _ctx):
        pi.set_service_tier("openai", None)
        return "cleared"
    pi.register_tool({"name": "clear_tier", "description": "Clear the OpenAI tier",
                      "parameters": {"type": "object", "properties": {}}, "execute": clear})
"""


def test_the_openai_tier_reaches_the_next_requests_until_cleared(pi_env: Any, tmp_path: Path) -> None:
    ext = tmp_path / "tiers.py"
    ext.write_text(TIERS_EXTENSION)
    log = tmp_path / "log.jsonl"
    turns = [
        {"blocks": [{"tool_call": {"name": "clear_tier", "arguments": {}}}]},
        {"blocks": [{"text": "done"}]},
    ]
    env = pi_env(turns)
    done = env.run(
        "-e", str(ext), "--provider", "mock", "--model", "mock-1", "-p", "go", env={"PIKO_TEST_LOG": str(log)}
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows == [
        {"error": "anthropic accepts the service tiers priority; not 'flex'"},
        {"tiers": {"openai": "priority", "anthropic": "priority"}},
    ]
    bodies = [request["body"] for request in env.server.requests]
    assert bodies[0]["service_tier"] == "priority"
    assert "service_tier" not in bodies[1]  # cleared by the tool, between the two requests


def test_anthropic_requests_carry_no_tier(pi_env: Any, tmp_path: Path) -> None:
    ext = tmp_path / "tiers.py"
    ext.write_text(TIERS_EXTENSION)
    env = pi_env([{"blocks": [{"text": "done"}]}])
    done = env.run(
        "-e", str(ext), "--provider", "mock-anthropic", "--model", "mock-claude", "-p", "go",
        env={"PIKO_TEST_LOG": str(tmp_path / "log.jsonl")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "service_tier" not in env.server.requests[0]["body"]
