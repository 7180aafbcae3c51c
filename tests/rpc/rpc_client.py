"""The suite's RPC helpers: the client is :mod:`piko.testing.rpc_client` (public for plugin authors);
the pi RPC samples and their arguments are here (their config dirs: :mod:`support.pi_dirs`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from piko.testing.rpc_client import RpcProcess
from piko.testing.rpc_client import hermetic_environment
from piko.testing.rpc_client import pi_command

__all__ = [
    "PI",
    "SAMPLES",
    "SAMPLE_ARGS",
    "RpcProcess",
    "hermetic_environment",
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
