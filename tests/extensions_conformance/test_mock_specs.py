"""``mock_specs/*.json``: the worlds the Rust port's harness mocks, built for real in piko.

A mock spec gives an extension a session (name, file, messages), tools, a model, UI defaults,
exec and HTTP rules. Here each part the spec fixes is made real (a models.json with the spec's
models, a session file with its messages, a git repository in the state its exec rules
describe) and an extension reads it back through ``pi`` and ``ctx``. Two parts have no real
counterpart and are left out: the HTTP rules (a GitHub API answer: the suite reaches nothing
beyond 127.0.0.1, and a piko extension makes its own requests, with no runtime layer to mock),
and the UI defaults (``confirm_default: true`` is the harness accepting every dialog; with no
user, pi and piko answer a headless dialog with its cancel value, which the test checks).
``events.fire_sequence`` (``turn_end``) is what a real run fires: see the status-line scenario.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from typing import Any

import pytest
from ext_conformance_kit import EXTENSIONS
from ext_conformance_kit import FIXTURES
from ext_conformance_kit import load
from ext_conformance_kit import port


def test_the_two_copies_of_each_spec_are_the_same() -> None:
    for path in sorted((FIXTURES / "mock_specs").glob("*.json")):
        assert (FIXTURES / "fixtures" / path.name).read_bytes() == path.read_bytes()


def spec_model(model: dict[str, Any]) -> dict[str, Any]:
    """A models.json model from a spec's ``available_models`` row."""
    return {
        "id": model["id"], "name": model["name"], "reasoning": model["reasoning"], "input": model["input"],
        "contextWindow": model["context_window"], "maxTokens": model["max_tokens"],
        "cost": {**model["cost"], "cacheRead": 0, "cacheWrite": 0},
    }  # fmt: skip


def spec_session(path: Any, cwd: Any, session: dict[str, Any]) -> None:
    """A pi session file holding the spec's messages and its name."""
    stamp = "2026-02-05T00:00:00.000Z"
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "test-session", "timestamp": stamp, "cwd": str(cwd)}
    ]
    parent = None
    for message in session["messages"]:
        body = {"role": message["role"], "content": message["content"], "timestamp": 0}
        if message["role"] == "assistant":
            body.update(
                api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", stopReason="stop"
            )
            body["usage"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip
        lines.append(
            {"type": "message", "id": message["id"], "parentId": parent, "timestamp": stamp, "message": body}
        )
        parent = message["id"]
    lines.append(
        {
            "type": "session_info",
            "id": "info-001",
            "parentId": parent,
            "timestamp": stamp,
            "name": session["name"],
        }
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_default_spec_world_reads_back(piko_home: Any) -> None:
    spec = load("mock_specs/mock_spec_default.json")
    providers: dict[str, Any] = {}
    for model in spec["model"]["available_models"]:
        entry = providers.setdefault(
            model["provider"], {"baseUrl": "http://127.0.0.1:9", "apiKey": "mock-key", "models": []}
        )
        entry["api"] = "anthropic-messages" if model["provider"] == "anthropic" else "openai-completions"
        entry["models"].append(spec_model(model))
    piko_home.write_models(providers)
    seed = piko_home.root / "test-session.jsonl"
    spec_session(seed, piko_home.project, spec["session"])
    log = piko_home.root / "world.json"
    current = spec["model"]["current"]
    env = {"WORLD_PROBE_LOG": str(log), "WORLD_PROBE_TOOLS": json.dumps(spec["tools"]["active_tools"])}
    args = ["-p", "-e", str(EXTENSIONS / "world_probe.py"), "--session", str(seed)]
    args += [
        "--provider",
        current["provider"],
        "--model",
        current["model_id"],
        "--thinking",
        spec["model"]["thinking_level"],
    ]
    done = piko_home.pi(*args, "/world", env=env)
    assert done.returncode == 0, done.stderr
    world = json.loads(log.read_text())
    assert world["model"] == current
    assert world["thinking_level"] == spec["model"]["thinking_level"]
    assert world["session_name"] == spec["session"]["name"]
    assert world["messages"] == [
        {"role": m["role"], "text": "".join(b["text"] for b in m["content"])}
        for m in spec["session"]["messages"]
    ]
    assert {t["name"] for t in spec["tools"]["all_tools"]} <= set(world["all_tools"])
    assert world["active_tools"] == spec["tools"]["active_tools"]
    # the spec's models join the catalogues of their providers: each is there, as the spec has it
    assert {(m["provider"], m["id"]) for m in spec["model"]["available_models"]} <= {
        tuple(m) for m in world["available_models"]
    }
    row = next(m for m in spec["model"]["available_models"] if m["id"] == current["model_id"])
    assert world["model_fields"] == {
        k: row[k] for k in ("reasoning", "input", "context_window", "max_tokens")
    }
    assert world["has_ui"] is False and world["confirm"] is False  # nobody to ask: the cancel value


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
}  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_spec_exec_rules_hold_in_a_real_repository(
    piko_session: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    """The git-checkpoint spec's exec rules, run with ``pi.exec`` in a repository in the state
    they describe: ``src/main.rs`` changed and staged (3 lines in, 2 out), ``new-file.txt``
    untracked, one commit ``Initial commit``. Outputs that hold a hash are matched as patterns;
    ``diff --stat`` is asked with ``--cached`` (the change is staged, as ``status`` says)."""
    spec = load("mock_specs/mock_spec_with_http.json")
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "src" / "main.rs").write_text("fn main() {\n    one();\n    two();\n}\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "Initial commit"], cwd=repo, check=True)
    (repo / "src" / "main.rs").write_text("fn main() {\n    three();\n    four();\n    five();\n}\n")
    subprocess.run(["git", "add", "src/main.rs"], cwd=repo, check=True)
    (repo / "new-file.txt").write_text("new\n")
    app = piko_session.boot(extensions=[port("git-checkpoint")])
    pi = next(api for api in app.extension_apis if api.name == "git_checkpoint")
    patterns = {
        ("rev-parse", "HEAD"): r"[0-9a-f]{40}\n",
        ("log", "--oneline"): r"[0-9a-f]{7} Initial commit\n",
        ("stash",): r"Saved working directory and index state WIP on main: [0-9a-f]{7} Initial commit\n",
    }
    extra = {("diff", "--stat"): ["--cached"]}
    rules = spec["exec"]["rules"]
    assert [rule["match"]["cmd_exact"] for rule in rules] == ["git"] * len(rules)
    for rule in rules:
        args = list(rule["match"]["args_contain"])
        result = asyncio.run(pi.exec("git", args + extra.get(tuple(args), []), cwd=str(repo)))
        assert (result.code, result.killed) == (rule["result"]["code"], rule["result"]["killed"]), (
            args,
            result,
        )
        pattern = patterns.get(tuple(args))
        if pattern is None:
            assert result.stdout == rule["result"]["stdout"], args
        else:
            assert re.fullmatch(pattern, result.stdout), (args, result.stdout)
