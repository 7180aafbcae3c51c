"""What the SDK tests work on: a clean agent dir whose ``models.json`` aims at the scripted 127.0.0.1 server.

``sdk.serve(turns)`` starts :class:`support.llm_server.LLMServer` with ``turns`` and writes the
provider ``mock`` (models ``mock-1`` and ``mock-2``) into the agent dir; ``sdk.project`` is the
working directory the sessions are made in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models
from support.world import World

MODELS = [
    {"id": "mock-1", "name": "Mock One", "contextWindow": 128000, "maxTokens": 16384},
    {"id": "mock-2", "name": "Mock Two", "reasoning": True, "contextWindow": 128000, "maxTokens": 16384},
]


class SdkRig(World):
    """One test's agent dir, project folder and scripted server (a :class:`~support.world.World`)."""

    def serve(self, turns: list[dict[str, Any]]) -> LLMServer:
        """Start the scripted server (stopped at the end of the test) and point ``mock`` at it."""
        assert self.server is None, "one server a test"
        self.server = LLMServer(turns).start()
        write_mock_models(self.agent_dir, self.server.base_url, MODELS)
        return self.server

    def sessions_dir(self) -> Path:
        return self.agent_dir / "sessions"

    def session_files(self) -> list[Path]:
        return sorted(self.sessions_dir().rglob("*.jsonl")) if self.sessions_dir().exists() else []
