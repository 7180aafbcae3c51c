"""Provider failures and their wording, as the vendor SDKs and pi word them (redacted: no key shows)."""

from __future__ import annotations

import json
from typing import Any

from piko.lib.jsonio import dumps
from piko.lib.redaction import redact

ABORTED_MESSAGE = "Request was aborted"  # pi's wording once the response has started
ABORTED_BEFORE_REQUEST = "Request was aborted."  # the SDKs' wording before it has


class ProviderError(Exception):
    """A failure whose message is what pi shows (``500 The server had an error ...``)."""


def sdk_error_message(status: int | None, error: Any, fallback: str | None) -> str:
    """The OpenAI/Anthropic SDKs' ``APIError`` message: ``"<status> <message>"``, redacted (a
    server may quote the key it was sent)."""
    return redact(_sdk_error_message(status, error, fallback))


def _sdk_error_message(status: int | None, error: Any, fallback: str | None) -> str:
    if isinstance(error, dict) and error.get("message"):
        message = error["message"]
        msg: str | None = message if isinstance(message, str) else dumps(message)
    elif error:
        msg = dumps(error)
    else:
        msg = fallback
    if status and msg:
        return f"{status} {msg}"
    if status:
        return f"{status} status code (no body)"
    if msg:
        return msg
    return "(no status code or body)"


def _parse_error_body(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def openai_http_error(status: int, text: str) -> str:
    """An HTTP error as the OpenAI SDK words it (its body's ``error`` object), plus OpenRouter's
    ``error.metadata.raw`` on its own line, as pi adds it."""
    body = _parse_error_body(text)
    error = body.get("error") if isinstance(body, dict) else None
    message = sdk_error_message(status, error, None if body is not None else text)
    raw = (
        error.get("metadata", {}).get("raw")
        if isinstance(error, dict) and isinstance(error.get("metadata"), dict)
        else None
    )
    if raw:
        message += f"\n{redact(str(raw))}"
    return message


def anthropic_http_error(status: int, text: str) -> str:
    """An HTTP error as the Anthropic SDK words it (the whole JSON body, compact)."""
    body = _parse_error_body(text)
    return sdk_error_message(status, body, None if body is not None else text)


def network_error_message(exc: BaseException, *, streaming: bool) -> str:
    """A network failure worded as pi shows it: ``Connection error.``, ``Request timed out.``, or
    ``terminated`` when a started response is cut."""
    from piko.plugins.providers.plain_http import is_timeout

    if is_timeout(exc):
        return "Request timed out."
    if streaming:
        return "terminated"
    return "Connection error."
