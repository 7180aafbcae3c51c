"""Fixtures for the agent-core end-to-end tests."""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_harness import PiEnv
from agent_harness import make_env
from support.llm_server import LLMServer


@pytest.fixture
def pi_env(tmp_path: Path) -> Iterator[Callable[..., PiEnv]]:
    """``pi_env(turns, settings=None)``: a running scripted server and a config pointing at it."""
    with ExitStack() as stack:

        def start(turns: list[dict[str, Any]], settings: dict[str, Any] | None = None) -> PiEnv:
            server = stack.enter_context(LLMServer(turns))
            return make_env(tmp_path, server, settings)

        yield start
