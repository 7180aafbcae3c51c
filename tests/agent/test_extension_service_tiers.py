"""``pi.set_service_tier`` / ``pi.get_service_tiers`` from a real extension: the tier reaches OpenAI
requests from the next request on, a tier the family does not take is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_harness import run_extension
from agent_harness import with_record

TIERS_EXTENSION = with_record("""
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
""")


def test_the_openai_tier_reaches_the_next_requests_until_cleared(pi_env: Any, tmp_path: Path) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "clear_tier", "arguments": {}}}]},
        {"blocks": [{"text": "done"}]},
    ]
    env, _done, rows = run_extension(pi_env, tmp_path, TIERS_EXTENSION, turns, "-p", "go", name="tiers.py")
    assert rows == [
        {"error": "anthropic accepts the service tiers priority; not 'flex'"},
        {"tiers": {"openai": "priority", "anthropic": "priority"}},
    ]
    bodies = [request["body"] for request in env.server.requests]
    assert bodies[0]["service_tier"] == "priority"
    assert "service_tier" not in bodies[1]  # cleared by the tool, between the two requests


def test_anthropic_requests_carry_no_tier(pi_env: Any, tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": "done"}]}]
    claude = ("mock-anthropic", "mock-claude")
    env, _done, _rows = run_extension(
        pi_env, tmp_path, TIERS_EXTENSION, turns, "-p", "go", name="tiers.py", model=claude
    )
    assert "service_tier" not in env.server.requests[0]["body"]
