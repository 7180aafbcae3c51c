"""The standards the repository keeps: ruff lint and format, mypy over piko as one package, and
``mypy --strict`` over the public API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["kernel", "plugins", "tests", "scripts", "benchmarks"]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = _run(sys.executable, "-m", "ruff", "check", *SOURCES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    done = _run(sys.executable, "-m", "ruff", "format", "--check", *SOURCES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing() -> None:
    done = _run(sys.executable, str(ROOT / "scripts" / "typecheck.py"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_public_api_passes_mypy_strict() -> None:
    done = _run(sys.executable, str(ROOT / "scripts" / "typecheck.py"), "--public")
    assert done.returncode == 0, done.stdout + done.stderr
