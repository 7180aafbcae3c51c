"""``ANTHROPIC_AUTH_TOKEN``: the bearer mode of Anthropic-compatible gateways, end to end against the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.clean_env import clean_environment
from support.llm_server import LLMServer
from support.streams import anthropic_model

from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamOptions
from piko.plugins.providers.anthropic_messages import wire as am

MODEL = "anthropic/claude-3-5-haiku-20241022"


def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, **env: str) -> Path:
    """A clean environment whose ``anthropic`` provider points at ``base_url`` (models.json)."""
    agent = clean_environment(monkeypatch, tmp_path, **env)
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"):
        if name not in env:
            monkeypatch.delenv(name, raising=False)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": base_url}}}))
    return agent


def run_pi(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piko", "--no-session", "--model", MODEL, "-p", *args],
        env=dict(os.environ), capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip


def test_auth_token_is_a_bearer_without_x_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LLMServer([{"blocks": [{"text": "Through the gateway."}]}]) as server:
        gateway(tmp_path, monkeypatch, server.base_url,
                ANTHROPIC_AUTH_TOKEN="gw-token-123", ANTHROPIC_API_KEY="sk-ant-api-should-not-be-sent")  # fmt: skip
        done = run_pi(tmp_path, "hi")
        headers = server.requests[0]["headers"] if server.requests else {}
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Through the gateway.\n"
    assert headers["authorization"] == "Bearer gw-token-123"
    assert "x-api-key" not in headers
    assert "claude-code" not in headers.get("anthropic-beta", "")  # not an OAuth (Claude Code) request


def test_stored_key_wins_over_the_auth_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
        agent = gateway(tmp_path, monkeypatch, server.base_url, ANTHROPIC_AUTH_TOKEN="gw-token-123")
        (agent / "auth.json").write_text(
            json.dumps({"anthropic": {"type": "api_key", "key": "sk-ant-stored"}})
        )
        done = run_pi(tmp_path, "hi")
        headers = server.requests[0]["headers"] if server.requests else {}
    assert done.returncode == 0, done.stderr
    assert headers["x-api-key"] == "sk-ant-stored" and "authorization" not in headers


def test_auth_token_counts_as_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gateway(tmp_path, monkeypatch, "http://127.0.0.1:9", ANTHROPIC_AUTH_TOKEN="gw-token-123")
    listed = subprocess.run(
        [sys.executable, "-m", "piko", "--list-models", "claude-3-5-haiku-20241022"],
        env=dict(os.environ), capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert "anthropic" in listed.stdout + listed.stderr
    assert "gw-token-123" not in listed.stdout + listed.stderr


def test_a_configured_auth_header_needs_no_key() -> None:
    """pi's rule: a request is authenticated by a key or by an Authorization/x-api-key header."""
    model = anthropic_model("http://127.0.0.1:9", provider="anthropic")
    context = Context(system_prompt="sys", messages=[UserMessage(content="hi", timestamp=1)])
    spec, _ = am.build_request(
        model, context, StreamOptions(headers={"Authorization": "Bearer from-headers"})
    )
    assert spec.headers["Authorization"] == "Bearer from-headers" and "X-Api-Key" not in spec.headers
    with pytest.raises(Exception, match="No API key for provider: anthropic"):
        am.build_request(model, context, StreamOptions())
