"""``pi auth``: check, print-api-key, print-bearer-token (refreshed against a 127.0.0.1 token
endpoint), logout; auth.json ``env`` maps and ``!command`` keys; real ``pi`` subprocesses."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.clean_env import boot_app
from support.clean_env import clean_environment
from support.token_server import TokenServer

from piko.plugins.providers import oauth_anthropic

PI = str(Path(sys.executable).with_name("pi"))
HOUR_MS = 3600 * 1000
FRESH = json.dumps({"access_token": "sk-ant-oat01-fresh", "refresh_token": "refresh-2", "expires_in": 7200})


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = clean_environment(monkeypatch, tmp_path)
    (path / "models.json").write_text(
        json.dumps({"providers": {"corp": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                                           "apiKey": "from-models-json", "models": [{"id": "corp-1"}]}}})
    )  # fmt: skip
    return path


def auth_json(agent: Path, data: dict[str, Any]) -> Path:
    path = agent / "auth.json"
    path.write_text(json.dumps(data))
    path.chmod(0o600)
    return path


def pi(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, **env}, cwd=cwd,
    )  # fmt: skip


def test_check_and_print_api_key_say_where_a_provider_stands(agent: Path) -> None:
    auth_json(agent, {"openai": {"type": "api_key", "key": "sk-stored-openai-key"}})
    ready = pi("auth", "check", "--provider", "openai", "--json", "--credentials")
    assert ready.returncode == 0, ready.stderr
    assert json.loads(ready.stdout) == {
        "status": "ready", "provider": "openai", "authType": "api_key", "credentials": "sk-stored-openai-key",
    }  # fmt: skip
    assert pi("auth", "check", "--provider", "openai").stdout == "ready\n"
    assert pi("auth", "print-api-key", "--provider", "openai").stdout == "sk-stored-openai-key\n"
    assert pi("auth", "print-api-key", "--model", "corp/corp-1").stdout == "from-models-json\n"
    from_env = pi("auth", "print-api-key", "--provider", "mistral", MISTRAL_API_KEY="mistral-from-env")
    assert from_env.stdout == "mistral-from-env\n"
    missing = pi("auth", "check", "--provider", "groq", "--json")
    assert missing.returncode == 1
    assert json.loads(missing.stdout) == {
        "status": "not_ready", "provider": "groq", "reason": "credentials_not_configured",
    }  # fmt: skip
    unknown = pi("auth", "check", "--provider", "no-such-provider", "--json")
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["reason"] == "provider_not_found"
    neither = pi("auth", "check")
    assert neither.returncode == 2
    assert neither.stderr == "Error: Auth checks require --provider <provider> or --model <model>\n"


def test_print_api_key_without_a_key_exits_1_with_one_line(agent: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".pi" / "prompts").mkdir(parents=True)  # an untrusted project says nothing here
    done = pi("auth", "print-api-key", "--provider", "groq", cwd=project)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == 'Error: No usable API key is configured for provider "groq"\n'


def test_command_keys_use_the_env_map_and_fail_naming_provider_and_reason(agent: Path) -> None:
    auth_json(
        agent,
        {
            "openai": {"type": "api_key", "key": "!printf 'key-%s' \"$VAULT_ACCOUNT\"",
                       "env": {"VAULT_ACCOUNT": "team-7"}},
            "groq": {"type": "api_key", "key": "!echo SECRET-OUTPUT-OF-THE-COMMAND; echo oops >&2; exit 3"},
            "mistral": {"type": "api_key", "key": "!sleep 5; echo late"},
            "xai": {"type": "api_key", "key": "!true"},
        },
    )  # fmt: skip
    assert pi("auth", "print-api-key", "--provider", "openai").stdout == "key-team-7\n"
    for provider, why, env in (
        ("groq", "the command exited with status 3", {}),
        ("mistral", "the command did not finish within 0.5 s", {"PIKO_KEY_COMMAND_TIMEOUT_S": "0.5"}),
        ("xai", "the command printed nothing", {}),
    ):
        done = pi("auth", "print-api-key", "--provider", provider, **env)
        assert done.returncode == 1 and done.stdout == ""
        assert (
            done.stderr
            == f'Error: The API key command for provider "{provider}" in auth.json failed: {why}\n'
        )
        check = pi("auth", "check", "--provider", provider, "--json", **env)
        assert check.returncode == 2 and json.loads(check.stdout)["status"] == "invalid"
        assert "SECRET-OUTPUT" not in check.stdout + check.stderr and "oops" not in check.stderr
    run = pi("-p", "--provider", "groq", "--model", "llama-3.3-70b-versatile", "hi", PIKO_TRACE="1")
    assert run.returncode == 1
    assert (
        'The API key command for provider "groq" in auth.json failed: the command exited with status 3'
        in run.stderr
    )
    assert "SECRET-OUTPUT" not in run.stderr + run.stdout


def test_the_env_map_is_scoped_to_its_provider(
    agent: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from piko.data.streaming import StreamOptions
    from piko.plugins.providers import auth
    from piko.plugins.providers.google_vertex.wire import resolve_location
    from piko.plugins.providers.google_vertex.wire import resolve_project

    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "process-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    auth_json(agent, {"google-vertex": {"type": "api_key", "key": "vertex-key-1234567890",
                                        "env": {"GOOGLE_CLOUD_PROJECT": "credential-project"}}})  # fmt: skip
    app = boot_app(tmp_path)
    assert auth.resolve_api_key(app, "google-vertex") == "vertex-key-1234567890"
    options = StreamOptions()
    assert resolve_project(options, "google-vertex") == "credential-project"
    assert (
        resolve_location(options, "google-vertex") == "us-central1"
    )  # the process's, where the map has none
    assert resolve_project(options, "another-vertex") == "process-project"
    assert "credential-project" in auth.stored_secrets(app)  # masked like the key itself

    from piko.data.messages import Model
    from piko.plugins.providers.azure_openai_responses.wire import resolve_config

    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "process-resource")
    auth_json(agent, {"azure-openai-responses": {"type": "api_key", "key": "azure-key-1234567890",
                                                 "env": {"AZURE_OPENAI_RESOURCE_NAME": "team-resource"}}})  # fmt: skip
    assert auth.resolve_api_key(boot_app(tmp_path), "azure-openai-responses") == "azure-key-1234567890"
    model = Model(id="gpt-x", provider="azure-openai-responses", api="azure-openai-responses")
    assert resolve_config(model, options)[0] == "https://team-resource.openai.azure.com/openai/v1"


def _oauth(agent: Path, expires_in_ms: int) -> Path:
    return auth_json(agent, {"anthropic": {"type": "oauth", "access": "sk-ant-oat01-old", "refresh": "refresh-1",
                                           "expires": int(time.time() * 1000) + expires_in_ms}})  # fmt: skip


def test_print_bearer_token_refreshes_below_the_minimum_validity(agent: Path) -> None:
    server = TokenServer([(200, "application/json", FRESH)])
    env = {oauth_anthropic.TOKEN_URL_ENV: server.url}
    try:
        path = _oauth(agent, HOUR_MS)
        valid = pi("auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "30m", **env)
        assert valid.returncode == 0 and valid.stdout == "sk-ant-oat01-old\n"
        assert server.requests == []  # an hour left, 30 minutes asked: used as it is
        longer = pi("auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "90m", **env)
        assert longer.returncode == 0, longer.stderr
        assert longer.stdout == "sk-ant-oat01-fresh\n"
        assert [body["refresh_token"] for body in server.bodies] == ["refresh-1"]
        stored = json.loads(path.read_text())["anthropic"]
        assert stored["access"] == "sk-ant-oat01-fresh" and stored["refresh"] == "refresh-2"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        too_long = pi("auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "3h", **env)
        assert too_long.returncode == 1 and too_long.stdout == ""
        assert "less than the 10800 s required" in too_long.stderr
    finally:
        server.close()


def test_an_expired_token_is_refreshed_unless_told_not_to_and_a_failed_refresh_is_invalid(
    agent: Path,
) -> None:
    server = TokenServer([(400, "application/json", json.dumps({"error": "invalid_grant"}))])
    env = {oauth_anthropic.TOKEN_URL_ENV: server.url}
    try:
        _oauth(agent, -1000)
        lazy = pi("auth", "check", "--provider", "anthropic", "--no-refresh", "--json", **env)
        assert lazy.returncode == 1 and json.loads(lazy.stdout)["reason"] == "token_expired"
        assert server.requests == []
        failed = pi("auth", "check", "--provider", "anthropic", "--json", **env)
        assert failed.returncode == 2 and json.loads(failed.stdout)["status"] == "invalid"
        assert len(server.requests) == 1
        bearer = pi("auth", "print-bearer-token", "--provider", "anthropic", **env)
        assert bearer.returncode == 1 and bearer.stdout == ""
        assert bearer.stderr.startswith("Error: Failed to refresh OAuth token for anthropic:")
        assert "sk-ant-oat01-old" not in bearer.stderr
    finally:
        server.close()
    auth_json(agent, {"openai": {"type": "api_key", "key": "sk-stored-openai-key"}})
    not_oauth = pi("auth", "print-bearer-token", "--provider", "openai")
    assert not_oauth.returncode == 1
    assert not_oauth.stderr == 'Error: Provider "openai" is not configured with an OAuth bearer token\n'
    bad = pi("auth", "print-bearer-token", "--provider", "openai", "--min-expiry", "soon")
    assert bad.returncode == 1 and "'soon' is not a duration" in bad.stderr


def test_logout_removes_and_is_safe_to_repeat(agent: Path) -> None:
    path = auth_json(
        agent,
        {
            "openai": {"type": "api_key", "key": "sk-stored-openai-key"},
            "groq": {"type": "api_key", "key": "g"},
        },
    )
    first = pi("auth", "logout", "openai")
    assert first.returncode == 0
    assert (
        first.stdout
        == "Removed stored API key for OpenAI. Environment variables and models.json config are unchanged.\n"
    )
    assert json.loads(path.read_text()) == {"groq": {"type": "api_key", "key": "g"}}
    again = pi("auth", "logout", "openai")
    assert again.returncode == 0 and again.stdout.startswith("No stored credentials for openai.")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_auth_login_stores_a_key_read_from_stdin(agent: Path) -> None:
    done = subprocess.run(
        [PI, "auth", "login", "openai", "--api-key"], input="sk-typed-key-123456\n", capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    path = agent / "auth.json"
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "sk-typed-key-123456"}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "sk-typed-key-123456" not in done.stdout + done.stderr
    assert pi("auth", "check", "--provider", "openai").stdout == "ready\n"
    both = pi("auth", "login", "openai", "--api-key", "--no-browser")
    assert both.returncode == 1 and both.stderr == "Error: --no-browser cannot be used with --api-key\n"
