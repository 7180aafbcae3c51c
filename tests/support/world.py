"""A test's own pi world: a clean agent dir, a project folder and, once started, a scripted LLM server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import TypeVar

import pytest

from support.clean_env import clean_environment
from support.llm_server import LLMServer

W = TypeVar("W", bound="World")


class World:
    """The agent dir, the project and the LLM server of one test (test folders add their sessions)."""

    def __init__(self, tmp_path: Path, agent_dir: Path) -> None:
        self.root = tmp_path
        self.agent_dir = agent_dir
        self.project = tmp_path / "project"
        self.project.mkdir(exist_ok=True)
        self.server: LLMServer | None = None

    def requests(self) -> list[dict[str, Any]]:
        """The bodies of the requests the server has answered."""
        assert self.server is not None
        return [r["body"] for r in self.server.requests]


def world_of(cls: type[W], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> Iterator[W]:
    """A ``world`` fixture's body: ``cls`` in a clean environment (``env`` set), its server stopped after."""
    state = cls(tmp_path, clean_environment(monkeypatch, tmp_path, **env))
    try:
        yield state
    finally:
        if state.server is not None:
            state.server.stop()
