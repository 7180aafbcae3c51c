"""Fixtures of the extension conformance suite: ``ext_conformance_kit`` importable, ``port_rpc``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def port_rpc(piko_home: Any, llm_server: Any) -> Iterator[Callable[..., Any]]:
    """``port_rpc(ext_id, *args, env=None)``: ``pi --mode rpc`` with a fixture's port loaded, on
    the captures' model (the scripted server); every process is killed at the end of the test."""
    from ext_conformance_kit import start_rpc

    started: list[Any] = []

    def start(ext_id: str, *args: str, env: dict[str, str] | None = None) -> Any:
        process = start_rpc(piko_home, llm_server, ext_id, *args, env=env)
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            process.kill()
