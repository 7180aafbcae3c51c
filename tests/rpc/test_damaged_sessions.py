"""RPC on damaged session files: ``switch_session`` says what was left out (a ``warnings`` field,
and stderr), and a header version piko does not know keeps the file as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION_ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
HEADER = {"type": "session", "version": 3, "id": "01a22ab5-0000-7000-8000-000000000001",
          "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/proj"}  # fmt: skip


def _message_line(entry_id: str, parent: str | None, role: str, text: str) -> str:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        message.update(api="openai-completions", provider="mock", model="mock-1", stopReason="stop",
                       usage={"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})  # fmt: skip
    entry = {"type": "message", "id": entry_id, "parentId": parent,
             "timestamp": "2026-01-01T00:00:01.000Z", "message": message}  # fmt: skip
    return json.dumps(entry, separators=(",", ":")) + "\n"


def _session(path: Path, header: dict[str, Any], *extra: str) -> bytes:
    data = (
        json.dumps(header, separators=(",", ":")) + "\n"
        + _message_line("aaaa0001", None, "user", "hello")
        + "".join(extra)
        + _message_line("aaaa0002", "aaaa0001", "assistant", "hi there")
    ).encode()  # fmt: skip
    path.write_bytes(data)
    return data


def test_switch_session_reports_the_lines_it_skipped(rpc: Any) -> None:
    process = rpc(args=SESSION_ARGS)
    damaged = process.work / "damaged.jsonl"
    _session(damaged, HEADER, "{not json\n", "[1,2]\n")
    switched = process.request({"id": "sw", "type": "switch_session", "sessionPath": str(damaged)})
    assert switched["success"] and switched["data"]["cancelled"] is False
    warnings = switched["data"]["warnings"]
    assert [w.split(": ", 1)[0] for w in warnings] == [f"{damaged}:3", f"{damaged}:4"]
    assert process.request({"id": "s", "type": "get_state"})["data"]["messageCount"] == 2
    assert process.close() == 0
    assert f"Warning: {damaged}:3: " in process.stderr and f"Warning: {damaged}:4: " in process.stderr


def test_switch_to_a_clean_session_answers_as_pi(rpc: Any) -> None:
    process = rpc(args=SESSION_ARGS)
    clean = process.work / "clean.jsonl"
    _session(clean, HEADER)
    switched = process.request({"id": "sw", "type": "switch_session", "sessionPath": str(clean)})
    assert switched["data"] == {"cancelled": False}
    assert process.close() == 0


def test_a_session_of_an_unknown_version_is_left_alone_and_continued_elsewhere(rpc: Any) -> None:
    turns = [{"blocks": [{"text": "new answer"}]}]
    process = rpc(turns, args=SESSION_ARGS)
    future = process.work / "future.jsonl"
    original = _session(future, {**HEADER, "version": "3.1"})
    switched = process.request({"id": "sw", "type": "switch_session", "sessionPath": str(future)})
    (warning,) = switched["data"]["warnings"]
    assert 'session version "3.1" is not one piko knows' in warning
    process.request({"id": "p", "type": "prompt", "message": "more"})
    process.wait_for(lambda r: r.get("type") == "agent_end")
    state = process.request({"id": "s", "type": "get_state"})["data"]
    assert state["messageCount"] == 4 and state["sessionFile"] != str(future)
    assert future.read_bytes() == original and not list(process.work.glob("future.jsonl.bak*"))
    written = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    assert written[0]["parentSession"] == str(future)
    assert [e["id"] for e in written[1:3]] == ["aaaa0001", "aaaa0002"]
    assert process.close() == 0
