"""/login and /logout: API keys and Anthropic OAuth (a token endpoint on 127.0.0.1), stored in auth.json (0600)."""

from __future__ import annotations

import json
import stat
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from icmd_harness import WAIT
from icmd_harness import label
from icmd_harness import plain
from support.token_server import TokenServer

from piko.plugins.modes.interactive.commands.login import NO_STORED
from piko.plugins.modes.interactive.commands.login import PASTE_PROMPT
from piko.plugins.modes.interactive.commands.models import ANTHROPIC_SUBSCRIPTION_AUTH_WARNING

TOKEN_URL_ENV = "PIKO_ANTHROPIC_TOKEN_URL"


FRESH_TOKENS = json.dumps(
    {"access_token": "sk-ant-oat01-access", "refresh_token": "refresh-1", "expires_in": 3600}
)


@pytest.fixture
def token_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[TokenServer]:
    server = TokenServer([(200, "application/json", FRESH_TOKENS)])
    monkeypatch.setenv(TOKEN_URL_ENV, server.url)
    yield server
    server.close()


def auth_file(world: Any) -> dict[str, Any]:
    path = world.agent_dir / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_api_key_login_through_the_selectors(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.extend([label("Use an API key"), label("Groq")])
        ctx.ui.script("input", "  gsk-secret  ")
        await ctx.run("/login")
        return session, ctx

    session, ctx = run(scenario())
    method_title, method_items, _ = ctx.pick_calls[0]
    assert method_title == "Select authentication method:"
    assert [i.label for i in method_items] == ["Use a subscription", "Use an API key"]
    title, items, _ = ctx.pick_calls[1]
    assert title == "Select provider to configure:"
    rows = {i.label: i.detail for i in items}
    assert rows["Groq"] == "• unconfigured"
    assert rows["mock"] == "✓ key in models.json"
    assert "GitHub Copilot" not in rows  # OAuth only
    assert [i.label for i in items] == sorted((i.label for i in items), key=str.lower)
    kind, title, opts = ctx.ui.calls[0]
    assert (kind, title, opts) == ("input", "Login to Groq\nEnter API key:", {"password": True})
    assert auth_file(world) == {"groq": {"type": "api_key", "key": "gsk-secret"}}
    assert ctx.texts("info") == [
        f"Saved API key for Groq. Credentials saved to {world.agent_dir / 'auth.json'}"
    ]
    assert session.model_registry.has_auth("groq")
    assert session.model_registry.api_key("groq") == "gsk-secret"
    assert session.model.id == "mock-1"  # a model was chosen already: it stays


def test_api_key_login_by_name_selects_the_default_model_when_none_is_chosen(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session()
        session.model = None
        ctx = world.context(session)
        ctx.ui.script("input", "gsk-2")
        await ctx.run("/login groq")
        return session, ctx

    session, ctx = run(scenario())
    assert not ctx.pick_calls
    assert session.model is not None and (session.model.provider, session.model.id) == (
        "groq",
        "openai/gpt-oss-120b",
    )
    path = world.agent_dir / "auth.json"
    assert ctx.texts("info") == [
        f"Saved API key for Groq. Selected openai/gpt-oss-120b. Credentials saved to {path}"
    ]
    assert world.settings()["defaultProvider"] == "groq"


def test_api_key_login_refusals(world, run) -> None:
    async def scenario() -> Any:
        _session, ctx = await world.session_with_context()
        ctx.ui.script("input", "   ", None)
        await ctx.run("/login groq")
        await ctx.run("/login groq")  # cancelled: nothing said
        await ctx.run("/login no-such-provider")
        ctx.picks.extend([label("Use an API key"), None, None])  # back from the providers to the methods
        await ctx.run("/login")
        return ctx

    ctx = run(scenario())
    assert ctx.texts("error") == [
        "Failed to save API key for Groq: API key cannot be empty.",
        "Unknown provider: no-such-provider (see /model and models.json)",
    ]
    assert not (world.agent_dir / "auth.json").exists()
    assert [c[0] for c in ctx.pick_calls] == [
        "Select authentication method:",
        "Select provider to configure:",
        "Select authentication method:",
    ]


def test_oauth_login_with_the_pasted_code(world, run, token_server: TokenServer) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.append(label("Use a subscription"))
        ctx.ui.script("input", "the-code")
        await ctx.run("/login anthropic")
        return session, ctx

    session, ctx = run(scenario())
    shown = plain(ctx.output[0][1])
    assert shown.startswith("Login to Anthropic (Claude Pro/Max)")
    assert "https://claude.ai/oauth/authorize?" in shown
    assert "paste the final redirect URL here" in shown
    assert ctx.ui.calls[0][1] == PASTE_PROMPT and "signal" in ctx.ui.calls[0][2]
    [body] = token_server.bodies
    assert body["grant_type"] == "authorization_code" and body["code"] == "the-code"
    credential = auth_file(world)["anthropic"]
    assert credential["type"] == "oauth" and credential["access"] == "sk-ant-oat01-access"
    assert credential["refresh"] == "refresh-1"
    infos = ctx.texts("info")
    assert infos[0] == "Exchanging authorization code for tokens..."
    assert (
        infos[-1]
        == f"Logged in to Anthropic (Claude Pro/Max). Credentials saved to {world.agent_dir / 'auth.json'}"
    )
    assert session.model_registry.api_key("anthropic") == "sk-ant-oat01-access"


def test_oauth_login_completed_in_the_browser(world, run, token_server: TokenServer) -> None:
    answered: list[int] = []

    def browser(renderable: Any) -> None:
        text = plain(renderable)
        url = next(word for word in text.split() if word.startswith("https://claude.ai/oauth/authorize?"))
        query = parse_qs(urlsplit(url).query)
        redirect = urlsplit(query["redirect_uri"][0])
        target = (
            f"http://127.0.0.1:{redirect.port}{redirect.path}?code=browser-code&state={query['state'][0]}"
        )

        def visit() -> None:
            with urllib.request.urlopen(target, timeout=10) as response:
                answered.append(response.status)

        threading.Thread(target=visit, daemon=True).start()

    async def scenario() -> Any:
        session = await world.session()
        session.model = None
        ctx = world.context(session)
        ctx.on_show = browser
        ctx.picks.append(label("Use a subscription"))
        ctx.ui.script("input", WAIT)  # the paste dialog stays open until the browser completes
        await ctx.run("/login anthropic")
        return session, ctx

    session, ctx = run(scenario())
    assert answered == [200]
    [body] = token_server.bodies
    assert body["code"] == "browser-code"
    assert auth_file(world)["anthropic"]["type"] == "oauth"
    # no model was chosen before: anthropic's default model is selected now
    assert (session.model.provider, session.model.id) == ("anthropic", "claude-opus-4-7")
    path = world.agent_dir / "auth.json"
    assert ctx.texts("info")[-1] == (
        f"Logged in to Anthropic (Claude Pro/Max). Selected claude-opus-4-7. Credentials saved to {path}"
    )
    # pi's warning about subscription auth, once
    assert ctx.ui.notices == [("warning", ANTHROPIC_SUBSCRIPTION_AUTH_WARNING)]


def test_oauth_login_cancelled(world, run, token_server: TokenServer) -> None:
    async def scenario() -> Any:
        _session, ctx = await world.session_with_context()
        ctx.picks.append(label("Use a subscription"))
        ctx.ui.script("input", None)
        await ctx.run("/login anthropic")
        return ctx

    ctx = run(scenario())
    assert ctx.texts("info") == ["Login cancelled"]
    assert not ctx.texts("error")
    assert token_server.bodies == []
    assert not (world.agent_dir / "auth.json").exists()


def test_logout(world, run) -> None:
    (world.agent_dir / "auth.json").write_text(
        json.dumps(
            {
                "groq": {"type": "api_key", "key": "gsk"},
                "anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1},
            }
        ),
        encoding="utf-8",
    )
    (world.agent_dir / "auth.json").chmod(0o600)

    async def scenario() -> Any:
        _session, ctx = await world.session_with_context()
        ctx.picks.append(label("Groq"))
        await ctx.run("/logout")
        await ctx.run("/logout openai")
        await ctx.run("/logout anthropic")
        await ctx.run("/logout")
        return ctx

    ctx = run(scenario())
    title, items, _ = ctx.pick_calls[0]
    assert title == "Select provider to logout:"
    assert [(i.label, i.detail) for i in items] == [("Anthropic", "subscription"), ("Groq", "API key")]
    assert ctx.texts("info") == [
        "Removed stored API key for Groq. Environment variables and models.json config are unchanged.",
        "Logged out of Anthropic",
        NO_STORED,
    ]
    assert ctx.texts("error") == ["No stored credentials for openai."]
    assert auth_file(world) == {}


def test_login_without_the_auth_plugin(world, run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIKO_DISABLE_PLUGINS", "providers.faux,providers.auth")

    async def scenario() -> Any:
        _session, ctx = await world.session_with_context()
        await ctx.run("/login")
        await ctx.run("/logout")
        return ctx

    ctx = run(scenario())
    message = "Logins are not available: the providers.auth plugin is blocked or missing (see `pi plugins`)"
    assert ctx.texts("error") == [message, message]


class VaultStore:
    """A credential store kept in memory, as a company vault plugin would offer one."""

    def __init__(self) -> None:
        self.saved: dict[str, dict[str, Any]] = {}

    def auth_path(self) -> str:
        return "vault://team"

    def get_storage(self) -> Any:
        return self.saved

    def oauth_providers(self) -> list[Any]:
        return []

    def save_api_key(self, provider: str, key: str) -> str:
        self.saved[provider] = {"type": "api_key", "key": key}
        return "vault://team"

    def login_oauth(self, provider: str, **callbacks: Any) -> str:
        raise ValueError("no OAuth in the vault")

    def logout(self, provider: str) -> dict[str, Any] | None:
        return self.saved.pop(provider, None)


def test_a_plugin_may_keep_credentials_elsewhere(world, run) -> None:
    from piko import hookimpl

    vault = VaultStore()

    class VaultPlugin:
        @hookimpl(tryfirst=True)
        def piko_credential_store(self, app: Any) -> VaultStore:
            return vault

    async def scenario() -> Any:
        session = await world.session()
        session.app.pm.register(VaultPlugin(), name="vault")
        ctx = world.context(session)
        ctx.ui.script("input", "gsk-from-vault")
        await ctx.run("/login groq")
        return ctx

    ctx = run(scenario())
    assert vault.saved == {"groq": {"type": "api_key", "key": "gsk-from-vault"}}
    assert not (world.agent_dir / "auth.json").exists()  # auth.json was not used
    assert ctx.texts("info") == ["Saved API key for Groq. Credentials saved to vault://team"]
