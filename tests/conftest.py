"""Root test configuration: puts ``tests/`` on ``sys.path`` so tests can import ``support.*``; the
``run`` and ``work`` fixtures."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


@pytest.fixture
def run() -> Any:
    """Run a coroutine to completion (each test its own event loop)."""
    return lambda coroutine: asyncio.run(coroutine)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty project directory ``tmp_path / "work"`` (symlinks resolved): the session cwd, the
    folder tools run in."""
    root = (tmp_path / "work").resolve()
    root.mkdir()
    return root
