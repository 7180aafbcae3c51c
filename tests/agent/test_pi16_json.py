"""``--mode json`` with what pi 1.6 added: ``agent_settled`` after each prompt's last ``agent_end``, and
the assistant fields ``rawStopReason``, ``durationMs``, ``thinkingLevel`` (in the session file too)."""

from __future__ import annotations

from typing import Any

from agent_harness import MOCK
from agent_harness import json_lines


def test_each_prompt_ends_with_agent_settled(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "a"}]}, {"status": 400}])
    done = env.run("--mode", "json", *MOCK, "one", "two")
    assert done.returncode == 0, done.stderr
    kinds = [r["type"] for r in json_lines(done.stdout) if r["type"] in ("agent_end", "agent_settled")]
    assert kinds == ["agent_end", "agent_settled", "agent_end", "agent_settled"]
    assert json_lines(done.stdout)[-1] == {"type": "agent_settled", "aborted": False}


def test_assistant_fields_reach_the_session_file(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": "a"}]}])
    assert env.run("-p", *MOCK, "one").returncode == 0
    (assistant,) = [
        e["message"] for e in env.session_lines() if e.get("message", {}).get("role") == "assistant"
    ]
    assert list(assistant)[-3:] == ["rawStopReason", "durationMs", "thinkingLevel"]
    assert (assistant["rawStopReason"], assistant["thinkingLevel"]) == ("stop", "off")


def test_a_streaming_assistant_message_starts_pending(pi_env: Any) -> None:
    """pi 1.6: ``message_start`` carries ``stopReason: "pending"`` while the message streams (an
    HTTP error that streamed nothing starts and ends as the error, as in pi 1.6), never the
    session file."""
    env = pi_env([{"blocks": [{"text": "a"}]}, {"status": 400}])
    done = env.run("--mode", "json", *MOCK, "one", "two")
    assert done.returncode == 0, done.stderr
    records = json_lines(done.stdout)
    starts = [
        r["message"]["stopReason"]
        for r in records
        if r["type"] == "message_start" and "stopReason" in r["message"]
    ]
    ends = [
        r["message"]["stopReason"]
        for r in records
        if r["type"] == "message_end" and "stopReason" in r["message"]
    ]
    assert (starts, ends) == (["pending", "error"], ["stop", "error"])
    assert not [e for e in env.session_lines() if e.get("message", {}).get("stopReason") == "pending"]
