"""The provider API example of docs/plugins.md, run end to end: ``pi -e acme_api.py -p`` against a
local server speaking its made-up SSE format."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.llm_server import LLMServer

from piko.testing import hermetic_environment

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
PI = str(Path(sys.executable).with_name("pi"))


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = hermetic_environment()
    full.update(env)
    return subprocess.run([PI, *args], env=full, cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip


def _example_code() -> str:
    section = DOCS.read_text(encoding="utf-8").split("## Writing a provider API", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "no python example under 'Writing a provider API'"
    return match.group(1)


def _sse(*objects: dict[str, Any]) -> list[str]:
    return [f"data: {json.dumps(o)}\n\n" for o in objects]


def _replay(chunks: list[str], status: int = 200) -> dict[str, Any]:
    headers = [["content-type", "text/event-stream" if status == 200 else "application/json"]]
    return {"replay": {"status": status, "headers": headers, "body_chunks": chunks}}


def _config(tmp_path: Path, server: LLMServer) -> tuple[Path, dict[str, str]]:
    (tmp_path / "acme_api.py").write_text(_example_code(), encoding="utf-8")
    agent = tmp_path / "agent"
    agent.mkdir()
    models = {"providers": {"acme": {"baseUrl": server.base_url + "/v1", "api": "acme-chat",
                                     "apiKey": "acme-key", "models": [{"id": "acme-1"}]}}}  # fmt: skip
    (agent / "models.json").write_text(json.dumps(models))
    env = {"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(agent), "PIKO_CACHE_DIR": str(tmp_path / "cache"),
           "PI_OFFLINE": "1"}  # fmt: skip
    return tmp_path / "acme_api.py", env


def test_the_documented_provider_api_streams_an_answer(tmp_path: Path) -> None:
    turn = _replay(
        _sse({"text": "Hello"}, {"text": " from acme"}, {"stop": True, "input_tokens": 7, "output_tokens": 3})
    )
    with LLMServer([turn]) as server:
        plugin, env = _config(tmp_path, server)
        done = _run(
            ["-e", str(plugin), "--provider", "acme", "--model", "acme-1", "--mode", "json", "hi"],
            env,
            tmp_path,
        )
        request = server.requests[0]
    assert done.returncode == 0, done.stderr
    assert request["path"] == "/v1/chat"
    assert request["headers"]["authorization"] == "Bearer acme-key"
    assert request["body"]["model"] == "acme-1" and request["body"]["messages"] == [
        {"role": "user", "text": "hi"}
    ]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    end = next(e for e in events if e["type"] == "agent_end")
    answer = end["messages"][-1]
    assert answer["content"] == [{"type": "text", "text": "Hello from acme"}]
    assert answer["usage"]["input"] == 7 and answer["usage"]["output"] == 3 and answer["stopReason"] == "stop"


def test_the_documented_provider_api_reports_errors(tmp_path: Path) -> None:
    with LLMServer([_replay(_sse({"error": "quota exceeded"}))]) as server:
        plugin, env = _config(tmp_path, server)
        done = _run(["-e", str(plugin), "--provider", "acme", "--model", "acme-1", "-p", "hi"], env, tmp_path)
    assert (done.returncode, done.stderr.strip()) == (1, "quota exceeded")
