"""A clean environment for model-registry tests: no provider keys, a tmp HOME and agent dir."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from piko.plugins.providers.catalog import CATALOG_PATH
from piko.testing.rpc_client import credential_variable
from piko.testing.rpc_client import hermetic_environment

# hermetic_environment is piko.testing's, re-exported for the tests that import it from here.
__all__ = ["PI_CATALOG", "boot_app", "clean_environment", "hermetic_environment", "provider_variables"]

# The registry tests describe pi 0.73.1's catalog; piko ships a newer one (shared/data).
PI_CATALOG = (
    Path(__file__).resolve().parents[1] / "providers" / "fixtures" / "catalog-pi-0.73.1" / "models.json"
)


def provider_variables() -> set[str]:
    """Every environment variable the catalog names (keys and other settings); tests/testing checks
    that :func:`piko.testing.credential_variable` covers them all."""
    names: set[str] = set()
    for path in (CATALOG_PATH, PI_CATALOG):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for entry in data["providers"].values():
            names.update(entry.get("envKeys") or [])
            names.update(entry.get("extraEnv") or [])
    return names


def clean_environment(monkeypatch: Any, tmp_path: Path, **env: str) -> Path:
    """Remove credential and piko/pi variables, point HOME and PI_CODING_AGENT_DIR into ``tmp_path``, block the
    ``faux`` provider plugin; set ``env``.

    Returns the agent directory (created, empty).
    """
    for name in list(os.environ):
        if credential_variable(name):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    agent = tmp_path / "agent"
    home.mkdir(parents=True, exist_ok=True)
    agent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PIKO_CACHE_DIR", str(tmp_path / "cache"))
    # piko's offline demo provider is always available; pi has none, so tests compare without it.
    monkeypatch.setenv("PIKO_DISABLE_PLUGINS", "providers.faux")
    monkeypatch.setenv("PIKO_MODELS_CATALOG", str(PI_CATALOG))
    for name, value in env.items():
        if name == "PIKO_DISABLE_PLUGINS":
            value = f"providers.faux,{value}"
        monkeypatch.setenv(name, value)
    return agent


def boot_app(tmp_path: Path, extensions: list[str] | None = None) -> Any:
    """A booted :class:`piko.app.application.App` on the agent dir of :func:`clean_environment`."""
    from piko.app.application import App
    from piko.app.application import BootOptions

    app = App(cwd=tmp_path, agent_dir=os.environ["PI_CODING_AGENT_DIR"])
    return app.boot(BootOptions(extensions=list(extensions or [])))
