"""``pi -p --continue`` on a session damaged in the middle: every line left out is reported on
stderr, and the provider never receives a tool result without its tool call."""

from __future__ import annotations

from typing import Any

import pytest
from agent_harness import MOCK

TOOL_TURNS = [
    {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]},
    {"blocks": [{"text": "done reading"}]},
]


def _damage_the_tool_call(env: Any) -> int:
    """Garbage in the middle of the assistant line that calls the tool; returns its line number."""
    (path,) = env.sessions()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines, 1) if '"toolCall"' in line)
    line = lines[number - 1]
    cut = line.index('"content"') + 4
    lines[number - 1] = line[:cut] + "\x00GARBAGE" + line[cut + 8 :]
    path.write_text("".join(lines), encoding="utf-8")
    return number


@pytest.mark.parametrize("mode", ["text", "json"])
def test_a_line_damaged_mid_file_is_reported_and_its_tool_result_not_sent(pi_env: Any, mode: str) -> None:
    env = pi_env([*TOOL_TURNS, {"blocks": [{"text": "second answer"}]}])
    assert env.run("-p", *MOCK, "read notes.txt").returncode == 0
    number = _damage_the_tool_call(env)
    (path,) = env.sessions()
    before = path.read_bytes()
    result = env.run("-p", "--mode", mode, *MOCK, "--continue", "again")
    assert result.returncode == 0, result.stderr
    assert f"Warning: {path}:{number}: entry " in result.stderr and "unreadable message" in result.stderr
    assert "follows no tool call" in result.stderr
    sent = env.server.requests[-1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert path.read_bytes().startswith(before)  # nothing rewritten, the new turn appended
