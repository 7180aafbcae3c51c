"""auth.json ``env`` maps for the providers whose credentials come from variables (Amazon Bedrock's
AWS_*, Google Vertex's ADC file, Cloudflare's account id), end to end: real ``pi`` subprocesses
against the scripted server; the variables reach that provider only, never bash or the logs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.clean_env import clean_environment
from support.llm_server import LLMServer

BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
SCOPED_SECRETS = ("AKIASCOPEDKEY0001", "scoped-secret-access-key-value", "scoped-session-token-value")


def bedrock_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, credential: dict[str, Any]
) -> Path:
    """A clean environment whose ``amazon-bedrock`` provider points at ``base_url``, with ``credential``
    as its auth.json entry."""
    agent = clean_environment(monkeypatch, tmp_path)
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    (agent / "models.json").write_text(json.dumps({"providers": {"amazon-bedrock": {"baseUrl": base_url}}}))
    (agent / "auth.json").write_text(json.dumps({"amazon-bedrock": credential}))
    (agent / "auth.json").chmod(0o600)
    return agent


def run_pi(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piko", "--no-session", "-p", *args],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=90, cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def credential_scope(headers: dict[str, str]) -> str:
    """``AKID/date/region/service/aws4_request`` from a SigV4 Authorization header."""
    return headers["authorization"].split("Credential=")[1].split(",")[0]


def test_bedrock_keys_region_and_session_token_come_from_the_env_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "env"}}}]},
        {"blocks": [{"text": "Signed with the scoped keys."}]},
    ]
    with LLMServer(turns) as server:
        bedrock_env(tmp_path, monkeypatch, server.base_url, {
            "type": "api_key",
            "env": {"AWS_REGION": "eu-west-3", "AWS_ACCESS_KEY_ID": SCOPED_SECRETS[0],
                    "AWS_SECRET_ACCESS_KEY": SCOPED_SECRETS[1], "AWS_SESSION_TOKEN": SCOPED_SECRETS[2]},
        })  # fmt: skip
        done = run_pi(tmp_path, "--model", f"amazon-bedrock/{BEDROCK_MODEL}", "--mode", "json", "go",
                      PIKO_TRACE="1")  # fmt: skip
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert len(requests) == 2
    first = requests[0]["headers"]
    scope = credential_scope(first)
    assert scope.startswith(f"{SCOPED_SECRETS[0]}/") and "/eu-west-3/bedrock/" in scope
    assert first["x-amz-security-token"] == SCOPED_SECRETS[2]
    # bash ran `env`: its output (sent back to the model) holds none of the provider's variables
    tool_result = json.dumps(requests[1]["body"])
    assert "AWS_" not in tool_result and "PATH=" in tool_result
    for secret in SCOPED_SECRETS:
        assert secret not in tool_result
        assert secret not in done.stderr  # PIKO_TRACE logs mask them
    assert "Signed with the scoped keys." in done.stdout


def test_bedrock_bearer_token_from_the_key_or_the_env_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for credential, bearer in (
        ({"type": "api_key", "key": "bedrock-bearer-from-key"}, "bedrock-bearer-from-key"),
        ({"type": "api_key", "env": {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-bearer-from-env"}},
         "bedrock-bearer-from-env"),
    ):  # fmt: skip
        with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
            bedrock_env(tmp_path, monkeypatch, server.base_url, credential)
            done = run_pi(tmp_path, "--model", f"amazon-bedrock/{BEDROCK_MODEL}", "hi")
            headers = server.requests[0]["headers"] if server.requests else {}
        assert done.returncode == 0, done.stderr
        assert headers["authorization"] == f"Bearer {bearer}"


def test_bedrock_profile_from_the_env_map_reads_the_shared_credentials_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
        agent = bedrock_env(tmp_path, monkeypatch, server.base_url,
                            {"type": "api_key", "env": {"AWS_PROFILE": "team", "AWS_REGION": "ap-south-1"}})  # fmt: skip
        aws = Path(os.environ["HOME"]) / ".aws"
        aws.mkdir()
        (aws / "credentials").write_text(
            "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = default-secret\n\n"
            "[team]\naws_access_key_id = AKIATEAMPROFILE\naws_secret_access_key = team-secret\n"
        )
        # ambient keys lose to the stored credential's profile, as in pi 1.6
        done = run_pi(tmp_path, "--model", f"amazon-bedrock/{BEDROCK_MODEL}", "hi",
                      AWS_ACCESS_KEY_ID="AKIAAMBIENT", AWS_SECRET_ACCESS_KEY="ambient-secret")  # fmt: skip
        headers = server.requests[0]["headers"] if server.requests else {}
    assert agent.exists()
    assert done.returncode == 0, done.stderr
    scope = credential_scope(headers)
    assert scope.startswith("AKIATEAMPROFILE/") and "/ap-south-1/bedrock/" in scope


def test_bedrock_env_map_counts_as_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bedrock_env(tmp_path, monkeypatch, "http://127.0.0.1:9",
                {"type": "api_key", "env": {"AWS_ACCESS_KEY_ID": "AKIAX", "AWS_SECRET_ACCESS_KEY": "s"}})  # fmt: skip
    check = subprocess.run(
        [sys.executable, "-m", "piko", "auth", "check", "--provider", "amazon-bedrock", "--json"],
        env=dict(os.environ), capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["status"] == "ready"


def test_vertex_adc_file_from_the_env_map(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from piko.lib.provider_env import set_provider_env
    from piko.plugins.providers import env_auth
    from piko.plugins.providers import google_credentials

    clean_environment(monkeypatch, tmp_path)
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    adc = tmp_path / "sa.json"
    adc.write_text("{}")
    set_provider_env("google-vertex", {"GOOGLE_APPLICATION_CREDENTIALS": str(adc),
                                       "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"})  # fmt: skip
    try:
        assert env_auth.env_api_key("google-vertex", ["GOOGLE_CLOUD_API_KEY"]) == env_auth.AUTHENTICATED
        assert google_credentials.credentials_path("google-vertex") == adc
        assert google_credentials.credentials_path("other") == google_credentials.gcloud_credentials_path()
    finally:
        set_provider_env("google-vertex", None)


def test_cloudflare_account_id_from_the_env_map(monkeypatch: pytest.MonkeyPatch) -> None:
    from piko.data.messages import Model
    from piko.lib.provider_env import set_provider_env
    from piko.plugins.providers.request_options import resolve_base_url

    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    model = Model(id="m", provider="cloudflare-workers-ai", api="openai-completions",
                  base_url="https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1")  # fmt: skip
    set_provider_env("cloudflare-workers-ai", {"CLOUDFLARE_ACCOUNT_ID": "acct-7"})
    try:
        assert resolve_base_url(model) == "https://api.cloudflare.com/client/v4/accounts/acct-7/ai/v1"
    finally:
        set_provider_env("cloudflare-workers-ai", None)
