"""Reaching the credential store from the interactive mode: the ``piko_credential_store`` hook.

The built-in ``providers.auth`` plugin answers with its ``auth.json`` store; another plugin may
answer first (a keychain, a vault). When no plugin answers (the auth plugin is blocked), logins
are not available and the commands say so.
"""

from __future__ import annotations

from typing import Any

AUTH_PLUGIN = "providers.auth"
_NEEDED = ("auth_path", "get_storage", "oauth_providers", "save_api_key", "login_oauth", "logout")


class AuthUnavailableError(RuntimeError):
    """No plugin offers a credential store."""


def auth_library(app: Any) -> Any:
    """The credential store (raises :class:`AuthUnavailableError` when there is none)."""
    pm = getattr(app, "pm", None)
    store = pm.hook.piko_credential_store(app=app) if pm is not None else None
    if store is None or not all(callable(getattr(store, name, None)) for name in _NEEDED):
        raise AuthUnavailableError(
            f"Logins are not available: the {AUTH_PLUGIN} plugin is blocked or missing (see `pi plugins`)"
        )
    return store


def auth_library_or_none(app: Any, show_error: Any = None) -> Any:
    """The credential store, or ``None`` when there is none (``show_error`` is told why)."""
    try:
        return auth_library(app)
    except AuthUnavailableError as exc:
        if show_error is not None:
            show_error(str(exc))
        return None


def stored_credential(app: Any, provider: str) -> dict[str, Any] | None:
    """The credential ``auth.json`` holds for ``provider`` (``None`` when none, or no auth plugin)."""
    library = auth_library_or_none(app)
    if library is None:
        return None
    credential = library.get_storage().get(provider)
    return credential if isinstance(credential, dict) else None
