"""Settings: ``~/.pi/agent/settings.json`` and ``.pi/settings.json`` merged, environment and
command line on top, each key honoured where its feature is, legacy keys read as pi reads them."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import MOCK
from agent_harness import OK

from piko.config.settings import DEFAULTS
from piko.config.settings import Settings
from piko.config.settings import migrate_settings

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _budget(env: Any, index: int = 0) -> int | None:
    return (env.server.requests[index]["body"].get("thinking") or {}).get("budget_tokens")


def test_project_settings_merge_into_global_key_by_key(pi_env: Any) -> None:
    env = pi_env([{"status": 500, "error_body": {"error": {"message": "boom"}}}, *OK])
    env.settings(
        {
            "defaultProvider": "mock-anthropic",
            "defaultModel": "mock-claude",
            "retry": {"enabled": False, "maxRetries": 5, "provider": {"maxRetries": 0}},
        }
    )
    env.settings({"defaultThinkingLevel": "high", "retry": {"baseDelayMs": 1}}, project=True)
    env.trust()  # a project's settings count once it is trusted
    done = env.run("-p", "hi")
    # the project's retry object did not replace the global one: retries stay off
    assert done.returncode == 1 and "boom" in done.stderr
    assert len(env.server.requests) == 1
    body = env.server.requests[0]["body"]
    assert body["model"] == "mock-claude" and _budget(env) == 16384


def test_command_line_beats_settings(pi_env: Any) -> None:
    env = pi_env(OK)
    env.settings({"defaultProvider": "mock", "defaultModel": "mock-1", "defaultThinkingLevel": "high"})
    assert env.run("-p", "--model", "mock-claude", "--thinking", "low", "hi").returncode == 0
    assert env.server.requests[0]["body"]["model"] == "mock-claude" and _budget(env) == 2048


def test_enabled_models_scope_and_the_saved_default_in_it(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    env.settings({"enabledModels": ["mock-claude:low"]})
    assert env.run("-p", "hi").returncode == 0
    assert env.server.requests[0]["body"]["model"] == "mock-claude" and _budget(env) == 2048
    env.settings(
        {"enabledModels": ["mock-claude", "mock-1"], "defaultProvider": "mock", "defaultModel": "mock-1"}
    )
    assert env.run("-p", "hi").returncode == 0
    assert env.server.requests[1]["body"]["model"] == "mock-1"


def test_thinking_budgets(pi_env: Any) -> None:
    env = pi_env(OK)
    env.settings({"thinkingBudgets": {"medium": 5000}})
    assert env.run("-p", "--model", "mock-claude", "hi").returncode == 0
    assert _budget(env) == 5000


@pytest.mark.parametrize(("provider_retries", "requests", "code"), [(None, 2, 0), (0, 1, 1)])
def test_provider_retry_count(pi_env: Any, provider_retries: int | None, requests: int, code: int) -> None:
    env = pi_env([{"status": 500, "headers": {"retry-after-ms": "1"}}, *OK])
    retry: dict[str, Any] = {"enabled": False}
    if provider_retries is not None:
        retry["provider"] = {"maxRetries": provider_retries}
    env.settings({"retry": retry})
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == code
    assert len(env.server.requests) == requests


@pytest.mark.parametrize(("longest", "requests", "code"), [(500, 1, 1), (0, 2, 0)])
def test_provider_longest_wait(pi_env: Any, longest: int, requests: int, code: int) -> None:
    """A server asking for a longer wait than ``maxRetryDelayMs`` fails at once; 0 means no limit."""
    env = pi_env([{"status": 429, "headers": {"retry-after": "1"}}, *OK])
    env.settings({"retry": {"enabled": False, "provider": {"maxRetryDelayMs": longest}}})
    done = env.run("-p", *MOCK, "hi")
    assert (done.returncode, len(env.server.requests)) == (code, requests)


def test_provider_timeout(pi_env: Any) -> None:
    env = pi_env([{"headers_delay_s": 5, "blocks": [{"text": "late"}]}])
    env.settings({"retry": {"enabled": False, "provider": {"timeoutMs": 300, "maxRetries": 0}}})
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == 1 and done.stdout == ""
    assert len(env.server.requests) == 1


def test_block_images(pi_env: Any) -> None:
    env = pi_env(OK)
    env.models(lambda data: data["providers"]["mock"]["models"][0].update(input=["text", "image"]))
    (env.work / "shot.png").write_bytes(PNG)
    env.settings({"images": {"blockImages": True}})
    assert env.run("-p", *MOCK, "@shot.png", "look").returncode == 0
    (user,) = [m for m in env.server.requests[0]["body"]["messages"] if m["role"] == "user"]
    assert [b["type"] for b in user["content"]] == ["text", "text"]
    assert user["content"][1]["text"] == "Image reading is disabled."


def test_shell_command_prefix(pi_env: Any) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo value=$PIKO_PREFIXED"}}}]},
        *OK,
    ]
    env = pi_env(turns)
    env.settings({"shellCommandPrefix": "export PIKO_PREFIXED=from-prefix"})
    assert env.run("-p", *MOCK, "run it").returncode == 0
    tool_result = env.server.requests[1]["body"]["messages"][-1]
    assert tool_result["role"] == "tool" and "value=from-prefix" in tool_result["content"]


def test_broken_settings_are_reported_and_left_alone(pi_env: Any) -> None:
    env = pi_env(OK)
    broken = env.home / "settings.json"
    broken.write_text('{"defaultModel": ')
    project = env.write(".pi/settings.json", "[1]")
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == 0 and done.stdout == "ok\n"
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"Warning: Could not read settings from {broken}: ")
    assert lines[1] == f"Warning: Ignoring {project}: settings must be a JSON object"
    assert broken.read_text() == '{"defaultModel": ' and project.read_text() == "[1]"


def test_legacy_keys_read_as_pi_reads_them(pi_env: Any) -> None:
    env = pi_env(OK)
    env.write(
        "old-skills/legacy/SKILL.md",
        "---\ndescription: Found through customDirectories.\n---\n",
        base=env.home,
    )
    env.settings({"skills": {"enableSkillCommands": False, "customDirectories": ["old-skills"]}})
    assert env.run("-p", *MOCK, "hi").returncode == 0
    assert "<name>legacy</name>" in env.system_prompt()
    assert json.loads((env.home / "settings.json").read_text())["skills"]["customDirectories"] == [
        "old-skills"
    ]


def test_migrations_unit(tmp_path: Path) -> None:
    assert migrate_settings(
        {
            "queueMode": "all",
            "websockets": True,
            "retry": {"maxDelayMs": 500, "maxRetries": 1},
            "skills": {"enableSkillCommands": False},
        }
    ) == {
        "steeringMode": "all",
        "transport": "websocket",
        "retry": {"maxRetries": 1, "provider": {"maxRetryDelayMs": 500}},
        "enableSkillCommands": False,
    }
    kept = {
        "queueMode": "x",
        "steeringMode": "all",
        "retry": {"maxDelayMs": 9, "provider": {"maxRetryDelayMs": 1}},
    }
    assert migrate_settings(kept) == {
        "queueMode": "x",
        "steeringMode": "all",
        "retry": {"provider": {"maxRetryDelayMs": 1}},
    }
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"retry": {"maxDelayMs": 250}}))
    settings = Settings(tmp_path, agent)
    assert settings.get("retry.provider.maxRetryDelayMs") == 250
    assert settings.get("retry.baseDelayMs") == DEFAULTS["retry"]["baseDelayMs"]
