"""A clean environment for model-registry tests: no provider keys, a tmp HOME and agent dir."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from piko.plugins.providers.catalog import CATALOG_PATH

# The registry tests describe pi 0.73.1's catalog; piko ships a newer one (shared/data).
PI_CATALOG = (
    Path(__file__).resolve().parents[1] / "providers" / "fixtures" / "catalog-pi-0.73.1" / "models.json"
)

# Variables that would give some provider credentials or change where files are read.
_PREFIXES = ("AWS_", "GOOGLE_", "GCLOUD_", "AZURE_", "CLOUDFLARE_", "PI_", "PIKO_")


def provider_variables() -> set[str]:
    """Every environment variable the catalog names (keys and other settings)."""
    names: set[str] = set()
    for path in (CATALOG_PATH, PI_CATALOG):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for entry in data["providers"].values():
            names.update(entry.get("envKeys") or [])
            names.update(entry.get("extraEnv") or [])
    return names


def hermetic_environment() -> dict[str, str]:
    """This process's environment without provider credentials or piko/pi settings (for a child ``pi``)."""
    drop = provider_variables()
    return {
        k: v for k, v in os.environ.items()
        if k not in drop and not k.startswith(("PI_", "PIKO_")) and not k.endswith("_API_KEY")
    }  # fmt: skip


def clean_environment(monkeypatch: Any, tmp_path: Path, **env: str) -> Path:
    """Remove provider variables, point HOME and PI_CODING_AGENT_DIR into ``tmp_path``, block the
    ``faux`` provider plugin; set ``env``.

    Returns the agent directory (created, empty).
    """
    for name in list(os.environ):
        if name in provider_variables() or name.startswith(_PREFIXES) or name.endswith("_API_KEY"):
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
    from piko.app.application import App, BootOptions

    app = App(cwd=tmp_path, agent_dir=os.environ["PI_CODING_AGENT_DIR"])
    return app.boot(BootOptions(extensions=list(extensions or [])))
