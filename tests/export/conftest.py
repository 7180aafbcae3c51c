"""Fixtures for the export tests (helpers in ``export_helpers``, importable from every test module here)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from export_helpers import SessionFile


@pytest.fixture
def session_file(tmp_path: Path) -> Callable[..., SessionFile]:
    """``session_file(name="session.jsonl", session_id=...)``: a :class:`SessionFile` in ``tmp_path``."""

    def make(name: str = "session.jsonl", **kwargs: Any) -> SessionFile:
        return SessionFile(tmp_path / name, **kwargs)

    return make
