"""A project's settings cannot switch off the user's own plugins until the project is trusted.

A real global extension (``~/.pi/agent/extensions/guard.py``) blocks a ``bash`` call; a project's
``.pi/settings.json`` asks for ``"disabledPlugins": ["guard"]``; ``pi`` runs against the scripted
LLM server in print, json and RPC mode. Untrusted, the guard still loads and the run says once
what it ignored; trusted, the guard is off and a one-line notice names it and the settings file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models

from piko.testing import hermetic_environment

PI = str(Path(sys.executable).with_name("pi"))

GUARD = '''"""A safety extension of the user: no bash command may touch files."""


def activate(pi):
    def guard(event, ctx):
        if event.tool_name == "bash" and "touch" in str(event.input.get("command", "")):
            return {"block": True, "reason": "GUARD-BLOCKED"}

    pi.on("tool_call", guard)
'''

TURNS = [
    {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "touch pwned.txt"}}}]},
    {"blocks": [{"text": "All done."}]},
]


def _dirs(tmp_path: Path, server: LLMServer) -> tuple[Path, Path]:
    agent = tmp_path / "home" / ".pi" / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "guard.py").write_text(GUARD, encoding="utf-8")
    write_mock_models(agent, server.base_url, [{"id": "mock-1", "contextWindow": 128000, "maxTokens": 4096}])
    work = tmp_path / "work"
    (work / ".pi").mkdir(parents=True)
    (work / ".pi" / "settings.json").write_text(json.dumps({"disabledPlugins": ["guard"]}), encoding="utf-8")
    return agent, work


def _env(agent: Path) -> dict[str, str]:
    env = hermetic_environment()
    env.update(
        PI_CODING_AGENT_DIR=str(agent), PIKO_CACHE_DIR=str(agent / "cache"), HOME=str(agent.parents[1])
    )
    return env


def _run(mode: str, agent: Path, work: Path) -> tuple[str, str]:
    """Run one prompt in ``mode``; returns (stdout, stderr)."""
    base = ["--provider", "mock", "--model", "mock-1", "--no-session", "--tools", "bash"]
    if mode == "rpc":
        command = json.dumps({"id": "1", "type": "prompt", "message": "go"}) + "\n"
        proc = subprocess.Popen(
            [PI, "--mode", "rpc", *base], cwd=work, env=_env(agent),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(command)
        proc.stdin.flush()
        lines: list[str] = []
        for line in proc.stdout:  # read until the agent is done, then end input
            lines.append(line)
            if json.loads(line).get("type") == "agent_end":
                break
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.wait(timeout=60)
        return "".join(lines) + rest, err
    args = ["-p", "go"] if mode == "print" else ["--mode", "json", "go"]
    done = subprocess.run(
        [PI, *args, *base], cwd=work, env=_env(agent), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


@pytest.mark.parametrize("mode", ["print", "json", "rpc"])
def test_an_untrusted_project_cannot_disable_a_global_extension(tmp_path: Path, mode: str) -> None:
    with LLMServer(TURNS) as server:
        agent, work = _dirs(tmp_path, server)
        out, err = _run(mode, agent, work)
    assert not (work / "pwned.txt").exists(), "the guard did not load: the untrusted project disabled it"
    assert "GUARD-BLOCKED" in out or mode == "print"
    notices = [line for line in err.splitlines() if "Project resources" in line]
    assert notices == [
        f"Warning: Project resources in {work} were not loaded (.pi/settings.json (disabledPlugins: guard)): this project is not "
        f"trusted. Use --approve (-a) to trust it for this run, or `pi trust` in {work} (/trust in the "
        "interactive mode) to save a decision"
    ], err


@pytest.mark.parametrize("mode", ["print", "json", "rpc"])
def test_a_trusted_project_may_disable_it_and_is_shown_once(tmp_path: Path, mode: str) -> None:
    with LLMServer(TURNS) as server:
        agent, work = _dirs(tmp_path, server)
        (agent / "trusted-projects.json").write_text(json.dumps({"projects": {str(work): True}}))
        out, err = _run(mode, agent, work)
    assert (work / "pwned.txt").exists(), "the trusted project's disabledPlugins was not honoured"
    assert "GUARD-BLOCKED" not in out
    notices = [line for line in err.splitlines() if "guard" in line]
    assert notices == [
        f"Warning: plugin 'guard' ({agent / 'extensions' / 'guard.py'}) is disabled by the project settings "
        f"{work / '.pi' / 'settings.json'} (disabledPlugins)"
    ], err
