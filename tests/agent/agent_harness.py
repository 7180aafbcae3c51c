"""Running the real ``pi`` command against the scripted LLM server, the way pi's transcripts were made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pi_mono_samples"
PI = str(Path(sys.executable).with_name("pi"))


def sample(name: str, file: str) -> Any:
    """A file of a pi transcript (parsed for .json and .jsonl files, text otherwise)."""
    path = SAMPLES / name / file
    text = path.read_text(encoding="utf-8")
    if file.endswith(".json"):
        return json.loads(text)
    if file.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return text


def sample_events(name: str) -> list[dict[str, Any]]:
    """The JSON lines pi printed in a transcript's ``stdout.txt``."""
    return json_lines(sample(name, "stdout.txt"))


@dataclass
class PiEnv:
    """A config dir whose ``models.json`` points at ``server``, and a work dir like the samples'."""

    home: Path
    work: Path
    server: Any
    extra_env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ)
        full_env.pop("PIKO_TRACE", None)
        full_env.update(
            PI_CODING_AGENT_DIR=str(self.home), PIKO_CACHE_DIR=str(self.home / "cache"), HOME=str(self.home.parent)
        )
        full_env.update(self.extra_env)
        full_env.update(env or {})
        return subprocess.run(
            [PI, *args],
            cwd=self.work,
            env=full_env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def sessions(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("*.jsonl"))

    def session_lines(self, index: int = -1) -> list[dict[str, Any]]:
        path = self.sessions()[index]
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_env(tmp_path: Path, server: Any, settings: dict[str, Any] | None = None) -> PiEnv:
    root = tmp_path / f"env{len(list(tmp_path.glob('env*')))}"
    home = root / "home" / ".pi" / "agent"
    home.mkdir(parents=True)
    work = root / "work"
    (work / "src").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (work / "notes.txt").write_text("hello world\nsecond line\n")
    (work / "src" / "main.txt").write_text("TODO: fix bug\n")
    models = json.loads((SAMPLES / "models.json").read_text())
    models["providers"]["mock"]["baseUrl"] = server.base_url + "/v1"
    models["providers"]["mock-anthropic"]["baseUrl"] = server.base_url
    (home / "models.json").write_text(json.dumps(models))
    if settings:
        (home / "settings.json").write_text(json.dumps(settings))
    return PiEnv(home=home, work=work, server=server)


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


_VOLATILE = {"timestamp", "id", "parentId", "cwd"}


def strip_volatile(value: Any) -> Any:
    """Drop keys whose values differ run to run (timestamps, entry and session ids, cwd)."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def normalize_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event without volatile fields; ``message_update`` keeps only its delta.

    pi serializes ``message_update`` after the stream has moved on, so its ``partial``
    snapshots show later text than the delta: they cannot be compared, the deltas can.
    """
    if event.get("type") == "message_update":
        delta = {k: v for k, v in event["assistantMessageEvent"].items() if k != "partial"}
        return {"type": "message_update", "assistantMessageEvent": strip_volatile(delta)}
    if event.get("type") == "session":
        return {"type": "session", "version": event.get("version")}
    return strip_volatile(event)
