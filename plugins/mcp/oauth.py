"""OAuth for HTTP servers on the SDK's ``OAuthClientProvider``: sign-in, and tokens per server.

Tokens and the registered client are kept in ``~/.pi/agent/mcp-auth.json`` (mode 0600) under
the server's name and URL. The SDK does discovery (protected resource and authorization server
metadata), dynamic client registration or a Client ID Metadata Document, PKCE, the code
exchange and refreshing; this module gives it the storage, the browser step, the local callback
(or a pasted redirected URL), and decides when a configured document is offered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull
from mcp.shared.auth import OAuthClientMetadata
from mcp.shared.auth import OAuthToken
from pydantic import PrivateAttr

from piko.plugins.mcp.config import ServerConfig
from piko.plugins.mcp.config import resolve_value

AUTH_FILE = "mcp-auth.json"
CLIENT_NAME = "pi"


class NeedsSignIn(Exception):
    """The server wants OAuth and no valid sign-in is stored (run ``pi mcp login``)."""


def auth_path(agent_dir: str | os.PathLike[str]) -> Path:
    return Path(agent_dir) / AUTH_FILE


def credential_key(config: ServerConfig) -> str:
    """Credentials belong to a server name and URL."""
    return f"{config.name}|{config.raw.get('url')}"


def _load(path: Path) -> dict[str, Any]:
    from piko.lib import jsonio

    try:
        data = jsonio.read_json_file(path)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict[str, Any]) -> None:
    from piko.lib import jsonio

    path.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write_atomic(path, jsonio.dumps_pretty(data) + "\n")
    os.chmod(path, 0o600)


class FileTokenStorage:
    """The SDK's ``TokenStorage`` over one entry of ``mcp-auth.json``."""

    def __init__(self, agent_dir: str | os.PathLike[str], key: str) -> None:
        self.path = auth_path(agent_dir)
        self.key = key

    def _entry(self) -> dict[str, Any]:
        entry = _load(self.path).get("servers", {}).get(self.key)
        return entry if isinstance(entry, dict) else {}

    def _update(self, field: str, value: Any) -> None:
        data = _load(self.path)
        servers = data.setdefault("servers", {})
        servers.setdefault(self.key, {})[field] = value
        _save(self.path, data)

    def has_tokens(self) -> bool:
        return bool(self._entry().get("tokens"))

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._entry().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        import time

        self._update("tokens", tokens.model_dump(mode="json", exclude_none=True))
        if tokens.expires_in is not None:
            self._update("expiresAt", time.time() + tokens.expires_in)

    def expires_at(self) -> float | None:
        value = self._entry().get("expiresAt")
        return float(value) if isinstance(value, int | float) else None

    def expire(self) -> bool:
        """Treat the stored access token as expired (the server rejected it): the next
        connection refreshes it. False when there is nothing to refresh with."""
        tokens = self._entry().get("tokens") or {}
        if not tokens.get("refresh_token"):
            return False
        self._update("expiresAt", 0)
        return True

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        client = self._entry().get("client")
        return OAuthClientInformationFull.model_validate(client) if client else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update("client", client_info.model_dump(mode="json", exclude_none=True))

    def extra_scope(self) -> str | None:
        """Scopes a server asked for later (a step-up), added to the next sign-in's request."""
        value = self._entry().get("scope")
        return value if isinstance(value, str) and value else None

    def remember_scope(self, scope: str | None) -> None:
        if scope and scope != self.extra_scope():
            self._update("scope", scope)

    def drop_tokens(self) -> None:
        """Forget the tokens (a new sign-in follows), keeping the client and the scopes asked for."""
        data = _load(self.path)
        entry = data.get("servers", {}).get(self.key)
        if isinstance(entry, dict) and entry.pop("tokens", None) is not None:
            entry.pop("expiresAt", None)
            _save(self.path, data)

    def drop_client(self) -> None:
        data = _load(self.path)
        entry = data.get("servers", {}).get(self.key)
        if isinstance(entry, dict) and entry.pop("client", None) is not None:
            _save(self.path, data)

    def forget(self) -> bool:
        data = _load(self.path)
        servers = data.get("servers", {})
        if self.key not in servers:
            return False
        del servers[self.key]
        _save(self.path, data)
        return True


def _options(config: ServerConfig) -> dict[str, Any]:
    value = config.raw.get("oauth")
    return dict(value) if isinstance(value, dict) else {}


def uses_oauth(config: ServerConfig) -> bool:
    """OAuth applies to HTTP servers without an ``Authorization`` header."""
    headers = config.raw.get("headers") or {}
    return config.kind == "http" and not any(k.lower() == "authorization" for k in headers)


def merge_scopes(*scopes: str | None) -> str | None:
    """Space-separated scopes, each once, in order."""
    words = [w for scope in scopes if scope for w in scope.split()]
    return " ".join(dict.fromkeys(words)) or None


class _ClientMetadata(OAuthClientMetadata):
    """Client metadata whose ``scope`` the SDK's scope selection sets before each authorization
    (to the server's advertised scopes, or none): the configured ``oauth.scope`` stands in when
    nothing is advertised, and scopes a server asked for later are added."""

    _configured: str | None = PrivateAttr(default=None)
    _extra: str | None = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope" and self.__pydantic_private__ is not None:
            value = merge_scopes(value or self._configured, self._extra)
        super().__setattr__(name, value)


def _metadata(config: ServerConfig, redirect_uri: str, extra_scope: str | None = None) -> OAuthClientMetadata:
    options = _options(config)
    secret = options.get("clientSecret")
    metadata = _ClientMetadata.model_validate({
        "client_name": options.get("clientName") or CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_post" if secret else "none",
    })  # fmt: skip
    metadata._configured = options.get("scope") or None
    metadata._extra = extra_scope
    metadata.scope = None  # as the SDK's selection would, with nothing advertised
    return metadata


async def _configured_client(config: ServerConfig, storage: FileTokenStorage, redirect_uri: str) -> None:
    """A registered client of the entry's ``oauth.clientId`` (no dynamic registration then)."""
    options = _options(config)
    client_id = options.get("clientId")
    if not client_id or await storage.get_client_info() is not None:
        return
    secret = options.get("clientSecret")
    info = _metadata(config, redirect_uri).model_dump(mode="json", exclude_none=True)
    info["client_id"] = client_id
    if secret:
        info["client_secret"] = resolve_value(str(secret), f'MCP server "{config.name}" oauth.clientSecret')
    await storage.set_client_info(OAuthClientInformationFull.model_validate(info))


_DISCOVERY_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


class CimdUnsupported(Exception):
    """``clientRegistration: "cimd"`` with an authorization server that takes no documents."""


def _takes_documents(metadata: Any) -> bool:
    """Whether an authorization server's metadata (JSON) takes Client ID Metadata Documents
    for public clients (pi's condition: documents supported, and ``none`` client authentication)."""
    if not isinstance(metadata, dict) or metadata.get("client_id_metadata_document_supported") is not True:
        return False
    methods = metadata.get("token_endpoint_auth_methods_supported")
    return isinstance(methods, list) and "none" in methods


class PikoOAuthProvider(OAuthClientProvider):
    """The SDK's provider, with two of the entry's ``oauth`` options:

    - ``authServerMetadataUrl``: the authorization server's metadata comes from that URL instead
      of discovery, and is trusted as configured: its ``issuer`` is the one expected (for servers
      that advertise the wrong authorization server);
    - ``clientRegistration``: the SDK identifies the client by its document (``client_metadata_url``)
      whenever the server says it supports documents; piko also wants the server to take public
      clients (as pi does) before it does that, and with ``cimd`` fails instead of registering.
    """

    def __init__(
        self, *args: Any, metadata_url: str | None = None, require_document: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.metadata_url = metadata_url
        self.require_document = require_document
        self.issuer: str | None = None

    def _expected_issuer(self) -> str:
        if self.metadata_url is None:
            return super()._expected_issuer()
        client = self.context.client_info
        known = self.issuer or (getattr(client, "issuer", None) if client is not None else None)
        return str(known) if known else super()._expected_issuer()

    def _is_metadata_request(self, request: Any) -> bool:
        return request.method == "GET" and (
            any(p in request.url.path for p in _DISCOVERY_PATHS)
            or (self.metadata_url is not None and str(request.url) == self.metadata_url)
        )

    async def _settle_registration(self, response: Any) -> None:
        """Before the SDK reads the authorization server's metadata (and chooses how to identify
        the client): no document for a server that does not take it; with ``cimd``, stop."""
        if response.status_code != 200 or self.context.client_info is not None:
            return
        await response.aread()
        try:
            metadata = response.json()
        except ValueError:
            return
        if _takes_documents(metadata):
            return
        if self.require_document:
            raise CimdUnsupported(
                "The authorization server does not support Client ID Metadata Documents for public "
                'clients; remove oauth.clientRegistration "cimd"'
            )
        self.context.client_metadata_url = None

    async def _auth_flow(self, request: Any) -> Any:
        """The SDK's flow (inside the SDK's redirect following), its metadata request replaced
        and its registration settled as said above."""
        from mcp.client.auth.utils import create_oauth_metadata_request

        if self.metadata_url is not None and self.issuer is None:
            # the SDK settles the expected issuer before it fetches metadata
            document = yield create_oauth_metadata_request(self.metadata_url)
            await document.aread()
            with contextlib.suppress(ValueError, AttributeError):
                self.issuer = str(document.json().get("issuer") or "") or None
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                metadata_request = self._is_metadata_request(outgoing)
                if metadata_request and self.metadata_url is not None:
                    outgoing = create_oauth_metadata_request(self.metadata_url)
                response = yield outgoing
                if metadata_request and (self.context.client_metadata_url or self.require_document):
                    await self._settle_registration(response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()


def client_document(config: ServerConfig) -> tuple[str | None, bool]:
    """``(document URL to offer, required)`` by ``oauth.clientRegistration``: ``dcr`` offers
    none; ``auto`` offers the configured ``clientMetadataUrl`` unless ``clientId`` or
    ``clientName`` is set or the ``callbackUrl`` is not ``/callback`` on localhost or 127.0.0.1;
    ``cimd`` requires it (the entry's checks made sure it is there)."""
    from piko.plugins.mcp.config import is_document_callback

    options = _options(config)
    registration = options.get("clientRegistration") or "auto"
    url = options.get("clientMetadataUrl")
    if registration == "dcr" or not isinstance(url, str) or not url:
        return None, False
    if registration == "cimd":
        return url, True
    callback = options.get("callbackUrl")
    if (
        options.get("clientId")
        or options.get("clientName")
        or (callback and not is_document_callback(callback))
    ):
        return None, False
    return url, False


def _wrong_kind_of_client(config: ServerConfig, client_id: str | None) -> bool:
    """A stored client that ``clientRegistration`` no longer allows: a registered one under
    ``cimd``, the document under ``dcr``."""
    options = _options(config)
    document = options.get("clientMetadataUrl")
    registration = options.get("clientRegistration") or "auto"
    if options.get("clientId"):
        return False
    return (registration == "cimd" and client_id != document) or (
        registration == "dcr" and client_id == document
    )


def _provider(config: ServerConfig, *args: Any, **kwargs: Any) -> OAuthClientProvider:
    """An ``OAuthClientProvider`` for the entry (see :class:`PikoOAuthProvider`)."""
    url = _options(config).get("authServerMetadataUrl")
    document, required = client_document(config)
    provider = PikoOAuthProvider(
        str(config.raw["url"]), *args, metadata_url=url if isinstance(url, str) and url else None,
        require_document=required, **kwargs,
    )  # fmt: skip
    # set after the SDK's constructor, which checks the URL as the entry's checks already did
    provider.context.client_metadata_url = document
    return provider


def session_auth(config: ServerConfig, agent_dir: str | os.PathLike[str]) -> OAuthClientProvider | None:
    """The ``httpx.Auth`` of a session's connection: stored tokens, refreshed as needed; a server
    that wants a new sign-in fails with :class:`NeedsSignIn`. None without a stored sign-in (a
    401 then says to sign in; nothing is registered behind the user's back)."""
    storage = FileTokenStorage(agent_dir, credential_key(config))
    if not storage.has_tokens():
        return None

    async def no_browser(url: str) -> None:
        # a sign-in is wanted (the token was refused, or the server asks for more scope, which the
        # SDK has put in the metadata): remember the scope for the next pi mcp login
        storage.remember_scope(provider.context.client_metadata.scope)
        raise NeedsSignIn(f"needs sign-in: run `pi mcp login {config.name}`")

    async def no_callback() -> tuple[str, str | None]:
        raise NeedsSignIn(f"needs sign-in: run `pi mcp login {config.name}`")

    metadata = _metadata(config, _redirect_uri(config, int(_options(config).get("callbackPort") or 0) or 1))
    provider = _provider(config, metadata, storage, no_browser, no_callback)
    # the SDK learns a token's expiry only when it receives the token: tell it the stored one
    provider.context.token_expiry_time = storage.expires_at()
    return provider


def has_sign_in(config: ServerConfig, agent_dir: str | os.PathLike[str]) -> bool:
    """Whether tokens are stored for the server (it is signed in)."""
    return FileTokenStorage(agent_dir, credential_key(config)).has_tokens()


def expire_stored(config: ServerConfig, agent_dir: str | os.PathLike[str]) -> bool:
    """The server rejected the stored token: have the next connection refresh it (once)."""
    return FileTokenStorage(agent_dir, credential_key(config)).expire()


def _redirect_uri(config: ServerConfig, port: int) -> str:
    url = _options(config).get("callbackUrl")
    if isinstance(url, str) and url:
        parts = urlsplit(url)
        return url if parts.port else url.replace(parts.netloc, f"{parts.hostname}:{port}", 1)
    return f"http://127.0.0.1:{port}/callback"


class RedirectWait:
    """Where a sign-in's authorization code arrives: the loopback callback, or the redirected
    URL the user pastes (the address the browser ended on, when it runs on another machine).
    Either is checked against the sign-in's ``state``; a URL that does not fit is refused with
    one line and the wait goes on."""

    def __init__(self) -> None:
        self.arrived: asyncio.Future[tuple[str, str | None]] = asyncio.get_running_loop().create_future()
        self.state: str | None = None  # the state of the authorization page, once it is known

    def expect(self, authorization_url: str) -> None:
        self.state = parse_qs(urlsplit(authorization_url).query).get("state", [None])[0]

    @property
    def done(self) -> bool:
        return self.arrived.done()

    def offer(self, url: str) -> str | None:
        """A redirected URL (or the callback's request target): None when it ends the wait
        (with the code, or with the authorization server's error), else why it was refused."""
        query = parse_qs(urlsplit(url.strip()).query)
        code, state = query.get("code", [None])[0], query.get("state", [None])[0]
        error = query.get("error", [None])[0]
        if self.arrived.done():
            return None
        if not code and not error:
            return "That URL has no authorization code: paste the address the browser ended on, with code and state."
        if self.state is None or state != self.state:
            return "That URL is not from this sign-in (its state does not match): paste the address this sign-in's page redirected to."
        if code:
            self.arrived.set_result((code, state))
        else:
            self.arrived.set_exception(RuntimeError(f"authorization failed: {error}"))
        return None


async def login(
    config: ServerConfig,
    agent_dir: str | os.PathLike[str],
    open_url: Callable[[str], Awaitable[None] | None],
    timeout: float = 300.0,
    wait: RedirectWait | None = None,
) -> None:
    """Sign in: the authorization page goes to ``open_url``; the code comes back to a callback
    server on 127.0.0.1, or is pasted (``wait.offer``); the tokens are stored. Raises on
    failure or after ``timeout``."""
    from piko.plugins.mcp.connection import http_transport

    wait = wait or RedirectWait()

    async def on_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            request_line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            target = request_line.split(" ")[1] if " " in request_line else "/"
            refused = wait.offer(target)
            failed = refused or (wait.arrived.exception() if wait.done else None)
            body = (
                f"Sign-in failed. {refused or ''}\n".encode()
                if failed
                else b"Signed in. You can close this tab.\n"
            )
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)  # fmt: skip
            await writer.drain()
        writer.close()

    port = int(_options(config).get("callbackPort") or 0)
    callback = await asyncio.start_server(on_request, "127.0.0.1", port)
    port = callback.sockets[0].getsockname()[1]
    redirect_uri = _redirect_uri(config, port)
    storage = FileTokenStorage(agent_dir, credential_key(config))
    storage.drop_tokens()  # a sign-in authorizes anew (also for scopes asked for since)
    registered = await storage.get_client_info()
    if registered is not None and redirect_uri not in [str(u) for u in registered.redirect_uris or []]:
        storage.drop_client()  # a client registered before stays in use only while its redirect URI matches
    elif registered is not None and _wrong_kind_of_client(config, registered.client_id):
        storage.drop_client()
    await _configured_client(config, storage, redirect_uri)

    async def redirect(url: str) -> None:
        wait.expect(url)
        result = open_url(url)
        if result is not None:
            await result

    async def wait_for_code() -> tuple[str, str | None]:
        return await wait.arrived

    metadata = _metadata(config, redirect_uri, storage.extra_scope())
    provider = _provider(config, metadata, storage, redirect, wait_for_code, timeout)
    try:
        async with asyncio.timeout(timeout), http_transport(config, auth=provider) as (read, write):
            from mcp.client.session import ClientSession

            async with ClientSession(read, write) as session:
                await session.initialize()
    finally:
        callback.close()
    if not storage.has_tokens():
        raise RuntimeError("the server accepted the connection without a sign-in")


def open_in_browser(url: str) -> None:
    """Open the sign-in page in the user's browser, unless ``PIKO_NO_BROWSER`` is set."""
    if os.environ.get("PIKO_NO_BROWSER"):
        return
    import webbrowser

    with contextlib.suppress(Exception):
        webbrowser.open(url)


def logout(config: ServerConfig, agent_dir: str | os.PathLike[str]) -> bool:
    """Delete the stored credentials of a server; False when there were none."""
    return FileTokenStorage(agent_dir, credential_key(config)).forget()
