"""The suite's RPC helpers: the client is :mod:`piko.testing.rpc_client` (public for plugin authors);
the pi RPC samples, their config dirs and arguments are here.

``make_dirs`` writes a config dir whose ``models.json`` points the samples' ``mock`` providers at
a scripted :class:`~piko.testing.llm_server.LLMServer`, and a work dir with the samples' files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from piko.testing.rpc_client import RpcProcess, hermetic_environment, pi_command

__all__ = [
    "PI",
    "SAMPLES",
    "SAMPLE_ARGS",
    "RpcProcess",
    "hermetic_environment",
    "make_dirs",
    "pi_command",
    "sample",
]

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pi_rpc_samples"
PI = str(Path(sys.executable).with_name("pi"))
SAMPLE_ARGS = ["--mode", "rpc", "--no-session", "--tools", "read,bash,edit,write,grep,find,ls",
               "--provider", "mock", "--model", "mock-1"]  # fmt: skip


def sample(name: str, file: str) -> Any:
    """A file of a pi RPC transcript (parsed when JSON)."""
    path = SAMPLES / name / file if file else SAMPLES / name
    file = file or name
    text = path.read_text(encoding="utf-8")
    if file.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if file.endswith(".json") else text


def make_dirs(
    tmp_path: Path,
    server: Any,
    settings: dict[str, Any] | None = None,
    model_fields: dict[str, dict[str, Any]] | None = None,
) -> tuple[Path, Path]:
    """A config dir (models.json at ``server``) and a work dir with the samples' files.

    ``model_fields`` adds fields to every model of a provider (``{"mock": {"input": [...]}}``).
    """
    home = tmp_path / "home" / ".pi" / "agent"
    home.mkdir(parents=True)
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (work / "notes.txt").write_text("hello world\nsecond line\n")
    (work / "src" / "main.txt").write_text("TODO: fix bug\n")
    models = json.loads((SAMPLES / "models.json").read_text())
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
