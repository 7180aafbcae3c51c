"""``pi login [provider]`` and ``pi logout [provider]``: store an API key or sign in with OAuth.

``pi login`` asks for the provider when none is named, and for the way to sign in when the
provider offers OAuth (``--oauth`` / ``--api-key`` choose without asking). An API key is read
hidden and stored in ``auth.json``; the OAuth flow prints the URL to open and waits for the
browser's redirect or for the pasted code or redirect URL. Messages are pi's ``/login`` ones.
"""

from __future__ import annotations

import select
import sys
import time
from typing import Any

import click

OAUTH_WAIT_S = 600.0


def _app(ctx_obj: Any) -> Any:
    if ctx_obj is not None:
        return ctx_obj
    from piko.app.application import App

    return App().boot()


def _provider_names(app: Any) -> list[tuple[str, str, bool]]:
    """``(id, display name, offers OAuth)`` of every provider one may sign in to."""
    from piko.plugins.providers.auth import oauth_providers

    oauth_ids = {p.id for p in oauth_providers(app)}
    registry = app.model_registry.load()
    rows = [(name, registry.display_name(name), name in oauth_ids) for name in registry.providers]
    known = {row[0] for row in rows}
    rows += [(p.id, p.name, True) for p in oauth_providers(app) if p.id not in known]
    return sorted(rows)


def _choose_provider(app: Any, names: list[tuple[str, str, bool]]) -> str:
    click.echo("Providers:")
    for name, display, has_oauth in names:
        click.echo(f"  {name:<28}{display}{'  (OAuth or API key)' if has_oauth else ''}")
    choice: str = click.prompt("Provider", type=click.Choice([n for n, _d, _o in names]), show_choices=False)
    return choice


def _read_pasted(server: Any) -> str | None:
    """Wait for a pasted line on stdin or for the browser's redirect, whichever comes first."""
    prompt = "Paste the authorization code or full redirect URL (or finish in the browser): "
    click.echo(prompt, nl=False)
    deadline = time.monotonic() + OAUTH_WAIT_S
    stdin_open = True
    while time.monotonic() < deadline:
        if server.done.is_set():
            click.echo("")
            return None
        if not stdin_open:
            server.done.wait(0.2)
            continue
        try:
            ready, _w, _x = select.select([sys.stdin], [], [], 0.2)
        except (OSError, ValueError):
            line = sys.stdin.readline()
            return line.strip() or None
        if ready:
            line = sys.stdin.readline()
            if line == "":
                stdin_open = False  # end of input: only the browser can finish now
                continue
            if line.strip():
                return line.strip()
    return None


def _oauth_login(app: Any, provider: str) -> int:
    from piko.plugins.providers.auth import login_oauth
    from piko.plugins.providers.auth import oauth_provider

    oauth = oauth_provider(provider, app)
    name = oauth.name

    def on_auth(url: str, instructions: str) -> None:
        click.echo(f"Open this URL in your browser to sign in to {name}:\n\n  {url}\n\n{instructions}")

    def on_prompt(message: str) -> str:
        value: str = click.prompt(message, default="", show_default=False)
        return value

    def on_progress(message: str) -> None:
        click.echo(message)

    callbacks: dict[str, Any] = {"on_auth": on_auth, "on_prompt": on_prompt, "on_progress": on_progress}
    if getattr(oauth, "uses_callback_server", False):
        callbacks["wait_for_input"] = _read_pasted
    try:
        path = login_oauth(provider, app, **callbacks)
    except Exception as exc:
        click.echo(f"Login failed: {exc}", err=True)
        return 1
    click.echo(f"Logged in to {name}. Credentials saved to {path}")
    return 0


def _api_key_login(app: Any, provider: str) -> int:
    from piko.plugins.providers.auth import save_api_key

    name = app.model_registry.display_name(provider)
    key: str = click.prompt("Enter API key", hide_input=True, default="", show_default=False)
    try:
        path = save_api_key(provider, key, app)
    except Exception as exc:
        click.echo(f"Failed to save API key for {name}: {exc}", err=True)
        return 1
    click.echo(f"Saved API key for {name}. Credentials saved to {path}")
    return 0


@click.command(
    "login", help="Sign in to PROVIDER: with OAuth (Claude Pro/Max for anthropic) or a stored API key."
)
@click.argument("provider", required=False)
@click.option("--oauth", "method", flag_value="oauth", help="Sign in with OAuth (subscription)")
@click.option("--api-key", "method", flag_value="api_key", help="Store an API key (read hidden)")
@click.option(
    "--no-browser", is_flag=True, help="Do not open a browser (piko never does: it prints the URL to open)"
)
@click.pass_obj
def login_command(obj: Any, provider: str | None, method: str | None, no_browser: bool) -> int:
    if no_browser and method == "api_key":
        click.echo("Error: --no-browser cannot be used with --api-key", err=True)
        return 1
    app = _app(obj)
    names = _provider_names(app)
    if provider is None:
        provider = _choose_provider(app, names)
    has_oauth = any(n == provider and o for n, _d, o in names)
    if provider not in {n for n, _d, _o in names}:
        click.echo(f"Unknown provider: {provider} (see `pi --list-models` and models.json)", err=True)
        return 1
    if method == "oauth" and not has_oauth:
        click.echo(f"{provider} has no OAuth login; use `pi login {provider} --api-key`", err=True)
        return 1
    if method is None and has_oauth:
        choice = click.prompt(
            "Sign in with\n  1. a subscription (OAuth)\n  2. an API key\nChoice",
            type=click.Choice(["1", "2"]),
            default="1",
            show_choices=False,
        )
        method = "oauth" if choice == "1" else "api_key"
    return _oauth_login(app, provider) if method == "oauth" else _api_key_login(app, provider)


@click.command("logout", help="Remove the credentials `pi login` or /login stored for PROVIDER.")
@click.argument("provider", required=False)
@click.pass_obj
def logout_command(obj: Any, provider: str | None) -> int:
    from piko.plugins.providers.auth import get_storage
    from piko.plugins.providers.auth import logout
    from piko.plugins.providers.auth import oauth_provider

    app = _app(obj)
    stored = get_storage(app).list()
    if not stored:
        click.echo(
            "No stored credentials to remove. `pi logout` only removes credentials saved by `pi login` or /login; "
            "environment variables and models.json config are unchanged."
        )
        return 0 if provider is None else 1
    if provider is None:
        click.echo("Stored credentials: " + ", ".join(stored))
        provider = click.prompt("Provider", type=click.Choice(stored), show_choices=False)
    removed = logout(provider, app)
    if removed is None:
        click.echo(f"No stored credentials for {provider}.", err=True)
        return 1
    if removed.get("type") == "oauth":
        oauth = oauth_provider(provider, app)
        click.echo(f"Logged out of {oauth.name if oauth is not None else provider}")
    else:
        name = app.model_registry.display_name(provider)
        click.echo(
            f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    return 0


__all__ = ["login_command", "logout_command"]
