"""Fixtures of the SDK tests: ``sdk`` (a :class:`support.sdk_rig.SdkRig` on a clean agent dir) and ``run``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.sdk_rig import SdkRig
from support.world import world_of


@pytest.fixture
def sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SdkRig]:
    yield from world_of(SdkRig, tmp_path, monkeypatch)


@pytest.fixture
def run() -> Any:
    """Run a coroutine to completion (each test its own event loop)."""
    return lambda coroutine: asyncio.run(coroutine)
