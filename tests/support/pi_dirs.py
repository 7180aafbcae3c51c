"""The folders a pi run works in: a config dir whose models.json points at a test server, and a
work dir holding the files the recorded pi sessions saw; models.json providers for a test server
(:func:`piko.testing.home.mock_provider`, re-exported)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from piko.testing.home import mock_provider

__all__ = ["MODELS_JSON", "make_pi_dirs", "mock_provider", "write_mock_models"]

MODELS_JSON = Path(__file__).resolve().parents[1] / "fixtures" / "pi_mono_samples" / "models.json"


def make_pi_dirs(
    root: Path,
    server: Any,
    settings: dict[str, Any] | None = None,
    model_fields: dict[str, dict[str, Any]] | None = None,
) -> tuple[Path, Path]:
    """``(config dir, work dir)`` under ``root``: ``home/.pi/agent`` with the samples' models.json
    aimed at ``server`` (``None``: a closed port) and ``settings``, and ``work`` with the samples'
    files. ``model_fields`` adds fields to every model of a provider (``{"mock": {"input": [...]}}``)."""
    home = root / "home" / ".pi" / "agent"
    home.mkdir(parents=True)
    work = root / "work"
    (work / "src").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (work / "notes.txt").write_text("hello world\nsecond line\n")
    (work / "src" / "main.txt").write_text("TODO: fix bug\n")
    models = json.loads(MODELS_JSON.read_text())
    base = server.base_url if server is not None else "http://127.0.0.1:9"
    models["providers"]["mock"]["baseUrl"] = base + "/v1"
    models["providers"]["mock-anthropic"]["baseUrl"] = base
    for provider, extra in (model_fields or {}).items():
        for model in models["providers"][provider]["models"]:
            model.update(extra)
    (home / "models.json").write_text(json.dumps(models))
    if settings:
        (home / "settings.json").write_text(json.dumps(settings))
    return home, work


def write_mock_models(agent_dir: Path, base_url: str, models: list[dict[str, Any]]) -> None:
    """``agent_dir/models.json`` with the one provider ``mock`` (``mock_provider``) holding ``models``."""
    data = {"providers": {"mock": mock_provider(base_url, models)}}
    (agent_dir / "models.json").write_text(json.dumps(data), encoding="utf-8")
