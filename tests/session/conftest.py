"""Fixtures of the session tests: an isolated agent directory (the project directory, ``work``,
is the root conftest's).

Helpers (fixture paths, message makers, the pi marker) live in ``session_helpers.py``; this
file puts its directory on ``sys.path`` so test modules can import it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``PI_CODING_AGENT_DIR``, ``HOME`` and ``PIKO_CACHE_DIR`` inside ``tmp_path``; no session-dir override."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("PIKO_CACHE_DIR", str(tmp_path / "cache"))  # the listing cache
    yield agent
