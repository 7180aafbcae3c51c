"""An MCP server that requires OAuth, and its own authorization server, on 127.0.0.1 (SDK's FastMCP).

The authorization server approves every request at once (no login page): its ``/authorize``
redirects straight to the client's callback with a code. Dynamic client registration is on.
Access tokens live ``--token-seconds`` (then the client must refresh). Prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import time

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.fastmcp import FastMCP
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class ApproveAll:
    """An in-memory authorization server provider that approves everything."""

    def __init__(self, token_seconds: int) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
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
        token, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        expires = int(time.time()) + self.token_seconds
        self.access[token] = AccessToken(token=token, client_id=client_id, scopes=scopes, expires_at=expires,
                                         resource=resource)  # fmt: skip
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=self.token_seconds,
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token-seconds", type=int, default=3600)
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = FastMCP(
        "secure",
        auth_server_provider=ApproveAll(args.token_seconds),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            required_scopes=["tools"],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["tools"], default_scopes=["tools"]
            ),
        ),
    )

    @server.tool()
    def secret() -> str:
        """Only for signed-in clients."""
        return "the secret"

    print(f"PORT {port}", flush=True)
    uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
