"""Google Application Default Credentials: the credentials file and the access tokens minted from it.

The file is ``$GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's
``~/.config/gcloud/application_default_credentials.json`` (``gcloud auth application-default
login``). Two kinds are understood, as Google's auth libraries read them:

* ``service_account``: a JWT naming the account (``client_email``), the cloud-platform scope and
  the token URI as audience, signed RS256 with ``private_key`` (``cryptography`` signs it, imported
  only then), is exchanged at ``token_uri`` (grant ``urn:ietf:params:oauth:grant-type:jwt-bearer``);
* ``authorized_user``: the ``refresh_token`` is exchanged at ``token_uri`` (default Google's) with
  the file's ``client_id`` and ``client_secret``; its ``quota_project_id`` is sent as
  ``x-goog-user-project``.

A token is kept for the process per credentials file (its path and content) and minted again
once it is within :data:`REFRESH_MARGIN_S` of its expiry. Tokens are registered with
:mod:`piko.lib.redaction`; no error message quotes a secret of the file.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
import weakref
from pathlib import Path
from typing import Any

from attrs import define

from piko.lib.provider_env import provider_getenv
from piko.lib.redaction import register_secret
from piko.plugins.providers.provider_errors import ProviderError

CREDENTIALS_ENV = "GOOGLE_APPLICATION_CREDENTIALS"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_LIFETIME_S = 3600
REFRESH_MARGIN_S = 300  # Google's auth libraries refresh a token five minutes before it expires
TOKEN_REQUEST_TIMEOUT_S = 60.0


def gcloud_credentials_path() -> Path:
    """Where ``gcloud auth application-default login`` writes the user's credentials."""
    return Path.home() / ".config" / "gcloud" / "application_default_credentials.json"


def credentials_path(provider: str | None = None) -> Path:
    """The Application Default Credentials file: ``$GOOGLE_APPLICATION_CREDENTIALS`` (``provider``'s
    auth.json ``env`` map first), else gcloud's."""
    configured = provider_getenv(provider, CREDENTIALS_ENV)
    return Path(configured).expanduser() if configured else gcloud_credentials_path()


@define(kw_only=True, frozen=True)
class Credentials:
    """One parsed credentials file (``kind``: ``service_account`` or ``authorized_user``)."""

    path: Path
    kind: str
    token_uri: str
    info: dict[str, Any]
    fingerprint: str  # identifies the file's content: a new file means a new token

    @property
    def quota_project(self) -> str | None:
        value = self.info.get("quota_project_id")
        return str(value) if value else None


_REQUIRED = {
    "service_account": ("client_email", "private_key"),
    "authorized_user": ("client_id", "client_secret", "refresh_token"),
}


def load_credentials(path: Path | None = None, provider: str | None = None) -> Credentials:
    """Read and check the credentials file (``provider``'s); raises :class:`ProviderError` saying
    what is wrong."""
    path = path or credentials_path(provider)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProviderError(
            f"No Google Cloud credentials found at {path}. Set {CREDENTIALS_ENV} to a service account "
            "key file, or run `gcloud auth application-default login`."
        ) from None
    except OSError as exc:
        raise ProviderError(f"Cannot read Google Cloud credentials {path}: {exc.strerror or exc}") from None
    try:
        info = json.loads(raw)
    except ValueError as exc:
        raise ProviderError(f"Google Cloud credentials {path} are not valid JSON: {exc}") from None
    if not isinstance(info, dict):
        raise ProviderError(f"Google Cloud credentials {path} are not a JSON object")
    kind = info.get("type")
    if kind not in _REQUIRED:
        raise ProviderError(
            f"Google Cloud credentials {path} have type {kind!r}; supported are "
            "'service_account' and 'authorized_user'"
        )
    missing = [name for name in _REQUIRED[kind] if not isinstance(info.get(name), str) or not info[name]]
    if missing:
        raise ProviderError(f"Google Cloud credentials {path} ({kind}) lack {', '.join(missing)}")
    return Credentials(
        path=path,
        kind=kind,
        token_uri=str(info.get("token_uri") or DEFAULT_TOKEN_URI),
        info=info,
        fingerprint=hashlib.sha256(raw).hexdigest(),
    )


# ---------------------------------------------------------------------------
# The service account's signed assertion
# ---------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign_rs256(private_key_pem: str, data: bytes) -> bytes:
    """The RSASSA-PKCS1-v1_5 SHA-256 signature of ``data`` (``cryptography`` is imported here)."""
    try:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import padding
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError:
        raise ProviderError(
            "Signing in with a Google service account needs the 'cryptography' package "
            "(pip install cryptography)"
        ) from None
    try:
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise ProviderError(f"The service account's private_key cannot be read: {exc}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ProviderError("The service account's private_key is not an RSA key")
    return key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def service_account_assertion(credentials: Credentials, now: float | None = None) -> str:
    """The signed JWT a service account exchanges for an access token."""
    issued = int(now if now is not None else time.time())
    header: dict[str, Any] = {"alg": "RS256", "typ": "JWT"}
    if credentials.info.get("private_key_id"):
        header["kid"] = credentials.info["private_key_id"]
    claims = {
        "iss": credentials.info["client_email"],
        "scope": CLOUD_PLATFORM_SCOPE,
        "aud": credentials.token_uri,
        "iat": issued,
        "exp": issued + ASSERTION_LIFETIME_S,
    }
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    )
    signature = sign_rs256(credentials.info["private_key"], signing_input.encode("ascii"))
    return f"{signing_input}.{_b64url(signature)}"


def token_request_form(credentials: Credentials, now: float | None = None) -> dict[str, str]:
    """The form posted to ``token_uri`` for a new access token."""
    if credentials.kind == "service_account":
        return {"grant_type": JWT_BEARER_GRANT, "assertion": service_account_assertion(credentials, now)}
    info = credentials.info
    return {
        "grant_type": "refresh_token",
        "client_id": info["client_id"],
        "client_secret": info["client_secret"],
        "refresh_token": info["refresh_token"],
    }


# ---------------------------------------------------------------------------
# Access tokens
# ---------------------------------------------------------------------------


@define(kw_only=True, frozen=True)
class AccessToken:
    token: str
    expires_at: float  # time.time() seconds

    def fresh(self, now: float) -> bool:
        return now < self.expires_at - REFRESH_MARGIN_S


_tokens: dict[tuple[str, str], AccessToken] = {}
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _describe(credentials: Credentials) -> str:
    if credentials.kind == "service_account":
        return f"service account {credentials.info['client_email']}"
    return f"user credentials {credentials.path}"


def _token_error(credentials: Credentials, status: int, text: str) -> ProviderError:
    reason = text.strip()[:300] or f"HTTP {status}"
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        error = body["error"]
        if isinstance(error, dict):  # {"error": {"code", "message", "status"}}
            reason = str(error.get("message") or error.get("status") or error)
        else:  # OAuth 2.0: {"error": "invalid_grant", "error_description": "..."}
            reason = str(error)
            if body.get("error_description"):
                reason += f": {body['error_description']}"
    return ProviderError(
        f"Could not get a Google Cloud access token for {_describe(credentials)} "
        f"from {credentials.token_uri} (HTTP {status}): {reason}"
    )


async def _mint(credentials: Credentials) -> AccessToken:
    import httpx

    from piko.plugins.providers.http_client import get_client

    now = time.time()
    form = token_request_form(credentials, now)
    try:
        response = await get_client().post(
            credentials.token_uri, data=form, timeout=httpx.Timeout(TOKEN_REQUEST_TIMEOUT_S)
        )
    except httpx.TransportError as exc:
        raise ProviderError(
            f"Could not reach the Google Cloud token endpoint {credentials.token_uri}: "
            f"{exc or type(exc).__name__}"
        ) from None
    if response.status_code >= 400:
        raise _token_error(credentials, response.status_code, response.text)
    try:
        body = response.json()
    except ValueError:
        body = None
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        raise ProviderError(
            f"The Google Cloud token endpoint {credentials.token_uri} answered without an access_token"
        )
    register_secret(token)
    lifetime = body.get("expires_in") if isinstance(body, dict) else None
    seconds = (
        float(lifetime) if isinstance(lifetime, int | float) and not isinstance(lifetime, bool) else 3600.0
    )
    return AccessToken(token=token, expires_at=now + seconds)


async def access_token(credentials: Credentials) -> str:
    """A valid access token for ``credentials``: the one kept, or a new one when it is about to expire."""
    key = (str(credentials.path), credentials.fingerprint)
    loop = asyncio.get_running_loop()
    lock = _locks.get(loop)
    if lock is None:
        lock = _locks[loop] = asyncio.Lock()
    async with lock:  # concurrent requests (a summary beside the turn) share one new token
        kept = _tokens.get(key)
        if kept is not None and kept.fresh(time.time()):
            return kept.token
        minted = await _mint(credentials)
        _tokens[key] = minted
        return minted.token


def forget_tokens() -> None:
    """Drop every kept token (tests; a credentials change is noticed without this)."""
    _tokens.clear()
