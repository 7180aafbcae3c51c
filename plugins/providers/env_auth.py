"""Credentials from the environment, as pi's ``getEnvApiKey``: a provider's variables in order,
then the credential chains of Google Vertex (Application Default Credentials) and Amazon Bedrock
(AWS profile, keys, bearer token, container or web-identity roles), which answer
``"<authenticated>"``: the API plugin then authenticates by itself. So does Anthropic's
``ANTHROPIC_AUTH_TOKEN`` (checked before its key variables, as pi 1.6 does): the token is sent as
``Authorization: Bearer``, never as a key, which the API plugin does when it sees the marker."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from piko.lib.provider_env import provider_getenv

AUTHENTICATED = "<authenticated>"


def first_set(names: Iterable[str], provider: str | None = None) -> str | None:
    """The value of the first variable of ``names`` that is set and not empty (``provider``'s
    own ``auth.json`` ``env`` first)."""
    for name in names:
        value = provider_getenv(provider, name)
        if value:
            return value
    return None


def _vertex_adc(provider: str) -> bool:
    path = provider_getenv(provider, "GOOGLE_APPLICATION_CREDENTIALS")
    if path:
        return Path(path).exists()
    return (Path.home() / ".config" / "gcloud" / "application_default_credentials.json").exists()


def _env(name: str, provider: str) -> bool:
    return bool(provider_getenv(provider, name))


ANTHROPIC_AUTH_TOKEN = "ANTHROPIC_AUTH_TOKEN"


def env_api_key(provider: str, env_keys: Iterable[str]) -> str | None:
    """The key the environment gives ``provider``, or ``None``."""
    if provider == "anthropic" and _env(ANTHROPIC_AUTH_TOKEN, provider):
        return AUTHENTICATED
    value = first_set(env_keys, provider)
    if value:
        return value
    if provider == "google-vertex":
        has_project = first_set(("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"), provider)
        if has_project and first_set(("GOOGLE_CLOUD_LOCATION",), provider) and _vertex_adc(provider):
            return AUTHENTICATED
    if provider == "amazon-bedrock":
        if (
            _env("AWS_PROFILE", provider)
            or (_env("AWS_ACCESS_KEY_ID", provider) and _env("AWS_SECRET_ACCESS_KEY", provider))
            or _env("AWS_BEARER_TOKEN_BEDROCK", provider)
            or _env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", provider)
            or _env("AWS_CONTAINER_CREDENTIALS_FULL_URI", provider)
            or _env("AWS_WEB_IDENTITY_TOKEN_FILE", provider)
        ):
            return AUTHENTICATED
    return None
