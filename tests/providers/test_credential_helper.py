"""Keys from a command (``apiKeyCommand``): cached, refreshed when a gateway refuses an expired key,
failures named without the command's output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.clean_env import hermetic_environment
from support.llm_server import LLMServer

PI = str(Path(sys.executable).with_name("pi"))


class RotatingGateway(LLMServer):
    """Accepts only the key the vault holds now; after each accepted request the vault issues a
    new key (the old one expires), as a short-lived-key gateway does."""

    def __init__(self, turns: list[Any], vault: Path) -> None:
        super().__init__(turns)
        self.vault = vault
        self.issued = 0
        self.rotate()

    def rotate(self) -> None:
        self.issued += 1
        self.vault.write_text(f"vault-key-{self.issued}\n")

    def _take_turn(self, record: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        headers = {k.lower(): v for k, v in record["headers"].items()}
        if headers.get("authorization") != f"Bearer {self.vault.read_text().strip()}":
            with self._lock:
                self.requests.append(record)
            return len(self.requests), {"status": 401, "error_body": {"error": {"message": "key expired"}}}
        seq, turn = super()._take_turn(record)
        self.rotate()
        return seq, turn


def _run(tmp_path: Path, server: LLMServer, command: Any, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home" / ".pi" / "agent"
    home.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": server.base_url + "/v1", "api": "openai-completions", "apiKeyCommand": command,
        "models": [{"id": "gw-1", "contextWindow": 100000, "maxTokens": 1000}],
    }  # fmt: skip
    (home / "models.json").write_text(json.dumps({"providers": {"gateway": provider}}))
    (home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
    env = hermetic_environment()
    env.update(PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(tmp_path / "home"))
    return subprocess.run(
        [PI, "--provider", "gateway", "--model", "gw-1", "--no-session", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_an_expired_key_is_refreshed_and_the_request_retried(tmp_path: Path) -> None:
    vault, runs = tmp_path / "vault.txt", tmp_path / "runs.txt"
    turns = [
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "vault.txt"}}}]},
        {"blocks": [{"text": "all done"}]},
    ]
    with RotatingGateway(turns, vault) as server:
        command = {"command": f"echo run >> {runs}; cat {vault}", "cacheSeconds": 3600}
        done = _run(tmp_path, server, command, "-p", "go")
        statuses = [
            r["headers"].get("Authorization") or r["headers"].get("authorization") for r in server.requests
        ]
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "all done"
    # key 1 accepted; the cached key 1 refused once it expired; key 2 fetched and accepted
    assert statuses == ["Bearer vault-key-1", "Bearer vault-key-1", "Bearer vault-key-2"]
    assert runs.read_text().count("run") == 2  # cached in between
    assert "vault-key" not in done.stderr


def test_a_failing_command_names_the_provider_not_its_output(tmp_path: Path) -> None:
    with LLMServer([{"blocks": [{"text": "never"}]}]) as server:
        done = _run(tmp_path, server, "echo SECRET-OUTPUT-xyz; echo oops >&2; exit 3", "-p", "go")
        assert not server.requests
    assert done.returncode == 1
    assert "apiKeyCommand of provider gateway exited with status 3" in done.stderr + done.stdout
    assert "SECRET-OUTPUT-xyz" not in done.stderr + done.stdout


def test_a_command_that_hangs_is_stopped_by_its_timeout(tmp_path: Path) -> None:
    with LLMServer([{"blocks": [{"text": "never"}]}]) as server:
        done = _run(tmp_path, server, {"command": "sleep 30", "timeoutSeconds": 0.5}, "-p", "go")
    assert done.returncode == 1
    assert "apiKeyCommand of provider gateway did not finish within 0.5 s" in done.stderr + done.stdout
