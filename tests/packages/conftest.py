"""Fixtures of the packages tests (the environment itself is in ``pkg_env.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pkg_env import PiEnv
from pkg_wheels import tool_plugin_wheel


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local index (``--find-links``) of small plugin wheels."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    tool_plugin_wheel(folder, "piko-hello", "1.0", "hello", "hello_tool", skills=True)
    tool_plugin_wheel(folder, "piko-hello", "1.1", "hello", "hello_tool", skills=True)
    tool_plugin_wheel(folder, "piko-other", "1.0", "other", "other_tool")
    return folder


@pytest.fixture
def pienv(tmp_path: Path, wheelhouse: Path) -> PiEnv:
    return PiEnv(tmp_path, wheelhouse)
