"""Tool tests: makes ``tool_harness`` importable and provides a clean ``work`` dir fixture."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty directory (symlinks resolved) to run tools in."""
    root = (tmp_path / "work").resolve()
    root.mkdir()
    return root
