"""``pi.register_mcp_server`` after start-up connects the server at once; ``unregister`` closes it
and its tools leave the requests (a real ``pi --mode rpc``, the demo stdio MCP server)."""

from __future__ import annotations

from typing import Any

SESSION_ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]


def _tools(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def _prompt(process: Any, request_id: str, text: str) -> None:
    process.request({"id": request_id, "type": "prompt", "message": text})
    process.wait_for(lambda r: r.get("type") == "agent_end", 60)


def test_a_server_registered_while_running_connects_and_unregistered_goes(rpc: Any) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "mcp__live__echo", "arguments": {"text": "live"}}}]},
        {"blocks": [{"text": "echoed"}]},
        {"blocks": [{"text": "no tools now"}]},
    ]
    process = rpc(turns, args=SESSION_ARGS, extensions=("live_mcp_ext.py",))
    process.request({"id": "a", "type": "prompt", "message": "/addmcp"})
    _prompt(process, "p1", "call echo")
    first, second = process.server.requests[0]["body"], process.server.requests[1]["body"]
    assert "mcp__live__echo" in _tools(first)
    assert [m["content"] for m in second["messages"] if m.get("role") == "tool"] == ["echo: live"]
    process.request({"id": "r", "type": "prompt", "message": "/rmmcp"})
    _prompt(process, "p2", "and now?")
    assert not any(name.startswith("mcp__live__") for name in _tools(process.server.requests[2]["body"]))
    assert process.close() == 0
