"""`pi --list-models` compared with what the real pi 0.73.1 printed for the same configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.modules import load_module

from piko.lib.collation import locale_key
from piko.plugins.providers.list_models import format_token_count

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "list_models"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "case.json").is_file())
PIKO = [sys.executable, "-m", "piko"]
# pi 0.73.1 has no offline demo provider (piko's is explicit-only; blocking it keeps these runs
# free of it entirely), and the tables must come from pi 0.73.1's own catalog, which piko keeps
# as a test fixture (piko ships the newer catalog of ``shared/data``).
PI_CATALOG = Path(__file__).resolve().parent / "fixtures" / "catalog-pi-0.73.1" / "models.json"
NO_FAUX = {"PIKO_DISABLE_PLUGINS": "providers.faux", "PIKO_MODELS_CATALOG": str(PI_CATALOG)}


def _capture():
    return load_module(FIXTURES / "capture_pi.py")


def _without_parse_message(text: str) -> str:
    return "\n".join(
        "Failed to parse models.json: <message>" if line.startswith("Failed to parse models.json: ") else line
        for line in text.split("\n")
    )


def _own_lines(stderr: str) -> str:
    """Drop warnings about other plugins (one still being written must not fail this test)."""
    keep = [
        line
        for line in stderr.split("\n")
        if not line.startswith(("Warning: plugin '", "Warning: extension '"))
    ]
    return "\n".join(keep)


@pytest.mark.parametrize("case", CASES)
def test_matches_pi(case: str, tmp_path: Path) -> None:
    stdout, stderr, code = _capture().run_case(PIKO, FIXTURES / case, tmp_path, NO_FAUX)
    expected_out = (FIXTURES / case / "stdout.txt").read_text(encoding="utf-8")
    expected_err = (FIXTURES / case / "stderr.txt").read_text(encoding="utf-8")
    assert code == 0
    assert stdout == expected_out
    stderr = _own_lines(stderr)
    if case == "broken-json":
        assert "Failed to parse models.json: Expecting property name" in stderr
        stderr, expected_err = _without_parse_message(stderr), _without_parse_message(expected_err)
    assert stderr == expected_err


def test_no_model_shows_how_to_get_going(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        **NO_FAUX,
    }
    done = subprocess.run([*PIKO, "--list-models"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stderr.startswith("No models available.\n")
    assert "ANTHROPIC_API_KEY" in done.stderr and "models.json" in done.stderr


def test_terminal_gets_the_table_on_stdout(tmp_path: Path) -> None:
    import pty

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(
        (FIXTURES / "samples" / "models.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(agent), **NO_FAUX}
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [*PIKO, "--list-models"], env=env, stdin=follower, capture_output=True, text=True, timeout=60
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.stdout == (FIXTURES / "samples" / "stderr.txt").read_text(encoding="utf-8")
    assert _own_lines(done.stderr) == ""


def test_token_counts_round_like_javascript() -> None:
    assert [format_token_count(n) for n in (999, 1000, 1250, 16384, 128000, 1048576, 2_000_000, 1_050_000)] == [
        "999", "1K", "1.3K", "16.4K", "128K", "1.0M", "2M", "1.1M",
    ]  # fmt: skip


def test_sort_order_is_javascripts_locale_compare() -> None:
    ids = ["gpt-4o", "GPT-4", "gpt-4.1", "gpt_4", "gpt-4-turbo", "gpt-40", "gpt-4o:free", "gpt4", "Gpt-4o"]
    # order computed by Node 20: [...ids].sort((a, b) => a.localeCompare(b))
    assert sorted(ids, key=locale_key) == [
        "gpt_4", "GPT-4", "gpt-4-turbo", "gpt-4.1", "gpt-40", "gpt-4o", "Gpt-4o", "gpt-4o:free", "gpt4",
    ]  # fmt: skip
