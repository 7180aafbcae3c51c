"""Fixtures of the SDK tests: ``sdk`` (a :class:`support.sdk_rig.SdkRig` on a clean agent dir) and ``run``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.clean_env import clean_environment
from support.sdk_rig import SdkRig


@pytest.fixture
def sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SdkRig]:
    agent = clean_environment(monkeypatch, tmp_path)
    rig = SdkRig(tmp_path, agent)
    try:
        yield rig
    finally:
        if rig.server is not None:
            rig.server.stop()


@pytest.fixture
def run() -> Any:
    """Run a coroutine to completion (each test its own event loop)."""
    return lambda coroutine: asyncio.run(coroutine)
