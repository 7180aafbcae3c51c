"""The example plugin's ``oneline`` mode, run for real: ``pi --mode oneline --provider faux``."""

from __future__ import annotations

import json
from pathlib import Path


def test_oneline_mode_prints_one_line_per_event(run_pi, example_site: Path) -> None:
    result = run_pi("--mode", "oneline", "--provider", "faux", "hello there", pythonpath=[example_site])
    assert result.code == 0, result
    lines = result.stdout.splitlines()
    assert lines[0] == "agent_start"
    assert "turn_start #0" in lines
    assert "message_start user: 'hello there'" in lines
    assert "message_update text_start" in lines
    assert any(line.startswith("message_update text_delta ") for line in lines)
    assert any(line.startswith("message_end assistant: ") for line in lines)
    assert lines[-2:] == ["agent_end 2 messages", "agent_settled aborted=false"]
    assert all(0 < len(line) <= 100 for line in lines)


def test_oneline_mode_shows_the_example_tool_running(run_pi, example_site: Path, env) -> None:
    script = env.root / "faux-script.json"
    script.write_text(
        json.dumps(
            [
                {"blocks": [{"tool_call": {"name": "word_count", "arguments": {"text": "one two three"}}}]},
                {"blocks": [{"text": "It has 3 words."}]},
            ]
        ),
        encoding="utf-8",
    )
    result = run_pi(
        "--mode", "oneline", "--oneline-width", "60", "--provider", "faux", "count: one two three",
        pythonpath=[example_site], env={"PIKO_FAUX_SCRIPT": str(script)},
    )  # fmt: skip
    assert result.code == 0, result
    lines = result.stdout.splitlines()
    assert 'message_end assistant: word_count({"text":"one two three"})' in lines
    assert 'tool_execution_start word_count {"text":"one two three"}' in lines
    assert any(line.startswith("tool_execution_end word_count ok: '3 words, 1 lines, 13") for line in lines)
    assert "turn_end #0, 1 tool results" in lines
    assert "message_end assistant: 'It has 3 words.'" in lines
    assert lines[-2:] == ["agent_end 4 messages", "agent_settled aborted=false"]
    assert all(len(line) <= 60 for line in lines)
    assert max(len(line) for line in lines) == 60  # the long tool-result lines were clipped


def test_oneline_mode_fails_cleanly_when_the_provider_fails(run_pi, example_site: Path, env) -> None:
    script = env.root / "faux-error.json"
    script.write_text(json.dumps([{"error": "scripted outage", "stop_reason": "error"}]), encoding="utf-8")
    result = run_pi(
        "--mode", "oneline", "--provider", "faux", "hi",
        pythonpath=[example_site], env={"PIKO_FAUX_SCRIPT": str(script)},
    )  # fmt: skip
    assert result.code == 1, result
    assert any(line.startswith("message_end assistant [error]") for line in result.stdout.splitlines())
    assert "Traceback" not in result.stderr
