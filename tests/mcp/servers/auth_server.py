"""An MCP server that requires OAuth, and its own authorization server, on 127.0.0.1 (SDK's FastMCP).

The authorization server approves every request at once (no login page): its ``/authorize``
redirects straight to the client's callback with a code. Dynamic client registration is on.
Access tokens are said to live ``--token-seconds`` (then the client must refresh), but the server
honours each for a minute more: the client's clock decides when to refresh, and a slow machine
never meets a 401 between signing in and first using the token. The tool ``admin_secret`` also needs the ``admin`` scope, asked for by a
403 step-up challenge. With ``--wrong-authorization-server`` its protected-resource metadata
points elsewhere. With ``--cimd`` it advertises Client ID Metadata Documents for public clients
and takes an https client id as a document's URL: it fetches the document (trusting the test's
self-signed certificate) and accepts it when the document names itself as ``client_id``; a
loopback redirect URI matches the document's whatever its port (RFC 8252). Prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import json
import secrets
import socket
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.provider import AuthorizationCode
from mcp.server.auth.provider import AuthorizationParams
from mcp.server.auth.provider import RefreshToken
from mcp.server.auth.provider import construct_redirect_uri
from mcp.server.auth.settings import AuthSettings
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.fastmcp import FastMCP
from mcp.shared.auth import OAuthClientInformationFull
from mcp.shared.auth import OAuthToken
from pydantic import AnyUrl

GRACE_SECONDS = 60  # how long past its stated lifetime the server still accepts a token


class DocumentClient(OAuthClientInformationFull):
    """A client known by its metadata document: loopback redirects match whatever their port."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None and redirect_uri.host in ("127.0.0.1", "localhost"):
            listed = {(u.scheme, u.host, u.path) for u in self.redirect_uris or []}
            if (redirect_uri.scheme, redirect_uri.host, redirect_uri.path) in listed:
                return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


async def fetch_document(client_id: str) -> OAuthClientInformationFull | None:
    """The client of a Client ID Metadata Document at ``client_id`` (None when it is not one)."""
    import httpx

    async with httpx.AsyncClient(verify=False, timeout=10) as http:
        response = await http.get(client_id)
    if response.status_code != 200:
        return None
    document = response.json()
    if not isinstance(document, dict) or document.get("client_id") != client_id:
        return None
    return DocumentClient.model_validate({
        **document, "token_endpoint_auth_method": "none", "scope": "tools admin",
    })  # fmt: skip


class ApproveAll:
    """An in-memory authorization server provider that approves everything."""

    def __init__(self, token_seconds: int, documents: bool = False) -> None:
        self.token_seconds = token_seconds
        self.documents = documents
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if self.documents and client_id.startswith("https://") and client_id not in self.clients:
            document = await fetch_document(client_id)
            if document is not None:
                self.clients[client_id] = document
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["tools"], expires_at=time.time() + 300,
            client_id=client.client_id or "", code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri, redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )  # fmt: skip
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        lifetime = self.token_seconds
        token, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        expires = int(time.time()) + lifetime + GRACE_SECONDS
        self.access[token] = AccessToken(token=token, client_id=client_id, scopes=scopes, expires_at=expires,
                                         resource=resource)  # fmt: skip
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=lifetime,
                          scope=" ".join(scopes), refresh_token=refresh)  # fmt: skip

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(code.client_id, code.scopes, code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class StepUp:
    """ASGI middleware: calling the tool ``admin_secret`` needs the ``admin`` scope, asked for with
    a 403 ``insufficient_scope`` challenge (the MCP spec's scope step-up)."""

    def __init__(self, app: Any, provider: ApproveAll, base: str) -> None:
        self.app, self.provider, self.base = app, provider, base

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        wants_admin = (
            isinstance(request, dict) and request.get("method") == "tools/call"
            and (request.get("params") or {}).get("name") == "admin_secret"
        )  # fmt: skip
        token = dict(scope["headers"]).get(b"authorization", b"").decode().removeprefix("Bearer ")
        granted = self.provider.access.get(token)
        if wants_admin and (granted is None or "admin" not in granted.scopes):
            challenge = (
                f'Bearer error="insufficient_scope", scope="tools admin", '
                f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            )
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b""})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class WrongAuthorizationServer:
    """ASGI middleware: the protected-resource metadata names an authorization server that is not
    there (as some servers do), so only a configured ``authServerMetadataUrl`` finds the real one."""

    def __init__(self, app: Any, base: str) -> None:
        self.app, self.base = app, base

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/oauth-protected-resource"):
            body = json.dumps({
                "resource": f"{self.base}/mcp", "authorization_servers": ["http://127.0.0.1:9/"],
                "scopes_supported": ["tools"], "bearer_methods_supported": ["header"],
            }).encode()  # fmt: skip
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class AdvertiseDocuments:
    """ASGI middleware: the authorization server's metadata says it takes Client ID Metadata
    Documents for public clients (the SDK's server does not advertise them itself)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/.well-known/oauth-authorization-server":
            await self.app(scope, receive, send)
            return
        parts: list[bytes] = []
        start: dict[str, Any] = {}

        async def capture(message: Any) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                parts.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        metadata = json.loads(b"".join(parts))
        metadata["client_id_metadata_document_supported"] = True
        methods = metadata.get("token_endpoint_auth_methods_supported") or []
        metadata["token_endpoint_auth_methods_supported"] = (
            [*methods, "none"] if "none" not in methods else methods
        )
        body = json.dumps(metadata).encode()
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        await send({"type": "http.response.start", "status": start.get("status", 200),
                    "headers": [*headers, (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--wrong-authorization-server", action="store_true")
    parser.add_argument("--cimd", action="store_true")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = ApproveAll(args.token_seconds, documents=args.cimd)
    server = FastMCP(
        "secure",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            required_scopes=["tools"],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["tools", "admin"], default_scopes=["tools"]
            ),
        ),
    )

    @server.tool()
    def secret() -> str:
        """Only for signed-in clients."""
        return "the secret"

    @server.tool()
    def admin_secret() -> str:
        """Only for clients granted the admin scope."""
        return "the admin secret"

    print(f"PORT {port}", flush=True)
    app: Any = StepUp(server.streamable_http_app(), provider, base)
    if args.wrong_authorization_server:
        app = WrongAuthorizationServer(app, base)
    if args.cimd:
        app = AdvertiseDocuments(app)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
