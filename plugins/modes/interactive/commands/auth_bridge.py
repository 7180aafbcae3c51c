"""Reaching the credential library of the ``providers.auth`` plugin from the interactive mode.

Plugins of one kind do not import another kind's modules, and the kernel offers no credential
service yet, so the library is looked up through the plugin manager: the plugin registered as
``providers.auth`` *is* its module (``auth_path``, ``get_storage``, ``oauth_providers``,
``save_api_key``, ``login_oauth``, ``logout``...). When that plugin is blocked or missing,
logins are not available and the commands say so.
"""

from __future__ import annotations

from typing import Any

AUTH_PLUGIN = "providers.auth"
_NEEDED = ("auth_path", "get_storage", "oauth_providers", "save_api_key", "login_oauth", "logout")


class AuthUnavailableError(RuntimeError):
    """No usable ``providers.auth`` plugin is loaded."""


def auth_library(app: Any) -> Any:
    """The ``providers.auth`` plugin's module (raises :class:`AuthUnavailableError`)."""
    pm = getattr(app, "pm", None)
    plugin = pm.get_plugin(AUTH_PLUGIN) if pm is not None else None
    if plugin is None or not all(callable(getattr(plugin, name, None)) for name in _NEEDED):
        raise AuthUnavailableError(
            f"Logins are not available: the {AUTH_PLUGIN} plugin is blocked or missing (see `pi plugins`)"
        )
    return plugin


def stored_credential(app: Any, provider: str) -> dict[str, Any] | None:
    """The credential ``auth.json`` holds for ``provider`` (``None`` when none, or no auth plugin)."""
    try:
        library = auth_library(app)
    except AuthUnavailableError:
        return None
    credential = library.get_storage(app).get(provider)
    return credential if isinstance(credential, dict) else None
