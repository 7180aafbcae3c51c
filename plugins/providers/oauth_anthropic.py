"""Anthropic OAuth (Claude Pro/Max): PKCE, the authorize URL, code exchange, refresh, and the login flow.

Constants and wire format are pi 0.73.1's (``pi-ai/dist/utils/oauth/anthropic.js``): a PKCE
verifier of 32 random bytes in base64url, its SHA-256 challenge, the verifier as ``state``;
the browser comes back to ``http://localhost:53692/callback`` (a small server on
``$PI_OAUTH_CALLBACK_HOST`` or 127.0.0.1 catches it) or the user pastes the redirect URL,
``code#state`` or the bare code. Tokens are exchanged and refreshed with JSON POSTs to the token
URL (``$PIKO_ANTHROPIC_TOKEN_URL`` overrides it, for tests and proxies). Credentials are
``{"refresh", "access", "expires"}`` with ``expires`` in milliseconds, five minutes early.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlencode
from urllib.parse import urlsplit

PROVIDER_ID = "anthropic"
NAME = "Anthropic (Claude Pro/Max)"
CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
TOKEN_URL_ENV = "PIKO_ANTHROPIC_TOKEN_URL"
CALLBACK_HOST_ENV = "PI_OAUTH_CALLBACK_HOST"
CALLBACK_PORT = 53692
CALLBACK_PATH = "/callback"
REDIRECT_URI = f"http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"
SCOPES = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"
EXPIRY_MARGIN_MS = 5 * 60 * 1000
HTTP_TIMEOUT_S = 30.0
INSTRUCTIONS = (
    "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here."
)
PROMPT = "Paste the authorization code or full redirect URL:"


class OAuthError(Exception):
    """The OAuth flow failed; the message says where (never a token)."""


def token_url() -> str:
    """The token endpoint: ``$PIKO_ANTHROPIC_TOKEN_URL`` or Anthropic's."""
    return os.environ.get(TOKEN_URL_ENV) or TOKEN_URL


def now_ms() -> int:
    return int(time.time() * 1000)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def generate_pkce() -> tuple[str, str]:
    """``(verifier, challenge)``: 32 random bytes in base64url, and base64url(SHA-256(verifier))."""
    verifier = _b64url(secrets.token_bytes(32))
    return verifier, challenge_of(verifier)


def challenge_of(verifier: str) -> str:
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def authorize_url(challenge: str, state: str, redirect_uri: str = REDIRECT_URI) -> str:
    """The URL the user opens in a browser (the verifier is the ``state``, as pi's)."""
    params = {
        "code": "true",
        "client_id": CLIENT_ID,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "scope": SCOPES,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
    }
    return f"{AUTHORIZE_URL}?{urlencode(params)}"


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def parse_authorization_input(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from a pasted redirect URL, ``code#state``, a query string, or a bare code."""
    value = text.strip()
    if not value:
        return None, None
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        query = parse_qs(parts.query)
        return _first(query, "code"), _first(query, "state")
    if "#" in value:
        code, state = value.split("#", 1)
        return code or None, state or None
    if "code=" in value:
        query = parse_qs(value)
        return _first(query, "code"), _first(query, "state")
    return value, None


def _post_json(url: str, body: dict[str, Any], what: str) -> dict[str, Any]:
    import httpx

    try:
        response = httpx.post(
            url,
            json=body,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            timeout=HTTP_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise OAuthError(f"{what} request failed. url={url}; details={type(exc).__name__}: {exc}") from exc
    text = response.text
    if response.status_code >= 400:
        raise OAuthError(
            f"{what} request failed. url={url}; status={response.status_code}; body={text[:500]}"
        )
    try:
        data = response.json()
    except ValueError as exc:
        raise OAuthError(f"{what} returned invalid JSON. url={url}; body={text[:500]}") from exc
    if (
        not isinstance(data, dict)
        or not data.get("access_token")
        or not isinstance(data.get("expires_in"), int | float)
    ):
        raise OAuthError(f"{what} returned no access_token/expires_in. url={url}")
    return data


def _credentials(data: dict[str, Any], previous_refresh: str | None = None) -> dict[str, Any]:
    return {
        "refresh": data.get("refresh_token") or previous_refresh,
        "access": data["access_token"],
        "expires": now_ms() + int(data["expires_in"] * 1000) - EXPIRY_MARGIN_MS,
    }


def exchange_code(
    code: str, state: str, verifier: str, redirect_uri: str = REDIRECT_URI, *, url: str | None = None
) -> dict[str, Any]:
    """Trade an authorization code for credentials ``{"refresh", "access", "expires"}``."""
    body = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    return _credentials(_post_json(url or token_url(), body, "Token exchange"))


def refresh_token(refresh: str, *, url: str | None = None) -> dict[str, Any]:
    """New credentials for a refresh token (raises :class:`OAuthError`)."""
    body = {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": refresh}
    return _credentials(_post_json(url or token_url(), body, "Anthropic token refresh"), refresh)


# ---------------------------------------------------------------------------
# The callback server and the login flow
# ---------------------------------------------------------------------------


class CallbackServer:
    """Waits for the browser's redirect to ``/callback`` with the expected ``state``."""

    def __init__(self, expected_state: str, host: str | None = None, port: int = CALLBACK_PORT) -> None:
        from http.server import BaseHTTPRequestHandler
        from http.server import ThreadingHTTPServer

        self.result: tuple[str, str] | None = None
        self.done = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                code = _first(query, "code")
                state = _first(query, "state")
                if parts.path != CALLBACK_PATH:
                    self._answer(404, "Callback route not found.")
                elif query.get("error"):
                    self._answer(
                        400, f"Anthropic authentication did not complete. Error: {query['error'][0]}"
                    )
                elif not code or not state:
                    self._answer(400, "Missing code or state parameter.")
                elif state != expected_state:
                    self._answer(400, "State mismatch.")
                else:
                    self._answer(200, "Anthropic authentication completed. You can close this window.")
                    outer.result = (code, state)
                    outer.done.set()

            def _answer(self, status: int, text: str) -> None:
                body = f"<!doctype html><html><body><p>{text}</p></body></html>".encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # the query holds the code
                return

        self.server = ThreadingHTTPServer(
            (host or os.environ.get(CALLBACK_HOST_ENV) or "127.0.0.1", port), Handler
        )
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, name="oauth-callback", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self.done.set()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def login(
    on_auth: Callable[[str, str], None],
    on_prompt: Callable[[str], str],
    *,
    on_progress: Callable[[str], None] | None = None,
    wait_for_input: Callable[[CallbackServer], str | None] | None = None,
    use_callback_server: bool = True,
    callback_port: int = CALLBACK_PORT,
) -> dict[str, Any]:
    """Run the whole login and return the credentials to store.

    ``on_auth(url, instructions)`` shows the URL. With the callback server, ``wait_for_input``
    (if given) should wait until the user pastes something or ``server.done`` is set, and
    return the pasted text or ``None``; otherwise the server is waited for and then
    ``on_prompt(message)`` asks for the code. Without the server (the port is taken, or
    ``use_callback_server`` is false) ``on_prompt`` is asked at once.
    """
    verifier, challenge = generate_pkce()
    server: CallbackServer | None = None
    if use_callback_server:
        try:
            server = CallbackServer(verifier, port=callback_port)
        except OSError:
            server = None  # port taken: pasting the redirect URL still works
    try:
        on_auth(authorize_url(challenge, verifier), INSTRUCTIONS)
        code: str | None = None
        state: str | None = None
        pasted: str | None = None
        if server is not None and wait_for_input is not None:
            pasted = wait_for_input(server)
        elif server is not None:
            server.done.wait()
        if server is not None and server.result is not None:
            code, state = server.result
        if code is None:
            if pasted is None:
                pasted = on_prompt(PROMPT)
            code, state = parse_authorization_input(pasted or "")
            if state is not None and state != verifier:
                raise OAuthError("OAuth state mismatch")
            state = state or verifier
        if not code:
            raise OAuthError("Missing authorization code")
        if on_progress is not None:
            on_progress("Exchanging authorization code for tokens...")
        return exchange_code(code, state or verifier, verifier)
    finally:
        if server is not None:
            server.close()


class AnthropicOAuth:
    """The OAuth provider object the auth plugin uses for ``anthropic``."""

    id = PROVIDER_ID
    name = NAME
    uses_callback_server = True

    def refresh_token(self, credentials: dict[str, Any]) -> dict[str, Any]:
        refresh = credentials.get("refresh") or credentials.get("refresh_token")
        if not refresh:
            raise OAuthError("stored Anthropic credentials have no refresh token; run `pi login anthropic`")
        return refresh_token(str(refresh))

    def get_api_key(self, credentials: dict[str, Any]) -> str | None:
        access = credentials.get("access") or credentials.get("access_token")
        return str(access) if access else None

    def login(self, **callbacks: Any) -> dict[str, Any]:
        return login(**callbacks)
