"""The audit log plugin: what a run did, hash-chained, redacted; ``pi audit verify`` finds tampering."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import LLMServer
from support.pi_runs import run_in_pi_dirs

PI = str(Path(sys.executable).with_name("pi"))
PLANTED = "sk-ant-api03-plantedaudit0123456789abcdef"


def bash_call(command: str) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": command}}}]}


def run_pi(
    tmp_path: Path, turns: list[Any], *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    with LLMServer(turns) as server:
        return run_in_pi_dirs(tmp_path, server, *args, env=env)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PI, "audit", "verify", str(path)], capture_output=True, text=True, timeout=60)


def test_a_run_is_logged_chained_and_redacted(tmp_path: Path) -> None:
    log = tmp_path / "audit" / "log.jsonl"
    turns = [bash_call(f"echo {PLANTED} | wc -c"), {"blocks": [{"text": "done"}]}]
    done, _ = run_pi(tmp_path, turns, "-p", "count it", PIKO_AUDIT_LOG=str(log), ANTHROPIC_API_KEY=PLANTED)
    assert done.returncode == 0, done.stderr
    records = lines(log)
    assert [r["event"] for r in records] == [
        "session_start", "prompt", "model_call", "tool_call", "tool_result", "model_call",
    ]  # fmt: skip
    call = records[3]
    assert call["tool"] == "bash" and "wc -c" in call["args"]["command"]
    assert PLANTED not in log.read_text()
    assert records[1]["text_chars"] == len("count it") and "text" not in records[1]
    assert records[4]["is_error"] is False and records[4]["result_bytes"] > 0
    assert all(r["prev"] == (records[i - 1]["hash"] if i else "") for i, r in enumerate(records))
    assert records[0]["user"] and records[0]["host"] and records[0]["cwd"]
    assert (log.stat().st_mode & 0o777) == 0o600
    intact = verify(log)
    assert intact.returncode == 0 and "intact (6 lines)" in intact.stdout


@pytest.mark.parametrize("damage", ["edit", "remove", "reorder"])
def test_verify_names_the_first_broken_line(tmp_path: Path, damage: str) -> None:
    log = tmp_path / "log.jsonl"
    done, _ = run_pi(
        tmp_path, [bash_call("true"), {"blocks": [{"text": "ok"}]}], "-p", "go", PIKO_AUDIT_LOG=str(log)
    )
    assert done.returncode == 0, done.stderr
    text = log.read_text().splitlines()
    if damage == "edit":
        text[3] = text[3].replace('"bash"', '"read"')
    elif damage == "remove":
        del text[2]
    else:
        text[2], text[3] = text[3], text[2]
    log.write_text("\n".join(text) + "\n")
    broken = verify(log)
    assert broken.returncode == 1
    assert f"line {3 if damage != 'edit' else 4} " in broken.stderr


def test_a_required_log_that_cannot_be_written_blocks_tools(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log's folder should be")
    settings = tmp_path / "settings-home"
    log = blocker / "audit.jsonl"
    turns = [bash_call("echo ran > proof.txt"), {"blocks": [{"text": "could not"}]}]
    with LLMServer(turns) as server:
        audit = {"audit": {"path": str(log), "required": True}}
        done, work = run_in_pi_dirs(settings, server, "--mode", "json", "go", settings=audit)
        results = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    end = next(r for r in results if r.get("type") == "tool_execution_end")
    assert end["isError"] is True
    text = json.dumps(end["result"])
    assert "audit log" in text and "could not be written" in text and "audit is required" in text
    assert not (work / "proof.txt").exists()
