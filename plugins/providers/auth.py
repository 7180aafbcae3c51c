"""API keys and logins (plugin ``providers.auth``): auth.json, OAuth tokens, environment variables.

``piko_resolve_api_key`` answers in pi's order (after ``--api-key``, which the registry checks):

1. an API key stored in ``auth.json`` (itself a config value: literal, variable name, ``!command``;
   a credential's ``env`` map gives the provider variables of its own, the command's included);
2. an OAuth token stored in ``auth.json``, refreshed under the file lock when it has expired
   (a failed refresh answers ``""``: no key, and nothing else is tried, so that the user logs in
   again rather than being billed through another key, as pi does);
3. the provider's environment variables in precedence order (``ProviderConfig.env_keys``), and
   the Vertex and Bedrock credential chains;
4. then other plugins' ``piko_resolve_api_key`` implementations (custom resolvers), and last the
   provider's own ``api_key`` (models.json ``apiKey``), which the model registry resolves.

The functions below are the library the interactive ``/login`` and ``pi login`` use. The values
of ``auth.json`` (and refreshed tokens) are registered with :mod:`piko.lib.redaction`, so that no
trace, log, error, session or export shows them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.lib.redaction import register_secret
from piko.lib.text import camel

_storages: dict[Path, Any] = {}
_command_cache: dict[str, str | None] = {}
_command_errors: dict[str, str] = {}


def auth_path(app: Any = None) -> Path:
    """``auth.json`` in the agent directory."""
    from piko.config.paths import agent_dir

    base = getattr(app, "agent_dir", None) or agent_dir()
    return Path(base) / "auth.json"


def get_storage(app: Any = None) -> Any:
    """The :class:`~piko.plugins.providers.auth_storage.AuthStorage` of ``auth.json`` (one per path)."""
    from piko.plugins.providers.auth_storage import AuthStorage

    path = auth_path(app)
    storage = _storages.get(path)
    if storage is None:
        storage = _storages[path] = AuthStorage(path)
    return storage


def stored_secrets(app: Any = None) -> list[str]:
    """Every credential value in ``auth.json`` (API keys written as literals, OAuth tokens, the
    values of ``env`` maps)."""
    found: list[str] = []
    for credential in get_storage(app).all().values():
        if isinstance(credential, dict):
            found.extend(v for k, v in credential.items() if k != "type" and isinstance(v, str))
            env = credential.get("env")
            if isinstance(env, dict):  # provider-scoped variables may hold secrets too
                found.extend(v for v in env.values() if isinstance(v, str))
    return found


# ---------------------------------------------------------------------------
# OAuth providers: the built-in Anthropic one, and those plugins register with ``oauth=``
# ---------------------------------------------------------------------------


class _PluginOAuth:
    """Adapts a plugin's ``oauth`` object or dict (``refresh_token``, ``get_api_key``, ``login``)."""

    def __init__(self, provider: str, spec: Any, display_name: str) -> None:
        self.id = provider
        self._spec = spec
        self.name = self._get("name") or display_name or provider
        self.uses_callback_server = bool(self._get("uses_callback_server"))

    def _get(self, name: str) -> Any:
        if isinstance(self._spec, dict):
            return self._spec.get(name) or self._spec.get(camel(name))
        return getattr(self._spec, name, None) or getattr(self._spec, camel(name), None)

    def refresh_token(self, credentials: dict[str, Any]) -> dict[str, Any]:
        refresh = self._get("refresh_token")
        if refresh is None:
            raise RuntimeError(f"OAuth provider '{self.id}' cannot refresh tokens")
        return dict(refresh(credentials))

    def get_api_key(self, credentials: dict[str, Any]) -> str | None:
        get = self._get("get_api_key")
        if get is None:
            access = credentials.get("access")
            return str(access) if access else None
        value = get(credentials)
        return str(value) if value else None

    def login(self, **callbacks: Any) -> dict[str, Any]:
        login = self._get("login")
        if login is None:
            raise RuntimeError(f"OAuth provider '{self.id}' has no login")
        return dict(login(**callbacks))


def oauth_provider(provider: str, app: Any = None) -> Any:
    """The OAuth implementation for ``provider`` (a plugin's wins over the built-in), or ``None``."""
    registry = getattr(app, "model_registry", None) if app is not None else None
    config = registry.provider(provider) if registry is not None else None
    if config is not None and config.oauth is not None:
        return _PluginOAuth(provider, config.oauth, config.display_name)
    if provider == "anthropic":
        from piko.plugins.providers.oauth_anthropic import AnthropicOAuth

        return AnthropicOAuth()
    return None


def oauth_providers(app: Any = None) -> list[Any]:
    """Every provider one can log in to with OAuth."""
    found = {"anthropic": oauth_provider("anthropic")}
    registry = getattr(app, "model_registry", None) if app is not None else None
    if registry is not None:
        for name, config in registry.load().providers.items():
            if config.oauth is not None:
                found[name] = oauth_provider(name, app)
    return list(found.values())


# ---------------------------------------------------------------------------
# Key resolution
# ---------------------------------------------------------------------------


class KeyUnavailable(Exception):
    """A stored credential gives no key; the message names the provider and says why."""


def _config_value(value: str, provider: str = "", app: Any = None) -> str | None:
    """auth.json keys are config values; command results (and failures) are kept for the process,
    as pi's. A failing ``!command`` is reported once, naming the provider and why."""
    from piko.models.registry import resolve_config_value

    if not value.startswith("!"):
        return resolve_config_value(value)
    if value not in _command_cache:
        try:
            _command_cache[value] = command_key(value, provider)
        except KeyUnavailable as exc:
            _command_cache[value] = None
            _command_errors[value] = str(exc)
    if _command_cache[value] is None and value in _command_errors:
        registry = getattr(app, "model_registry", None)
        if registry is not None:
            registry.key_problems[provider] = _command_errors[value]
    return _command_cache[value]


def command_key(value: str, provider: str) -> str:
    """Run the ``!command`` of ``provider``'s auth.json key with its ``env`` map; the key.

    Raises :class:`KeyUnavailable` (provider and reason; never what the command printed).
    """
    from piko.lib.provider_env import provider_env
    from piko.models.registry import KeyCommandError
    from piko.models.registry import run_key_command

    try:
        key = run_key_command(value[1:], provider_env(provider))
    except KeyCommandError as exc:
        raise KeyUnavailable(
            f'The API key command for provider "{provider}" in auth.json failed: {exc}'
        ) from None
    register_secret(key)
    return key


def command_error(app: Any, provider: str) -> str | None:
    """Why ``provider``'s auth.json ``!command`` key gave nothing this run (None: it did not fail)."""
    credential = get_storage(app).get(provider)
    key = credential.get("key") if isinstance(credential, dict) else None
    return _command_errors.get(key) if isinstance(key, str) else None


def _env_keys(provider: str, app: Any) -> list[str]:
    registry = getattr(app, "model_registry", None)
    return registry.env_keys(provider) if registry is not None else []


def _report(app: Any, message: str) -> None:
    registry = getattr(app, "model_registry", None)
    if registry is not None and message not in registry.diagnostics:
        registry.diagnostics.append(message)


def refresh_oauth(provider: str, app: Any = None, *, min_validity_ms: int = 0) -> str | None:
    """Refresh ``provider``'s OAuth token under the lock and return the new key.

    Another process may have refreshed meanwhile: the file is re-read under the lock and a token
    still valid for ``min_validity_ms`` more is used as it is. Raises on failure.
    """
    from piko.plugins.providers.oauth_anthropic import now_ms

    oauth = oauth_provider(provider, app)
    if oauth is None:
        return None
    storage = get_storage(app)

    def change(current: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
        credential = current.get(provider)
        if not isinstance(credential, dict) or credential.get("type") != "oauth":
            return None, None
        if now_ms() + min_validity_ms < int(credential.get("expires") or 0):
            return oauth.get_api_key(credential), None
        fresh = oauth.refresh_token(credential)
        for value in fresh.values():
            register_secret(value)
        return oauth.get_api_key(fresh), {**current, provider: {"type": "oauth", **fresh}}

    result: str | None = storage.update(change)
    return result


def resolve_api_key(app: Any, provider: str, *, check_only: bool = False) -> str | None:
    """The key for ``provider`` from auth.json or the environment (see the module docstring)."""
    from piko.lib.provider_env import set_provider_env
    from piko.models.registry import CONFIGURED
    from piko.plugins.providers.env_auth import env_api_key

    storage = get_storage(app)
    credential = storage.get(provider)
    set_provider_env(provider, credential.get("env") if isinstance(credential, dict) else None)
    if check_only:
        if storage.has(provider):
            return CONFIGURED
        return CONFIGURED if env_api_key(provider, _env_keys(provider, app)) else None
    if (
        credential is not None
        and credential.get("type") == "api_key"
        and isinstance(credential.get("key"), str)
    ):
        return _config_value(credential["key"], provider, app)
    if credential is not None and credential.get("type") == "oauth":
        return _oauth_key(app, provider, credential)
    return env_api_key(provider, _env_keys(provider, app))


def _oauth_key(app: Any, provider: str, credential: dict[str, Any]) -> str | None:
    from piko.plugins.providers.oauth_anthropic import now_ms

    oauth = oauth_provider(provider, app)
    if oauth is None:
        return ""  # as pi: a token of an unknown OAuth provider is not used, nor another key
    if now_ms() < int(credential.get("expires") or 0):
        return oauth.get_api_key(credential) or ""
    try:
        return refresh_oauth(provider, app) or ""
    except Exception as exc:  # refresh failed: maybe another process succeeded
        _report(app, f"Failed to refresh OAuth token for {provider}: {exc}")
        storage = get_storage(app)
        storage.reload()
        again = storage.get(provider)
        if again is not None and again.get("type") == "oauth" and now_ms() < int(again.get("expires") or 0):
            return oauth.get_api_key(again) or ""
        return ""  # no key: `pi login` again (pi does not fall back to other keys either)


# ---------------------------------------------------------------------------
# Login and logout (library functions for /login and `pi login`)
# ---------------------------------------------------------------------------


def save_api_key(provider: str, key: str, app: Any = None) -> Path:
    """Store an API key for ``provider`` in auth.json; returns the file's path."""
    key = key.strip()
    if not key:
        raise ValueError("API key cannot be empty.")
    storage = get_storage(app)
    storage.set(provider, {"type": "api_key", "key": key})
    return Path(storage.path)


def login_oauth(provider: str, app: Any = None, **callbacks: Any) -> Path:
    """Run ``provider``'s OAuth login with ``callbacks`` and store the credentials."""
    oauth = oauth_provider(provider, app)
    if oauth is None:
        raise ValueError(f"Unknown OAuth provider: {provider}")
    credentials = oauth.login(**callbacks)
    storage = get_storage(app)
    storage.set(provider, {"type": "oauth", **credentials})
    return Path(storage.path)


def logout(provider: str, app: Any = None) -> dict[str, Any] | None:
    """Remove ``provider``'s stored credential; returns what was removed (``None``: nothing)."""
    storage = get_storage(app)
    credential = storage.get(provider)
    if credential is None and not storage.has(provider):
        return None
    storage.remove(provider)
    return credential or {}


# ---------------------------------------------------------------------------
# Hooks
# ---------------------------------------------------------------------------


class AuthJsonStore:
    """``auth.json`` as the credential store of one app (the answer to ``piko_credential_store``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def auth_path(self) -> Path:
        return auth_path(self.app)

    def get_storage(self) -> Any:
        return get_storage(self.app)

    def oauth_providers(self) -> list[Any]:
        return oauth_providers(self.app)

    def save_api_key(self, provider: str, key: str) -> Path:
        return save_api_key(provider, key, self.app)

    def login_oauth(self, provider: str, **callbacks: Any) -> Path:
        return login_oauth(provider, self.app, **callbacks)

    def logout(self, provider: str) -> dict[str, Any] | None:
        return logout(provider, self.app)


@hookimpl
def piko_configure(config: Any) -> None:
    """Let :mod:`piko.lib.redaction` mask auth.json's values (the file is read when first needed)."""
    from piko.lib.redaction import add_secret_source

    add_secret_source(lambda: stored_secrets(config))


@hookimpl
def piko_credential_store(app: Any) -> AuthJsonStore:
    return AuthJsonStore(app)


@hookimpl(tryfirst=True)
def piko_resolve_api_key(provider: str, app: Any, check_only: bool) -> str | None:
    """auth.json key, then OAuth token, then environment variables (pi's order)."""
    return resolve_api_key(app, provider, check_only=bool(check_only))


@hookimpl
def piko_register_cli_commands(register: Any) -> None:
    register(
        "login",
        "piko.plugins.providers.login_command:login_command",
        help="Sign in to a provider: OAuth or a stored API key",
    )
    register(
        "logout",
        "piko.plugins.providers.login_command:logout_command",
        help="Remove the stored credentials of a provider",
    )
    register(
        "auth",
        "piko.plugins.providers.auth_command:auth_command",
        help="Credentials: login, logout, check, print-api-key, print-bearer-token",
    )
