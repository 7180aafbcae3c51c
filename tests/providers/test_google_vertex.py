"""The google-vertex API against real servers on 127.0.0.1: Vertex's streaming endpoint and a token endpoint.

The credentials files are real (a freshly made RSA key for the service account, a refresh token
for gcloud's user credentials); their ``token_uri`` points at a scripted token endpoint, and
``GOOGLE_VERTEX_BASE_URL`` (which the Google GenAI SDK honours for pi too) at the Gemini server.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.clean_env import clean_environment
from support.llm_server import LLMServer
from support.stream_runs import collect
from support.stream_runs import context
from support.stream_runs import model
from support.stream_runs import stream_fn
from support.stream_runs import types
from support.wire_google_token import form

from piko.data.streaming import StreamOptions
from piko.plugins.providers import google_credentials
from piko.plugins.providers.google_generative_ai.wire import build_body
from piko.plugins.providers.google_vertex.wire import NO_LOCATION
from piko.plugins.providers.google_vertex.wire import NO_PROJECT
from piko.plugins.providers.google_vertex.wire import VERTEX_BUDGETS
from piko.plugins.providers.google_vertex.wire import stream_url

API = "google-vertex"
stream = stream_fn("google_vertex.wire")
CATALOG_BASE = "https://{location}-aiplatform.googleapis.com"
TOKEN_ENDPOINT_PATH = "/oauth2/token"


@pytest.fixture(scope="module")
def rsa_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def service_account_file(path: Path, key: Any, token_uri: str, **extra: Any) -> Path:
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "file-project",
                "private_key_id": "key-0001",
                "private_key": pem(key),
                "client_email": "piko-test@file-project.iam.gserviceaccount.com",
                "client_id": "1234567890",
                "token_uri": token_uri,
                **extra,
            }
        ),
        encoding="utf-8",
    )
    return path


def user_file(path: Path, token_uri: str, **extra: Any) -> Path:
    data = {
        "type": "authorized_user",
        "client_id": "gcloud-client.apps.googleusercontent.com",
        "client_secret": "gcloud-client-secret",
        "refresh_token": "1//refresh-token-of-the-user",
        "token_uri": token_uri,
        **extra,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def vertex(base_url: str = CATALOG_BASE, model_id: str = "gemini-2.5-flash", **fields: Any) -> Any:
    fields.setdefault("provider", "google-vertex")
    return model(API, base_url, model_id, **fields)


def adc_options(**fields: Any) -> StreamOptions:
    return StreamOptions(api_key="<authenticated>", **fields)


@pytest.fixture
def vertex_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Project and location set, no credentials variables; returns a directory for files."""
    clean_environment(monkeypatch, tmp_path)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    google_credentials.forget_tokens()
    return tmp_path


def decode_jwt(assertion: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    def part(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    header, claims, signature = assertion.split(".")
    return (
        json.loads(part(header)),
        json.loads(part(claims)),
        f"{header}.{claims}".encode(),
        part(signature),
    )


def test_service_account_token_signs_the_request(
    vertex_env: Path, rsa_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    turn = {"blocks": [{"text": "Hello from Vertex."}], "usage": {"input": 40, "output": 5}}
    with LLMServer([{"access_token": "ya29.service-token"}]) as tokens, LLMServer([turn]) as gemini:
        token_uri = tokens.base_url + TOKEN_ENDPOINT_PATH
        path = service_account_file(vertex_env / "sa.json", rsa_key, token_uri)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.base_url)
        m = vertex()
        ctx = context()
        events = collect(stream, m, ctx, adc_options())
        token_request, request = tokens.requests[0], gemini.requests[0]
    assert types(events) == ["start", "text_start", "text_end", "done"]
    message = events[-1].message
    assert message is not None and message.api == API and message.provider == "google-vertex"
    assert message.content[0].text == "Hello from Vertex."
    assert request["path"] == (
        "/v1/projects/my-project/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent"
    )
    assert request["query"] == {"alt": "sse"}
    assert request["headers"]["authorization"] == "Bearer ya29.service-token"
    assert "x-goog-api-key" not in request["headers"]
    assert request["body"] == build_body(m, ctx, adc_options(), budgets=VERTEX_BUDGETS)

    assert token_request["path"] == TOKEN_ENDPOINT_PATH
    assert token_request["headers"]["content-type"] == "application/x-www-form-urlencoded"
    posted = form(token_request)
    assert posted["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    header, claims, signed, signature = decode_jwt(posted["assertion"])
    assert header == {"alg": "RS256", "typ": "JWT", "kid": "key-0001"}
    assert claims["iss"] == "piko-test@file-project.iam.gserviceaccount.com"
    assert claims["aud"] == token_uri
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    assert claims["exp"] - claims["iat"] == 3600
    rsa_key.public_key().verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())  # raises if forged


def test_token_is_reused_and_refreshed_before_it_expires(
    vertex_env: Path, rsa_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {"blocks": [{"text": "ok"}]}
    token_turns = [
        {"access_token": "ya29.first", "expires_in": 3600},  # good for an hour: kept
        {"access_token": "ya29.second", "expires_in": 120},  # inside the refresh margin: not kept
        {"access_token": "ya29.third", "expires_in": 3600},
    ]
    with LLMServer(token_turns) as tokens, LLMServer([answer] * 4) as gemini:
        path = service_account_file(vertex_env / "sa.json", rsa_key, tokens.base_url + "/token")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.base_url)
        for _ in range(2):
            assert collect(stream, vertex(), context(), adc_options())[-1].type == "done"
        # a new key file (the account's key was rotated) gets a token of its own
        service_account_file(path, rsa_key, tokens.base_url + "/token", private_key_id="key-0002")
        for _ in range(2):
            assert collect(stream, vertex(), context(), adc_options())[-1].type == "done"
        used = [r["headers"]["authorization"] for r in gemini.requests]
        minted = len(tokens.requests)
    assert used == ["Bearer ya29.first", "Bearer ya29.first", "Bearer ya29.second", "Bearer ya29.third"]
    assert minted == 3


def test_gcloud_user_credentials_refresh_token(vertex_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        LLMServer([{"access_token": "ya29.user"}]) as tokens,
        LLMServer([{"blocks": [{"text": "hi"}]}]) as gemini,
    ):
        # no GOOGLE_APPLICATION_CREDENTIALS: gcloud's file in the home directory
        gcloud = Path.home() / ".config" / "gcloud"
        gcloud.mkdir(parents=True)
        user_file(gcloud / "application_default_credentials.json", tokens.base_url + "/token",
                  quota_project_id="billing-project")  # fmt: skip
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.base_url)
        monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
        monkeypatch.setenv("GCLOUD_PROJECT", "gcloud-project")
        monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "global")
        events = collect(stream, vertex(), context(), adc_options())
        posted, request = form(tokens.requests[0]), gemini.requests[0]
    assert events[-1].type == "done"
    assert posted == {
        "grant_type": "refresh_token",
        "client_id": "gcloud-client.apps.googleusercontent.com",
        "client_secret": "gcloud-client-secret",
        "refresh_token": "1//refresh-token-of-the-user",
    }
    assert request["path"].startswith(
        "/v1/projects/gcloud-project/locations/global/publishers/google/models/"
    )
    assert request["headers"]["authorization"] == "Bearer ya29.user"
    assert request["headers"]["x-goog-user-project"] == "billing-project"


def error_of(events: list[Any]) -> str:
    assert events[-1].type == "error", types(events)
    return str(events[-1].final.error_message)


def test_missing_project_location_and_credentials(vertex_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    assert error_of(collect(stream, vertex(), context(), adc_options())) == NO_PROJECT
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION")
    assert error_of(collect(stream, vertex(), context(), adc_options())) == NO_LOCATION
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    missing = vertex_env / "nowhere.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    assert error_of(collect(stream, vertex(), context(), adc_options())) == (
        f"No Google Cloud credentials found at {missing}. Set GOOGLE_APPLICATION_CREDENTIALS to a "
        "service account key file, or run `gcloud auth application-default login`."
    )


def test_bad_credentials_files_say_what_is_wrong(vertex_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", "http://127.0.0.1:9")
    path = vertex_env / "adc.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    cases = {
        "{not json": "are not valid JSON",
        '{"type": "external_account"}': "have type 'external_account'; supported are 'service_account' and 'authorized_user'",
        '{"type": "service_account", "client_email": "a@b"}': "(service_account) lack private_key",
        '{"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n", "token_uri": "http://127.0.0.1:9/token"}': "The service account's private_key cannot be read",
    }  # fmt: skip
    for text, expected in cases.items():
        path.write_text(text, encoding="utf-8")
        message = error_of(collect(stream, vertex(), context(), adc_options()))
        assert expected in message, message
        assert "AAAA" not in message


def test_token_endpoint_refusal_is_one_clear_error(
    vertex_env: Path, rsa_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusal = {
        "status": 400,
        "error_body": {"error": "invalid_grant", "error_description": "Invalid JWT Signature."},
    }
    with LLMServer([refusal]) as tokens, LLMServer([]) as gemini:
        token_uri = tokens.base_url + "/token"
        path = service_account_file(vertex_env / "sa.json", rsa_key, token_uri)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.base_url)
        message = error_of(collect(stream, vertex(), context(), adc_options()))
        assert gemini.requests == []  # nothing was sent without a token
    assert message == (
        "Could not get a Google Cloud access token for service account "
        f"piko-test@file-project.iam.gserviceaccount.com from {token_uri} (HTTP 400): "
        "invalid_grant: Invalid JWT Signature."
    )


def test_api_key_is_express_mode(vertex_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LLMServer([{"blocks": [{"text": "express"}]}]) as gemini:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.base_url)
        events = collect(stream, vertex(), context(), StreamOptions(api_key="AQ.vertex-key"))
        request = gemini.requests[0]
    assert events[-1].type == "done"
    assert request["path"] == "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    assert request["headers"]["x-goog-api-key"] == "AQ.vertex-key"
    assert "authorization" not in request["headers"]


def test_models_json_base_url_is_the_collection_root(
    vertex_env: Path, rsa_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        LLMServer([{}]) as tokens,
        LLMServer([{"blocks": [{"text": "a"}]}, {"blocks": [{"text": "b"}]}]) as gemini,
    ):
        path = service_account_file(vertex_env / "sa.json", rsa_key, tokens.base_url + "/token")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
        scoped = f"{gemini.base_url}/v1/projects/proxy-project/locations/asia-east1"
        assert collect(stream, vertex(scoped), context(), adc_options())[-1].type == "done"
        assert collect(stream, vertex(gemini.base_url + "/"), context(), adc_options())[-1].type == "done"
        paths = [r["path"] for r in gemini.requests]
    assert paths == [
        "/v1/projects/proxy-project/locations/asia-east1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
        "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
    ]


def test_default_hosts_by_location() -> None:
    m = vertex()
    assert stream_url(m, project="p", location="us-central1") == (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
        "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert stream_url(m, project="p", location="global").startswith(
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global/"
    )
    assert stream_url(m, project="p", location="eu").startswith(
        "https://aiplatform.eu.rep.googleapis.com/v1/projects/p/locations/eu/"
    )
    assert stream_url(m, project=None, location=None) == (
        "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )


def test_thinking_budgets_are_vertexs() -> None:
    lite = vertex(model_id="gemini-2.5-flash-lite", reasoning=True)
    body = build_body(lite, context(), StreamOptions(reasoning="minimal"), budgets=VERTEX_BUDGETS)
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 128}
    gemini_api = build_body(lite, context(), StreamOptions(reasoning="minimal"))
    assert gemini_api["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 512


def test_pi_print_mode_with_service_account(
    tmp_path: Path, rsa_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole way: catalog model, environment credential chain, token, stream, printed answer."""
    turn = {"blocks": [{"text": "Vertex answered."}]}
    with LLMServer([{"access_token": "ya29.cli"}]) as tokens, LLMServer([turn]) as gemini:
        path = service_account_file(tmp_path / "sa.json", rsa_key, tokens.base_url + "/token")
        clean_environment(
            monkeypatch, tmp_path,
            GOOGLE_APPLICATION_CREDENTIALS=str(path), GOOGLE_CLOUD_PROJECT="cli-project",
            GOOGLE_CLOUD_LOCATION="us-east5", GOOGLE_VERTEX_BASE_URL=gemini.base_url,
        )  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "piko", "--no-session", "--model", "google-vertex/gemini-2.5-flash", "-p", "hi"],
            env=dict(os.environ), capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        requests = gemini.requests
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vertex answered.\n"
    assert requests[0]["path"].startswith(
        "/v1/projects/cli-project/locations/us-east5/publishers/google/models/"
    )
    assert requests[0]["headers"]["authorization"] == "Bearer ya29.cli"
