"""Fixtures of the engine-part tests: a real App on a tmp agent dir, sessions answered by the faux provider.

``rig.session(turns)`` scripts the in-process ``faux`` provider with ``turns`` (its turn dicts,
strings, or functions of the request), writes the settings and ``models.json`` asked for, boots
a real :class:`piko.app.application.App` (extension files optional) and builds the agent session
as ``pi`` does (model ``faux/faux-1``, a session file under the agent dir). ``rig.events`` holds
what the session told its listeners; ``rig.entries(session)`` reads its session file back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.clean_env import clean_environment
from support.pi_dirs import mock_provider
from support.world import World

from piko.plugins.providers.faux import wire as faux

# two credentialed models besides faux, one that reasons (never called: faux answers the tests)
MODELS = {
    "providers": {
        "local": mock_provider(
            "http://127.0.0.1:9",
            [
                {"id": "plain-1", "name": "Plain One", "contextWindow": 1000, "maxTokens": 100},
                {
                    "id": "think-1",
                    "name": "Thinker",
                    "reasoning": True,
                    "contextWindow": 2000,
                    "maxTokens": 100,
                },
            ],
            "local-key",
        )
    }
}


class Rig(World):
    """One test's agent dir and project (a :class:`~support.world.World`), and the sessions made on them."""

    def __init__(self, root: Path, agent_dir: Path) -> None:
        super().__init__(root, agent_dir)
        self.events: list[Any] = []

    def write_prompt_template(self, name: str, text: str) -> Path:
        """The user's prompt template ``/name`` (``prompts/NAME.md`` in the agent dir)."""
        path = self.agent_dir / "prompts" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def write_extension(self, name: str, source: str) -> Path:
        path = self.root / "extensions" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        return path

    async def session(
        self,
        turns: list[Any] | None = None,
        *,
        settings: dict[str, Any] | None = None,
        extensions: list[Path] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Any:
        from piko.app.application import App
        from piko.app.application import BootOptions

        if turns is not None:
            faux.set_responses(turns)
        (self.agent_dir / "models.json").write_text(json.dumps(MODELS), encoding="utf-8")
        (self.agent_dir / "settings.json").write_text(json.dumps(settings or {}), encoding="utf-8")
        app = App(cwd=self.project, agent_dir=self.agent_dir).boot(
            BootOptions(extensions=[str(p) for p in extensions or []])
        )
        app.options.update({"provider": "faux", "model": "faux-1", "tools": "read,bash", **(options or {})})
        session = await app.create_agent_session()
        session.subscribe(self.events.append)
        return session

    def of_type(self, name: str) -> list[Any]:
        return [e for e in self.events if getattr(type(e), "TYPE", None) == name]

    def settings(self) -> dict[str, Any]:
        return json.loads((self.agent_dir / "settings.json").read_text(encoding="utf-8"))

    @staticmethod
    def entries(session: Any) -> list[dict[str, Any]]:
        lines = Path(session.session_file).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    agent = clean_environment(monkeypatch, tmp_path)
    monkeypatch.delenv("PIKO_DISABLE_PLUGINS")  # these tests are answered by faux
    faux.reset()
    try:
        yield Rig(tmp_path, agent)
    finally:
        faux.reset()


@pytest.fixture
def run() -> Any:
    """Run a coroutine to completion (each test its own event loop)."""
    return lambda coroutine: asyncio.run(coroutine)
