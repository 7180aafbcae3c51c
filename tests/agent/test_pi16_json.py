"""``--mode json`` with what pi 1.6 added: ``agent_settled`` after each prompt's last ``agent_end``, and
the assistant fields ``rawStopReason``, ``durationMs``, ``thinkingLevel`` (in the session file too)."""

from __future__ import annotations

from typing import Any

from agent_harness import MOCK, json_lines


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
