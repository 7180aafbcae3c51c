"""Google's OAuth 2.0 token endpoint (``POST .../token``) for the scripted server.

A turn answers one token request with ``{"access_token", "expires_in", "token_type"}``: the
turn's ``access_token`` and ``expires_in`` (defaults: ``ya29.test-token-N`` for the Nth request,
3599 s). ``status`` with an ``error_body`` (``{"error": "invalid_grant", ...}``) answers a failure.
The posted form is in ``server.requests[i]["body"]`` as text; :func:`form` parses it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from support.llm_server import TurnContext
from support.llm_server import WireFormat
from support.llm_server import as_bytes
from support.llm_server import posted_to
from support.llm_server import register_format


def form(request: dict[str, Any]) -> dict[str, str]:
    """The ``application/x-www-form-urlencoded`` body of a recorded request."""
    body = request.get("body")
    return dict(parse_qsl(body if isinstance(body, str) else ""))


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    token = {
        "access_token": turn.get("access_token") or f"ya29.test-token-{ctx.seq}",
        "expires_in": turn.get("expires_in", 3599),
        "token_type": "Bearer",
    }
    return [as_bytes(token)]


def error_body(status: int, ctx: TurnContext) -> bytes:
    return as_bytes({"error": "invalid_grant", "error_description": "Bad request."})


register_format(
    WireFormat.of_module(__name__, "google-oauth-token", posted_to("/token"), content_type="application/json")
)
