"""A message an extension command sends in RPC mode reaches the session before the next prompt
line, not inside it (a real ``pi --mode rpc``, both lines written at once)."""

from __future__ import annotations

from typing import Any


def test_a_commands_message_comes_before_the_next_prompt(rpc: Any) -> None:
    process = rpc([{"blocks": [{"text": "answered"}]}], extensions=["command_message_ext.py"])
    process.send({"type": "prompt", "message": "/note", "id": "1"})
    process.send({"type": "prompt", "message": "hello", "id": "2"})
    process.wait_for(lambda e: e.get("type") == "agent_end")
    assert [r["success"] for r in process.events("response")] == [True, True]
    messages = process.server.requests[0]["body"]["messages"]
    texts = [
        m["content"] if isinstance(m["content"], str) else " ".join(b.get("text", "") for b in m["content"])
        for m in messages
        if m["role"] == "user"
    ]
    assert texts == ["NOTE FROM COMMAND", "hello"]
    assert len(process.server.requests) == 1
