"""``pi auth``: pi 1.6's credential commands (``login``, ``logout``, ``check``, ``print-api-key``,
``print-bearer-token``), working outside a session so that scripts and agents can call them.

``check`` prints ``ready``, ``not_ready`` or ``invalid`` and exits 0, 1 or 2 (``--json`` for the
structured result, ``--credentials`` to include the credential when ready, ``--no-refresh`` to
leave expired OAuth tokens as they are). ``print-bearer-token`` refreshes an OAuth token whose
remaining life is shorter than ``--min-expiry`` (``30m``, ``90s``, ``1h``, ``500ms``). Errors
are one ``Error: ...`` line on stderr and exit status 1; secrets go to stdout only when asked for.
"""

from __future__ import annotations

import re
from typing import Any

import click

from piko.lib import jsonio
from piko.plugins.providers.login_command import _app
from piko.plugins.providers.login_command import login_command

READY, NOT_READY, INVALID = "ready", "not_ready", "invalid"
EXIT = {READY: 0, NOT_READY: 1, INVALID: 2}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


def parse_duration_ms(text: str) -> int:
    """``30m`` -> 1800000; raises ``click.BadParameter`` for anything else."""
    match = _DURATION.match(text)
    if match is None:
        raise click.BadParameter(f"{text!r} is not a duration such as 500ms, 90s, 30m or 1h")
    return int(float(match.group(1)) * _UNIT_MS[match.group(2)])


def _fail(message: str, code: int = 1) -> int:
    click.echo(f"Error: {message}", err=True)
    return code


def _provider_of(app: Any, provider: str | None, model: str | None) -> str:
    """The provider ``--provider``/``--model`` name; raises ``click.UsageError`` when neither does."""
    if model:
        from piko.models.resolver import ModelResolutionError
        from piko.models.resolver import resolve_cli_model

        try:
            found, _level, _warning = resolve_cli_model(app.model_registry.load(), provider, model)
        except ModelResolutionError as exc:
            raise click.UsageError(str(exc)) from None
        if found is None:
            raise click.UsageError(f"No model matches {model!r}")
        return str(found.provider)
    if provider:
        return provider
    raise click.UsageError("Auth checks require --provider <provider> or --model <model>")


def _known(app: Any, provider: str) -> bool:
    from piko.plugins.providers.auth import get_storage
    from piko.plugins.providers.auth import oauth_provider

    registry = app.model_registry.load()
    return (
        registry.provider(provider) is not None
        or get_storage(app).has(provider)
        or oauth_provider(provider, app) is not None
    )


def resolve_status(app: Any, provider: str, *, refresh: bool = True) -> dict[str, Any]:
    """pi's ``auth check`` result for ``provider``: ``status``, ``provider``, ``authType`` or ``reason``
    (and, for ``credentials``, the key under ``_key``)."""
    from piko.plugins.providers.auth import command_error
    from piko.plugins.providers.auth import get_storage
    from piko.plugins.providers.auth import oauth_provider
    from piko.plugins.providers.auth import refresh_oauth
    from piko.plugins.providers.oauth_anthropic import now_ms

    if not _known(app, provider):
        return {"status": NOT_READY, "provider": provider, "reason": "provider_not_found"}
    stored = get_storage(app).get(provider)
    if isinstance(stored, dict) and stored.get("type") == "oauth":
        expired = now_ms() >= int(stored.get("expires") or 0)
        if oauth_provider(provider, app) is None:
            return {
                "status": INVALID,
                "provider": provider,
                "authType": "oauth",
                "reason": "unknown_oauth_provider",
            }
        if expired and not refresh:
            return {"status": NOT_READY, "provider": provider, "authType": "oauth", "reason": "token_expired"}
        try:
            key = (
                refresh_oauth(provider, app) if expired else oauth_provider(provider, app).get_api_key(stored)
            )
        except Exception as exc:
            return {"status": INVALID, "provider": provider, "authType": "oauth", "reason": "refresh_failed",
                    "error": f"Failed to refresh OAuth token for {provider}: {exc}"}  # fmt: skip
        return {"status": READY, "provider": provider, "authType": "oauth", "_key": key}
    key = app.model_registry.api_key(provider, interactive=False)
    if key:
        return {"status": READY, "provider": provider, "authType": "api_key", "_key": key}
    error = command_error(app, provider)
    if error is not None:
        return {"status": INVALID, "provider": provider, "authType": "api_key", "reason": "command_failed",
                "error": error}  # fmt: skip
    return {"status": NOT_READY, "provider": provider, "reason": "credentials_not_configured"}


@click.group(
    "auth", help="Credentials outside a session: login, logout, check, print-api-key, print-bearer-token."
)
def auth_command() -> None:
    """The ``pi auth`` group."""


auth_command.add_command(login_command, "login")


@auth_command.command(
    "logout", help="Remove the credentials `pi auth login` or /login stored (exit 0 when none)."
)
@click.argument("provider")
@click.pass_obj
def logout(obj: Any, provider: str) -> int:
    from piko.plugins.providers.auth import logout as remove

    app = _app(obj)
    removed = remove(provider, app)
    name = app.model_registry.display_name(provider)
    if removed is None:
        click.echo(
            f"No stored credentials for {provider}. Environment variables and models.json config are unchanged."
        )
    elif removed.get("type") == "oauth":
        click.echo(f"Logged out of {name}")
    else:
        click.echo(
            f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    return 0


_provider_option = click.option("--provider", help="Resolve credentials for a provider")
_model_option = click.option(
    "--model", help="Resolve credentials from a model (may be combined with --provider)"
)


@auth_command.command("check", help="Print ready, not_ready or invalid; exit 0, 1 or 2.")
@_provider_option
@_model_option
@click.option("--json", "as_json", is_flag=True, help="Write the structured result as JSON")
@click.option("--credentials", is_flag=True, help="Include the resolved credential when ready")
@click.option("--no-refresh", is_flag=True, help="Do not refresh expired OAuth credentials")
@click.pass_obj
def check(
    obj: Any, provider: str | None, model: str | None, as_json: bool, credentials: bool, no_refresh: bool
) -> int:
    app = _app(obj)
    try:
        name = _provider_of(app, provider, model)
    except click.UsageError as exc:
        return _fail(exc.message, 2)
    result = resolve_status(app, name, refresh=not no_refresh)
    key = result.pop("_key", None)
    error = result.pop("error", None)
    if credentials and result["status"] == READY:
        result["credentials"] = key
    if as_json:
        if error:
            result["error"] = error
        click.echo(jsonio.dumps(result))
    else:
        click.echo(result["status"])
        if credentials and result["status"] == READY:
            click.echo(key)
    if error:
        click.echo(f"Error: {error}", err=True)
    return EXIT[result["status"]]


@auth_command.command("print-api-key", help="Print the resolved API key of a provider (a secret, on stdout).")
@_provider_option
@_model_option
@click.pass_obj
def print_api_key(obj: Any, provider: str | None, model: str | None) -> int:
    from piko.plugins.providers.auth import command_error

    app = _app(obj)
    try:
        name = _provider_of(app, provider, model)
    except click.UsageError as exc:
        return _fail(exc.message)
    key = app.model_registry.api_key(name, interactive=False)
    if not key or key.startswith("<"):
        return _fail(command_error(app, name) or f'No usable API key is configured for provider "{name}"')
    click.echo(key)
    return 0


@auth_command.command(
    "print-bearer-token", help="Print a provider's OAuth bearer token, refreshed when needed."
)
@_provider_option
@_model_option
@click.option("--min-expiry", help="Required remaining lifetime (ms, s, m or h, such as 30m)")
@click.pass_obj
def print_bearer_token(obj: Any, provider: str | None, model: str | None, min_expiry: str | None) -> int:
    from piko.plugins.providers.auth import get_storage
    from piko.plugins.providers.auth import oauth_provider
    from piko.plugins.providers.auth import refresh_oauth
    from piko.plugins.providers.oauth_anthropic import now_ms

    app = _app(obj)
    try:
        name = _provider_of(app, provider, model)
        minimum = parse_duration_ms(min_expiry) if min_expiry else 0
    except click.UsageError as exc:
        return _fail(exc.message)
    stored = get_storage(app).get(name)
    if not isinstance(stored, dict) or stored.get("type") != "oauth" or oauth_provider(name, app) is None:
        return _fail(f'Provider "{name}" is not configured with an OAuth bearer token')
    try:
        token = refresh_oauth(name, app, min_validity_ms=minimum)
    except Exception as exc:
        return _fail(f"Failed to refresh OAuth token for {name}: {exc}")
    fresh = get_storage(app).get(name) or {}
    left = int(fresh.get("expires") or 0) - now_ms()
    if not token or left <= minimum:
        return _fail(
            f"The OAuth token of {name} is valid for {max(left, 0) // 1000} s more, less than the {minimum // 1000} s required"
        )
    click.echo(token)
    return 0


__all__ = ["auth_command", "parse_duration_ms", "resolve_status"]
