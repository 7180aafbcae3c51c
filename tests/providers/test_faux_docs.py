"""The examples of docs/providers.md ("The faux provider's script"), played by ``pi --provider faux``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from piko.testing.home import PikoHome
from piko.testing.rpc_client import pi_command

DOC = Path(__file__).resolve().parents[2] / "docs" / "providers.md"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## The faux provider's script", 1)[1].split("\n## ", 1)[0]


def examples() -> list[Any]:
    """The JSON code blocks of the section, parsed, in order."""
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section(), re.DOTALL)]


def pi_faux(
    tmp_path: Path, turns: Any, *args: str, settings: dict[str, Any] | None = None
) -> subprocess.CompletedProcess[str]:
    home = PikoHome(tmp_path / "home")
    if settings:
        home.write_settings(settings)
    (home.project / "turns.json").write_text(json.dumps(turns), encoding="utf-8")
    (home.project / "notes.txt").write_text("milk\neggs\nbread\n", encoding="utf-8")
    return subprocess.run(
        [*pi_command(), "--provider", "faux", *args],
        cwd=home.project, env=home.environment({"PIKO_FAUX_SCRIPT": "turns.json"}),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_section_has_the_three_json_examples() -> None:
    assert len(examples()) == 3


def test_text_thinking_a_tool_call_and_usage(tmp_path: Path) -> None:
    result = pi_faux(tmp_path, examples()[0], "--mode", "json", "What is in notes.txt?")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    ends = [r["message"] for r in records if r.get("type") == "message_end"]
    first, tool_result, answer = (m for m in ends if m["role"] != "user")
    assert [block["type"] for block in first["content"]] == ["thinking", "text", "toolCall"]
    assert first["stopReason"] == "toolUse"
    assert "milk" in tool_result["content"][0]["text"]
    assert answer["content"] == [{"type": "text", "text": "notes.txt holds a shopping list."}]
    assert (answer["usage"]["input"], answer["usage"]["output"]) == (1200, 9)
    printed = pi_faux(tmp_path / "again", examples()[0], "-p", "What is in notes.txt?")
    assert printed.stdout == "notes.txt holds a shopping list.\n"


@pytest.mark.parametrize(
    ("index", "printed"),
    [(0, "429 Rate limit reached"), (1, "the gateway is down"), (2, "500 status code (no body)")],
)
def test_error_turns(tmp_path: Path, index: int, printed: str) -> None:
    retry = '{"retry": {"enabled": false}}'
    assert retry in section()
    result = pi_faux(tmp_path, [examples()[1][index]], "-p", "hi", settings=json.loads(retry))
    assert (result.returncode, result.stdout) == (1, "")
    assert printed in section()
    assert result.stderr.splitlines()[-1] == printed


def test_plain_strings(tmp_path: Path) -> None:
    assert pi_faux(tmp_path, examples()[2], "-p", "hi").stdout == "Hello!\n"


def test_the_malformed_turn_prints_what_the_doc_shows(tmp_path: Path) -> None:
    shown = re.search(r"\$ pi --provider faux -p \"hi\" +# PIKO_FAUX_SCRIPT holds (.*)\n(.*)\n", section())
    assert shown is not None
    result = pi_faux(tmp_path, json.loads(shown.group(1)), "-p", "hi")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines()[-1] == shown.group(2)


def test_a_retried_error_takes_the_next_turn(tmp_path: Path) -> None:
    shown = re.search(r'`(\[\{"status": 503\}, "Back again\."\])` answers', section())
    assert shown is not None
    result = pi_faux(
        tmp_path, json.loads(shown.group(1)), "-p", "hi", settings={"retry": {"baseDelayMs": 10}}
    )
    assert (result.returncode, result.stdout) == (0, "Back again.\n"), result.stderr
