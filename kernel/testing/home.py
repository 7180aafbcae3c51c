"""An isolated piko configuration for a test: ``HOME``, the agent dir, the cache and a project, in tmp.

:class:`PikoHome` lays the folders out as a user's machine has them (``HOME/.pi/agent`` is
``PI_CODING_AGENT_DIR``), writes ``models.json`` and ``settings.json``, and gives the environment
a ``pi`` subprocess should run with. :meth:`PikoHome.isolate` also applies it to the test's own
process (through pytest's ``monkeypatch``), removing every variable that could hand piko a key
or change where it reads its files (:func:`piko.testing.rpc_client.credential_variable`).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Self

from piko.testing.rpc_client import credential_variable
from piko.testing.rpc_client import hermetic_environment
from piko.testing.rpc_client import pi_command

__all__ = ["MOCK_ANTHROPIC_MODEL", "MOCK_ANTHROPIC_PROVIDER", "MOCK_MODEL", "MOCK_PROVIDER", "PikoHome",
           "mock_provider", "mock_providers"]  # fmt: skip

# The providers ``use_llm_server`` writes: OpenAI chat completions and Anthropic messages.
MOCK_PROVIDER = "mock"
MOCK_MODEL = "mock-1"
MOCK_ANTHROPIC_PROVIDER = "mock-anthropic"
MOCK_ANTHROPIC_MODEL = "mock-claude"


def mock_provider(
    base_url: str,
    models: list[dict[str, Any]],
    api_key: str = "mock-key",
    *,
    api: str = "openai-completions",
) -> dict[str, Any]:
    """One ``models.json`` provider aimed at a scripted server's ``base_url`` holding ``models``.

    ``api`` is ``"openai-completions"`` (the server's ``/v1/chat/completions``; the provider's
    ``baseUrl`` is ``base_url + "/v1"``) or ``"anthropic-messages"`` (``/v1/messages``; ``base_url``).
    """
    base = base_url + "/v1" if api.startswith("openai") else base_url
    return {"baseUrl": base, "api": api, "apiKey": api_key, "models": models}


def mock_providers(base_url: str) -> dict[str, Any]:
    """The ``providers`` of a ``models.json`` pointing at a scripted server's ``base_url``.

    ``mock/mock-1`` speaks OpenAI chat completions (``base_url + "/v1"``),
    ``mock-anthropic/mock-claude`` Anthropic messages (with reasoning); both take the key ``mock-key``.
    """
    claude = {"id": MOCK_ANTHROPIC_MODEL, "name": "Mock Claude", "reasoning": True,
              "contextWindow": 200000, "maxTokens": 32000}  # fmt: skip
    return {
        MOCK_PROVIDER: mock_provider(
            base_url, [{"id": MOCK_MODEL, "name": "Mock One", "contextWindow": 128000, "maxTokens": 16384}]
        ),
        MOCK_ANTHROPIC_PROVIDER: mock_provider(base_url, [claude], api="anthropic-messages"),
    }


class PikoHome:
    """The folders of one isolated configuration, below ``root``.

    ``home`` is ``HOME``; ``agent_dir`` (``HOME/.pi/agent`` unless given) is ``PI_CODING_AGENT_DIR``;
    ``cache_dir`` is ``PIKO_CACHE_DIR``; ``project`` is the working directory of sessions and
    ``pi`` runs; ``sessions`` is where session files go.
    """

    def __init__(
        self, root: str | os.PathLike[str], *, agent_dir: str | os.PathLike[str] | None = None
    ) -> None:
        self.root = Path(root)
        self.home = self.root / "home"
        self.agent_dir = Path(agent_dir) if agent_dir is not None else self.home / ".pi" / "agent"
        self.cache_dir = self.root / "cache"
        self.project = self.root / "project"
        self.sessions = self.root / "sessions"
        for folder in (self.home, self.agent_dir, self.cache_dir, self.project, self.sessions):
            folder.mkdir(parents=True, exist_ok=True)

    # -- the environment ---------------------------------------------------------------------

    @property
    def variables(self) -> dict[str, str]:
        """What points piko at this configuration: ``HOME``, ``PI_CODING_AGENT_DIR``, the caches."""
        return {
            "HOME": str(self.home),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PIKO_CACHE_DIR": str(self.cache_dir),
            "XDG_CACHE_HOME": str(self.root / "xdg-cache"),
            "XDG_CONFIG_HOME": str(self.root / "xdg-config"),
        }

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a ``pi`` subprocess: this process's, without credentials, plus
        :attr:`variables` and ``extra``."""
        env = hermetic_environment()
        env.update(self.variables)
        env.update(extra or {})
        return env

    def isolate(self, monkeypatch: Any) -> Self:
        """Apply the configuration to this process: remove credential and piko variables, set
        :attr:`variables` (undone by ``monkeypatch`` at the end of the test)."""
        for name in list(os.environ):
            if credential_variable(name):
                monkeypatch.delenv(name, raising=False)
        for name, value in self.variables.items():
            monkeypatch.setenv(name, value)
        return self

    # -- files -------------------------------------------------------------------------------

    def write_models(self, providers: Mapping[str, Any]) -> Path:
        """Add ``providers`` (pi's ``models.json`` shape, camelCase) to ``models.json``; its path."""
        path = self.agent_dir / "models.json"
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"providers": {}}
        data.setdefault("providers", {}).update(providers)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return path

    def write_settings(self, settings: Mapping[str, Any]) -> Path:
        """Merge ``settings`` into the user's ``settings.json``; its path."""
        path = self.agent_dir / "settings.json"
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        data.update(settings)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        return path

    def use_llm_server(self, server: Any) -> Path:
        """Point the mock providers of :func:`mock_providers` at ``server`` (an ``LLMServer``)."""
        return self.write_models(mock_providers(server.base_url))

    def write(self, relative: str, text: str) -> Path:
        """Write a file (dedented) below the project folder, creating folders; its path."""
        path = self.project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    # -- running pi ----------------------------------------------------------------------------

    def pi(
        self,
        *args: str,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``pi ARGS`` in :attr:`project` with this configuration; the finished process (text)."""
        return subprocess.run(
            [*pi_command(), *args],
            cwd=self.project,
            env=self.environment(env),
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
