"""Fixtures of the built-in command tests: an agent dir, a scripted LLM server, a real session, a scripted UI.

``world.session(turns)`` writes a ``models.json`` whose providers point at
:class:`support.llm_server.LLMServer` (``mock/mock-1``, ``mock/mock-think`` with reasoning,
``other/other-1``; the catalog's providers have no credentials), boots a real
:class:`piko.app.application.App` and builds the agent session as ``pi`` does; ``world.context(session)``
gives a :class:`icmd_harness.ScriptedContext` on it.
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
from icmd_harness import ScriptedContext
from support.llm_server import LLMServer
from support.pi_dirs import mock_provider
from support.world import world_of


def models_json(base_url: str) -> dict[str, Any]:
    return {
        "providers": {
            "mock": mock_provider(
                base_url,
                [
                    {"id": "mock-1", "name": "Mock One", "contextWindow": 128000, "maxTokens": 500},
                    {
                        "id": "mock-think",
                        "name": "Mock Thinker",
                        "reasoning": True,
                        "contextWindow": 128000,
                        "maxTokens": 500,
                    },
                ],
                "mock-key",
            ),
            "other": mock_provider(
                base_url,
                [{"id": "other-1", "name": "Other One", "contextWindow": 64000, "maxTokens": 500}],
                "other-key",
            ),
        }
    }


class World(support.world.World):
    """One test's agent dir, project, LLM server and sessions."""

    def __init__(self, tmp_path: Path, agent_dir: Path) -> None:
        super().__init__(tmp_path, agent_dir)
        self.apps: list[Any] = []

    async def session(
        self,
        turns: list[dict[str, Any]] | None = None,
        *,
        settings: dict[str, Any] | None = None,
        model: str | None = "mock/mock-1",
        options: dict[str, Any] | None = None,
        cwd: Path | None = None,
    ) -> Any:
        from piko.app.application import App
        from piko.app.application import BootOptions

        if self.server is None:
            self.server = LLMServer(list(turns or [])).start()
        elif turns:
            self.server.add_turns(turns)
        (self.agent_dir / "models.json").write_text(
            json.dumps(models_json(self.server.base_url)), encoding="utf-8"
        )
        # read only, as the default selection: a session on its defaults writes no tool record
        path = self.agent_dir / "settings.json"
        current = json.loads(path.read_text(encoding="utf-8")) if settings is None and path.exists() else {}
        data = {"defaultTools": ["read"], **(current if settings is None else settings)}
        path.write_text(json.dumps(data), encoding="utf-8")
        app = App(cwd=cwd or self.project, agent_dir=self.agent_dir).boot(BootOptions())
        if model:
            provider, _, model_id = model.partition("/")
            app.options.update({"provider": provider, "model": model_id})
        app.options.update(dict(options or {}))
        session = await app.create_agent_session()
        self.apps.append(app)
        return session

    def context(self, session: Any) -> ScriptedContext:
        return ScriptedContext(session.app, session)

    async def session_with_context(
        self, turns: list[dict[str, Any]] | None = None, **options: Any
    ) -> tuple[Any, ScriptedContext]:
        """A new :meth:`session` (same arguments) and a scripted command context on it."""
        session = await self.session(turns, **options)
        return session, self.context(session)

    def settings(self) -> dict[str, Any]:
        path = self.agent_dir / "settings.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    yield from world_of(World, tmp_path, monkeypatch, BROWSER="true")
