"""Fixtures of the compaction tests: an isolated agent directory, a scripted LLM server, a session on it.

``world`` gives a clean ``PI_CODING_AGENT_DIR`` and project folder; ``world.session(turns, ...)``
starts :class:`support.llm_server.LLMServer` with ``turns``, writes a ``models.json`` whose
provider ``mock`` points at it (model ``mock-1``, the context window asked for) and the
settings asked for, boots a real :class:`piko.app.application.App` (extensions optional) and builds the
agent session through the same path as ``pi`` does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import support.world
from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models
from support.world import world_of


class World(support.world.World):
    """One test's agent dir, project and (once started) LLM server and session."""

    def __init__(self, tmp_path: Path, agent_dir: Path) -> None:
        super().__init__(tmp_path, agent_dir)
        self.events: list[Any] = []

    def write_models(self, base_url: str, context_window: int, max_tokens: int = 500) -> None:
        model = {"id": "mock-1", "name": "Mock One", "contextWindow": context_window, "maxTokens": max_tokens}
        write_mock_models(self.agent_dir, base_url, [model])

    def write_settings(self, settings: dict[str, Any]) -> None:
        (self.agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    def start_server(self, turns: list[dict[str, Any]]) -> LLMServer:
        self.server = LLMServer(turns).start()
        return self.server

    async def session(
        self,
        turns: list[dict[str, Any]],
        *,
        context_window: int = 128000,
        settings: dict[str, Any] | None = None,
        extensions: list[Path] | None = None,
        no_session: bool = False,
    ) -> Any:
        """A started server with ``turns`` and an agent session on model ``mock/mock-1``."""
        from piko.app.application import App
        from piko.app.application import BootOptions

        server = self.start_server(turns)
        self.write_models(server.base_url, context_window)
        self.write_settings(settings or {})
        app = App(cwd=self.project, agent_dir=self.agent_dir).boot(
            BootOptions(extensions=[str(p) for p in extensions or []])
        )
        app.options.update({"provider": "mock", "model": "mock-1", "no_session": no_session, "tools": "read"})
        session = await app.create_agent_session()
        session.subscribe(self.events.append)
        return session

    def event_types(self) -> list[str]:
        return [type(e).TYPE for e in self.events if hasattr(type(e), "TYPE")]

    def of_type(self, name: str) -> list[Any]:
        return [e for e in self.events if getattr(type(e), "TYPE", None) == name]

    def write_extension(self, name: str, source: str) -> Path:
        path = self.root / "extensions" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        return path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    yield from world_of(World, tmp_path, monkeypatch)
