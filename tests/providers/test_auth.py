"""auth.json (0600, atomic, pi's lock), key resolution order, Anthropic OAuth, `pi login`/`pi logout`."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from support.clean_env import boot_app
from support.clean_env import clean_environment
from support.token_server import TokenServer

from piko.plugins.providers import auth
from piko.plugins.providers import oauth_anthropic
from piko.plugins.providers.auth_storage import AuthStorage
from piko.plugins.providers.auth_storage import AuthStorageError
from piko.plugins.providers.auth_storage import FileLock

CASSETTES = Path("/work/shared/conformance/fixtures/pi_agent_rust/tests/fixtures/vcr")
LOCAL_CASSETTES = (
    Path(__file__).resolve().parents[1] / "fixtures" / "pi_agent_rust" / "tests" / "fixtures" / "vcr"
)
HOUR_MS = 3600 * 1000


def cassette(name: str) -> dict[str, Any]:
    for folder in (CASSETTES, LOCAL_CASSETTES):
        path = folder / f"{name}.json"
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    raise FileNotFoundError(name)


# ---------------------------------------------------------------------------
# A token endpoint on 127.0.0.1
# ---------------------------------------------------------------------------


def replies_of(name: str) -> list[tuple[int, str, str]]:
    response = cassette(name)["interactions"][0]["response"]
    content_type = dict(response["headers"]).get("content-type", "application/json")
    return [(response["status"], content_type, "".join(response["body_chunks"]))]


@pytest.fixture
def token_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    servers: list[TokenServer] = []

    def start(replies: list[tuple[int, str, str]], **kwargs: Any) -> TokenServer:
        server = TokenServer(replies, **kwargs)
        servers.append(server)
        monkeypatch.setenv(oauth_anthropic.TOKEN_URL_ENV, server.url)
        return server

    yield start
    for server in servers:
        server.close()


def write_auth(agent: Path, data: dict[str, Any]) -> Path:
    path = agent / "auth.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.chmod(path, 0o600)
    return path


def now_ms() -> int:
    return int(time.time() * 1000)


# ---------------------------------------------------------------------------
# auth.json storage and its lock
# ---------------------------------------------------------------------------


def test_storage_creates_0600_file_in_0700_dir_and_writes_atomically(tmp_path: Path) -> None:
    path = tmp_path / "new" / "agent" / "auth.json"
    storage = AuthStorage(path)
    assert storage.list() == [] and not path.exists()  # reading creates nothing
    storage.set("openai", {"type": "api_key", "key": "sk-1"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    inode = path.stat().st_ino
    storage.set("groq", {"type": "api_key", "key": "gsk"})
    assert path.stat().st_ino != inode  # replaced by a rename, never rewritten in place
    assert path.read_text(encoding="utf-8") == json.dumps(
        {"openai": {"type": "api_key", "key": "sk-1"}, "groq": {"type": "api_key", "key": "gsk"}}, indent=2
    )
    assert sorted(p.name for p in path.parent.iterdir()) == ["auth.json"]  # no temp file, no lock left
    assert "sk-1" not in repr(storage)


def test_failed_write_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "auth.json"
    storage = AuthStorage(path)
    storage.set("openai", {"type": "api_key", "key": "sk-1"})
    before = path.read_text(encoding="utf-8")

    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(AuthStorageError, match=r"cannot write .*No space left on device"):
        storage.set("groq", {"type": "api_key", "key": "gsk"})
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["auth.json"]


def test_changes_merge_with_what_another_process_wrote(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    ours = AuthStorage(path)
    theirs = AuthStorage(path)
    ours.set("openai", {"type": "api_key", "key": "a"})
    theirs.set("groq", {"type": "api_key", "key": "b"})
    ours.set("xai", {"type": "api_key", "key": "c"})
    assert sorted(json.loads(path.read_text(encoding="utf-8"))) == ["groq", "openai", "xai"]
    assert ours.get("groq") == {"type": "api_key", "key": "b"}  # re-read after the other change
    assert theirs.remove("openai") is True and theirs.remove("openai") is False
    assert ours.get("openai") is None


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    code = (
        "import sys; from piko.plugins.providers.auth_storage import AuthStorage;"
        "s = AuthStorage(sys.argv[1]);"
        "[s.set(f'p{sys.argv[2]}-{i}', {'type': 'api_key', 'key': str(i)}) for i in range(10)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(n)]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    assert len(json.loads(path.read_text(encoding="utf-8"))) == 40


def test_stale_lock_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    lock_dir = tmp_path / "auth.json.lock"  # pi's lock (proper-lockfile): a directory
    lock_dir.mkdir()
    old = time.time() - 31
    os.utime(lock_dir, (old, old))
    storage = AuthStorage(path)
    storage.lock.timeout_s = 0  # no time to wait: a lock still taken would fail at once
    storage.set("openai", {"type": "api_key", "key": "k"})
    assert not lock_dir.exists()
    assert json.loads(path.read_text(encoding="utf-8"))["openai"]["key"] == "k"


def test_fresh_lock_is_waited_for_then_reported(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    lock_dir = tmp_path / "auth.json.lock"
    lock_dir.mkdir()
    storage = AuthStorage(path)
    storage.lock.timeout_s = 0.3
    with pytest.raises(AuthStorageError, match=r"locked by another process .*auth\.json\.lock"):
        storage.set("openai", {"type": "api_key", "key": "k"})
    assert not path.exists()
    threading.Timer(0.2, lock_dir.rmdir).start()  # the other process finishes
    storage.lock.timeout_s = 5
    storage.set("openai", {"type": "api_key", "key": "k"})
    assert storage.get("openai") == {"type": "api_key", "key": "k"}


def test_held_lock_is_kept_fresh(tmp_path: Path) -> None:
    target = tmp_path / "auth.json"
    holder = FileLock(target, stale_s=0.4)
    other = FileLock(target, stale_s=0.4, timeout_s=0.9)
    with holder:
        with pytest.raises(AuthStorageError):
            other.acquire()  # never stale: the holder refreshes the mtime every 0.2 s
    other.acquire()
    other.release()


def test_corrupt_file_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"openai": {"type": "api_key", "key": ', encoding="utf-8")
    storage = AuthStorage(path)
    assert storage.get("openai") is None
    assert storage.load_error is not None and "not valid JSON" in storage.load_error
    with pytest.raises(AuthStorageError, match="not valid JSON"):
        storage.set("groq", {"type": "api_key", "key": "k"})
    assert path.read_text(encoding="utf-8") == '{"openai": {"type": "api_key", "key": '


# ---------------------------------------------------------------------------
# Resolution order
# ---------------------------------------------------------------------------


RESOLVER = """
from piko import hookimpl

@hookimpl
def piko_resolve_api_key(provider, app):
    return "from-resolver" if provider in ("corp", "anthropic") else None
"""


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="from-env", OPENAI_API_KEY="from-env")
    (agent / "models.json").write_text(json.dumps({"providers": {
        "corp": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": "from-models-json",
                 "models": [{"id": "m"}]},
        "other": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": "from-models-json",
                  "models": [{"id": "m"}]},
    }}), encoding="utf-8")  # fmt: skip
    resolver = tmp_path / "resolver.py"
    resolver.write_text(RESOLVER, encoding="utf-8")
    write_auth(agent, {
        "openai": {"type": "api_key", "key": "from-auth-json"},
        "other": {"type": "api_key", "key": "OTHER_KEY_VAR"},
        "groq": {"type": "api_key", "key": "!printf from-command"},
        "anthropic": {"type": "oauth", "refresh": "r", "access": "from-oauth", "expires": now_ms() + HOUR_MS},
    })  # fmt: skip
    monkeypatch.setenv("OTHER_KEY_VAR", "from-variable-named-in-auth-json")
    registry = boot_app(tmp_path, extensions=[str(resolver)]).model_registry
    assert registry.api_key("openai") == "from-auth-json"  # 1. auth.json key beats the environment
    assert registry.api_key("anthropic") == "from-oauth"  # 2. OAuth token beats env and resolvers
    assert registry.api_key("other") == "from-variable-named-in-auth-json"
    assert registry.api_key("groq") == "from-command"
    assert registry.api_key("corp") == "from-resolver"  # 4. a plugin's resolver beats models.json apiKey
    auth.get_storage(registry.app).remove("anthropic")
    assert registry.api_key("anthropic") == "from-env"  # 3. the environment beats resolvers
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert registry.api_key("anthropic") == "from-resolver"
    registry.runtime_api_keys["openai"] = "from-flag"
    assert registry.api_key("openai") == "from-flag"  # --api-key beats everything
    assert registry.api_key("xai") is None


def test_availability_checks_run_no_command_and_no_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token_server: Any
) -> None:
    server = token_server(
        [(200, "application/json", '{"access_token": "new", "refresh_token": "r2", "expires_in": 3600}')]
    )
    agent = clean_environment(monkeypatch, tmp_path)
    monkeypatch.setenv(oauth_anthropic.TOKEN_URL_ENV, server.url)
    marker = tmp_path / "ran"
    write_auth(agent, {
        "groq": {"type": "api_key", "key": f"!touch {marker} && printf k"},
        "anthropic": {"type": "oauth", "refresh": "r", "access": "old", "expires": 1},
    })  # fmt: skip
    registry = boot_app(tmp_path).model_registry
    assert {m.provider for m in registry.available_models()} == {"groq", "anthropic"}
    assert not marker.exists() and server.requests == []
    assert registry.api_key("groq") == "k" and marker.exists()
    assert registry.api_key("anthropic") == "new" and len(server.requests) == 1


def test_missing_key_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path)
    registry = boot_app(tmp_path).model_registry
    first = registry.missing_key_message("anthropic").splitlines()[0]
    assert first == "No API key found for anthropic. Set ANTHROPIC_API_KEY, or run /login."
    assert (
        registry.missing_key_message("github-copilot")
        .splitlines()[0]
        .endswith("Set COPILOT_GITHUB_TOKEN, or run /login.")
    )


# ---------------------------------------------------------------------------
# Anthropic OAuth against a token endpoint on 127.0.0.1
# ---------------------------------------------------------------------------


def expired_oauth(agent: Path, refresh: str = "refresh-old") -> Path:
    return write_auth(agent, {
        "anthropic": {"type": "oauth", "refresh": refresh, "access": "access-old", "expires": now_ms() - 1000},
        "openai": {"type": "api_key", "key": "keep-me"},
    })  # fmt: skip


def test_refresh_on_expiry_success_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token_server: Any
) -> None:
    agent = clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="not-used")
    server = token_server(replies_of("oauth_refresh_success"))
    path = expired_oauth(agent)
    registry = boot_app(tmp_path).model_registry
    before = now_ms()
    assert registry.api_key("anthropic") == "new-access-success"
    recorded = cassette("oauth_refresh_success")["interactions"][0]["request"]
    assert len(server.requests) == 1
    sent = server.requests[0]
    assert sent["body"] == {**recorded["body"], "refresh_token": "refresh-old"}
    assert sent["headers"]["Content-Type"] == "application/json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["openai"] == {"type": "api_key", "key": "keep-me"}
    assert stored["anthropic"]["type"] == "oauth"
    assert (stored["anthropic"]["access"], stored["anthropic"]["refresh"]) == (
        "new-access-success",
        "new-refresh-success",
    )
    expected = before + 3600 * 1000 - 5 * 60 * 1000
    assert expected - 100 <= stored["anthropic"]["expires"] <= expected + 5000
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (
        registry.api_key("anthropic") == "new-access-success" and len(server.requests) == 1
    )  # no second refresh


@pytest.mark.parametrize(
    ("name", "status"),
    [("oauth_refresh_expired", 400), ("oauth_refresh_invalid", 401), ("oauth_refresh_network_failure", 503)],
)
def test_refresh_failures_from_cassettes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token_server: Any, name: str, status: int
) -> None:
    agent = clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="env-key-not-used-for-oauth")
    server = token_server(replies_of(name))
    path = expired_oauth(agent)
    before = path.read_text(encoding="utf-8")
    registry = boot_app(tmp_path).model_registry
    assert registry.api_key("anthropic") is None  # as pi: /login is the way out, not the env key
    assert len(server.requests) == 1 and server.requests[0]["body"]["grant_type"] == "refresh_token"
    assert path.read_text(encoding="utf-8") == before  # credentials kept for a later retry
    [message] = [
        d for d in registry.diagnostics if d.startswith("Failed to refresh OAuth token for anthropic")
    ]
    assert f"status={status}" in message and "refresh-old" not in message
    assert registry.has_auth("anthropic")  # still configured: pi lists it and says to log in again


def test_refresh_network_failure_without_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv(oauth_anthropic.TOKEN_URL_ENV, f"http://127.0.0.1:{port}/v1/oauth/token")
    expired_oauth(agent)
    registry = boot_app(tmp_path).model_registry
    assert registry.api_key("anthropic") is None
    assert any("request failed" in d for d in registry.diagnostics)


def test_failed_refresh_uses_what_another_process_refreshed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token_server: Any
) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    path = expired_oauth(agent)

    def another_process_refreshes(_request: dict[str, Any]) -> None:
        fresh = {
            "anthropic": {"type": "oauth", "refresh": "r9", "access": "theirs", "expires": now_ms() + HOUR_MS}
        }
        path.write_text(json.dumps(fresh), encoding="utf-8")

    token_server(replies_of("oauth_refresh_invalid"), on_request=another_process_refreshes)
    registry = boot_app(tmp_path).model_registry
    assert registry.api_key("anthropic") == "theirs"


def test_concurrent_refreshes_refresh_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token_server: Any
) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    server = token_server(replies_of("oauth_refresh_success"), delay_s=0.3)
    expired_oauth(agent)
    code = (
        "import json, sys; from piko.app.application import App;"
        "app = App(cwd=sys.argv[1]).boot();"
        "print(app.model_registry.api_key('anthropic'))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert outputs == ["new-access-success"] * 3
    assert len(server.requests) == 1  # the others waited for the lock and found a fresh token


def test_pkce_and_authorize_url() -> None:
    verifier, challenge = oauth_anthropic.generate_pkce()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", verifier)
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == digest
    parts = urlsplit(oauth_anthropic.authorize_url(challenge, verifier))
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://claude.ai/oauth/authorize"
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert query == {
        "code": "true",
        "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
        "response_type": "code",
        "redirect_uri": "http://localhost:53692/callback",
        "scope": "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": verifier,
    }


def test_parse_authorization_input() -> None:
    parse = oauth_anthropic.parse_authorization_input
    assert parse("http://localhost:53692/callback?code=abc&state=xyz") == ("abc", "xyz")
    assert parse("abc#xyz") == ("abc", "xyz")
    assert parse("code=abc&state=xyz") == ("abc", "xyz")
    assert parse("  abc  ") == ("abc", None)
    assert parse("") == (None, None)


def test_code_exchange(token_server: Any) -> None:
    server = token_server(
        [(200, "application/json", '{"access_token": "at", "refresh_token": "rt", "expires_in": 100}')]
    )
    before = now_ms()
    creds = oauth_anthropic.exchange_code("the-code", "the-state", "the-verifier")
    assert server.requests[0]["body"] == {
        "grant_type": "authorization_code",
        "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
        "code": "the-code",
        "state": "the-state",
        "redirect_uri": "http://localhost:53692/callback",
        "code_verifier": "the-verifier",
    }
    assert (creds["access"], creds["refresh"]) == ("at", "rt")
    assert before + 100_000 - 300_000 - 10 <= creds["expires"] <= now_ms() + 100_000 - 300_000


def test_token_errors_are_clear(token_server: Any) -> None:
    token_server([(200, "application/json", "not json")])
    with pytest.raises(oauth_anthropic.OAuthError, match="returned invalid JSON"):
        oauth_anthropic.refresh_token("r")


def test_login_through_the_callback_server(token_server: Any) -> None:
    server = token_server(
        [(200, "application/json", '{"access_token": "at", "refresh_token": "rt", "expires_in": 3600}')]
    )
    seen: dict[str, str] = {}

    def on_auth(url: str, instructions: str) -> None:
        seen["url"] = url

    def browser(srv: Any) -> None:
        state = parse_qs(urlsplit(seen["url"]).query)["state"][0]
        seen["state"] = state
        with urllib.request.urlopen(
            f"http://127.0.0.1:{srv.port}/callback?code=cb-code&state={state}"
        ) as reply:
            seen["page"] = reply.read().decode()

    def wait_for_input(srv: Any) -> None:
        threading.Thread(target=browser, args=(srv,)).start()
        srv.done.wait(10)
        return None

    creds = oauth_anthropic.login(on_auth, lambda _m: "", wait_for_input=wait_for_input, callback_port=0)
    assert creds["access"] == "at"
    body = server.requests[0]["body"]
    assert (body["code"], body["state"], body["code_verifier"]) == ("cb-code", seen["state"], seen["state"])
    assert "completed" in seen["page"]


def test_login_by_pasting_and_state_mismatch(token_server: Any) -> None:
    server = token_server(
        [(200, "application/json", '{"access_token": "at", "refresh_token": "rt", "expires_in": 3600}')]
    )
    urls: list[str] = []
    creds = oauth_anthropic.login(
        lambda url, _i: urls.append(url), lambda _m: "pasted-code", use_callback_server=False
    )
    state = parse_qs(urlsplit(urls[0]).query)["state"][0]
    assert creds["access"] == "at"
    assert (server.requests[0]["body"]["code"], server.requests[0]["body"]["state"]) == ("pasted-code", state)
    with pytest.raises(oauth_anthropic.OAuthError, match="state mismatch"):
        oauth_anthropic.login(lambda _u, _i: None, lambda _m: "code#wrong-state", use_callback_server=False)


def test_plugin_oauth_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extension = tmp_path / "sso.py"
    extension.write_text('''
def activate(pi):
    pi.register_provider("corp-sso", base_url="http://127.0.0.1:9/v1", api="openai-completions",
        oauth={"name": "Corp SSO",
               "login": lambda **cb: {"refresh": "r", "access": "sso-1", "expires": 1},
               "refresh_token": lambda c: {"refresh": "r2", "access": "sso-2", "expires": 4102444800000}},
        models=[{"id": "m"}])
''', encoding="utf-8")  # fmt: skip
    clean_environment(monkeypatch, tmp_path)
    app = boot_app(tmp_path, extensions=[str(extension)])
    path = auth.login_oauth("corp-sso", app)
    assert json.loads(path.read_text(encoding="utf-8"))["corp-sso"]["access"] == "sso-1"
    assert app.model_registry.api_key("corp-sso") == "sso-2"  # expired: refreshed by the plugin
    assert [p.id for p in auth.oauth_providers(app)] == ["anthropic", "corp-sso"]


# ---------------------------------------------------------------------------
# pi login / pi logout
# ---------------------------------------------------------------------------


def run_pi(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piko", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_login_and_logout_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    env = dict(os.environ)
    done = run_pi(["login", "openai", "--api-key"], env, stdin="sk-typed-secret\n")
    assert done.returncode == 0, done.stderr
    path = agent / "auth.json"
    assert f"Saved API key for OpenAI. Credentials saved to {path}" in done.stdout
    assert "sk-typed-secret" not in done.stdout + done.stderr
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "openai": {"type": "api_key", "key": "sk-typed-secret"}
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    listed = run_pi(["--list-models", "gpt-4o-mini"], env)
    assert "openai    gpt-4o-mini" in listed.stderr

    done = run_pi(["login", "openai", "--api-key"], env, stdin="\n")
    assert (
        done.returncode == 1 and "Failed to save API key for OpenAI: API key cannot be empty." in done.stderr
    )

    done = run_pi(["logout", "openai"], env)
    assert done.returncode == 0
    assert (
        "Removed stored API key for OpenAI. Environment variables and models.json config are unchanged."
        in done.stdout
    )
    assert json.loads(path.read_text(encoding="utf-8")) == {}
    done = run_pi(["logout"], env)
    assert "No stored credentials to remove." in done.stdout


def test_login_asks_for_provider_and_method(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    done = run_pi(["login"], dict(os.environ), stdin="anthropic\n2\nsk-ant-typed\n")
    assert done.returncode == 0, done.stderr
    assert "anthropic" in done.stdout and "Saved API key for Anthropic." in done.stdout
    assert json.loads((agent / "auth.json").read_text(encoding="utf-8"))["anthropic"]["key"] == "sk-ant-typed"
    done = run_pi(["login", "no-such-provider", "--api-key"], dict(os.environ))
    assert done.returncode == 1 and "Unknown provider: no-such-provider" in done.stderr


def test_login_oauth_by_pasting_the_redirect_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token_server: Any
) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    server = token_server(
        [
            (
                200,
                "application/json",
                '{"access_token": "cli-at", "refresh_token": "cli-rt", "expires_in": 3600}',
            )
        ]
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "piko", "login", "anthropic", "--oauth"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not url:
        line = proc.stdout.readline()
        if "https://claude.ai/oauth/authorize?" in line:
            url = line.strip()
    state = parse_qs(urlsplit(url).query)["state"][0]
    proc.stdin.write(f"http://localhost:53692/callback?code=pasted&state={state}\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert f"Logged in to Anthropic (Claude Pro/Max). Credentials saved to {agent / 'auth.json'}" in out
    assert server.requests[0]["body"]["code"] == "pasted"
    stored = json.loads((agent / "auth.json").read_text(encoding="utf-8"))["anthropic"]
    assert (stored["type"], stored["access"], stored["refresh"]) == ("oauth", "cli-at", "cli-rt")
    done = run_pi(["logout", "anthropic"], dict(os.environ))
    assert "Logged out of Anthropic (Claude Pro/Max)" in done.stdout
