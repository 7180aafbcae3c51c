"""One redaction rule for what piko writes: known secrets and credential-shaped text are masked.

The rule has two parts:

* **known secrets**: every credential piko resolves or reads (API keys from ``auth.json``, the
  environment, ``models.json``, ``--api-key`` and ``!command`` values, OAuth tokens, the values of
  credential headers) is registered here, and any text piko writes has each of them masked;
* **shapes**: credential headers (``Authorization``, ``x-api-key``, ``api-key``, ...), bearer
  tokens, ``"apiKey": "..."`` style fields and the common key formats (``sk-...``,
  ``sk-ant-...``, ``AIza...``, ``xai-...``, ``gsk_...``, ``ghp_...``, ``AKIA...``, ``hf_...``)
  are masked even when piko never saw the value.

A masked value keeps its first four characters when it is at least 16 long, then ``…(redacted)``
(``sk-a…(redacted)``); a shorter one becomes ``…(redacted)``. :func:`redact` applies the whole
rule; it is for diagnostics: traces, logs, warnings and error messages. :func:`mask_known_secrets`
applies the first part only; it is for records of the conversation (session files, HTML
exports), whose code and text must stay as they were unless they hold one of the user's own
credentials. See ``docs/security.md``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

MASK = "…(redacted)"
MIN_SECRET_LENGTH = 8  # shorter values would mask ordinary words
KEEP_PREFIX_FROM = 16  # values this long keep their first four characters

# Hooks whose result is a credential: the tracer registers and masks it.
CREDENTIAL_HOOKS = frozenset({"piko_resolve_api_key"})

_lock = threading.Lock()
_known: set[str] = set()
_ordered: list[str] = []  # longest first, so that a secret containing another is masked whole
_sources: list[Callable[[], Iterable[Any]]] = []
_environment_read = False
_patterns: Any = None


def mask(secret: str) -> str:
    """The masked form of one secret."""
    return (secret[:4] + MASK) if len(secret) >= KEEP_PREFIX_FROM else MASK


def register_secret(value: Any) -> None:
    """Remember ``value`` as a secret to mask wherever piko writes it.

    Non-strings, short values and placeholders such as ``<authenticated>`` are ignored.
    """
    if not isinstance(value, str):
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH or (value.startswith("<") and value.endswith(">")):
        return
    with _lock:
        if value in _known:
            return
        _known.add(value)
        _ordered.append(value)
        _ordered.sort(key=len, reverse=True)


def register_config_value(value: Any) -> None:
    """Remember a configured credential (``apiKey``, a header value) written as a literal.

    An environment variable name or a ``!command`` is not the secret itself; what it resolves
    to is registered when piko resolves it.
    """
    if isinstance(value, str) and not value.startswith("!") and not _looks_like_variable_name(value):
        register_secret(value)


def add_secret_source(source: Callable[[], Iterable[Any]]) -> None:
    """Add a function giving configured credentials (a credential file's values); it is called
    once, on first use, and its values are taken as :func:`register_config_value` takes them."""
    with _lock:
        _sources.append(source)


def is_credential_name(name: str) -> bool:
    """Whether a request header called ``name`` carries a credential (``Authorization``, ``x-api-key``)."""
    lowered = name.lower()
    return any(part in lowered for part in _CREDENTIAL_NAME_PARTS)


def known_secrets() -> list[str]:
    """Every registered secret, longest first (reads pending sources and the environment first)."""
    _drain()
    return list(_ordered)


def mask_known_secrets(text: str) -> str:
    """``text`` with every known secret masked (the first part of the rule)."""
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, mask(secret))
    return text


def redact(text: str) -> str:
    """``text`` with known secrets and credential-shaped values masked (the whole rule)."""
    if not isinstance(text, str):
        text = str(text)
    text = mask_known_secrets(text)
    for pattern, keep in _compiled():
        text = pattern.sub(lambda m, keep=keep: _masked_match(m, keep), text)
    return text


def mask_known_in(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with known secrets masked in every
    string; ``value`` itself when there is nothing to mask."""
    secrets = known_secrets()
    if not secrets:
        return value
    return _walk(value, secrets)


class RedactingLogFilter:
    """A :mod:`logging` filter that redacts a record's message and traceback (never drops one)."""

    def filter(self, record: Any) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            import logging

            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


# ---------------------------------------------------------------------------
# Internals
# ---------------------------------------------------------------------------

_CREDENTIAL_NAME_PARTS = ("auth", "key", "token", "secret", "password", "cookie", "credential")

# Environment variables whose values are credentials (OPENAI_API_KEY, GH_TOKEN, AWS_SECRET_ACCESS_KEY).
_ENV_SUFFIXES = (
    "API_KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "SECRET_KEY",
    "ACCESS_KEY",
    "PASSWORD",
    "PRIVATE_KEY",
)


def _looks_like_variable_name(value: str) -> bool:
    return (
        bool(value) and all(c.isupper() or c.isdigit() or c == "_" for c in value) and not value[0].isdigit()
    )


def _drain() -> None:
    global _environment_read
    if _environment_read and not _sources:
        return
    with _lock:
        sources, _sources[:] = list(_sources), []
        read_environment = not _environment_read
        _environment_read = True
    if read_environment:
        for name, value in os.environ.items():
            if name.upper().endswith(_ENV_SUFFIXES):
                register_secret(value)
    for source in sources:
        try:
            for value in source():
                register_config_value(value)
        except Exception:  # an unreadable credential file holds nothing to mask
            continue


def _walk(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        if any(secret in value for secret in secrets):
            return mask_known_secrets(value)
        return value
    if isinstance(value, dict):
        changed = {k: _walk(v, secrets) for k, v in value.items()}
        return changed if any(changed[k] is not value[k] for k in value) else value
    if isinstance(value, list):
        items = [_walk(v, secrets) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _masked_match(match: Any, keep: int) -> str:
    """Keep the groups before ``keep`` (a header name, ``Bearer ``) and mask group ``keep``."""
    start, end = match.span(keep)
    whole_start = match.start()
    text = match.group(0)
    secret = match.group(keep)
    if MASK in secret:
        return text
    return text[: start - whole_start] + mask(secret) + text[end - whole_start :]


def _compiled() -> list[tuple[Any, int]]:
    global _patterns
    if _patterns is None:
        import re  # only once something is redacted

        header = r"authorization|proxy-authorization|x-api-key|api-key|x-goog-api-key|x-auth-token|cookie|set-cookie"
        field = r"api_?key|apikey|access_?token|refresh_?token|client_?secret|secret|password"
        _patterns = [
            # "Authorization: Bearer xyz", 'x-api-key': 'xyz', authorization=xyz
            (
                re.compile(
                    rf"(?i)\b(?:{header})[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?([^\s\"',;}}\]]+)"
                ),
                1,
            ),
            # "apiKey": "xyz", api_key='xyz'
            (re.compile(rf"(?i)[\"']?\b(?:{field})[\"']?\s*[:=]\s*[\"']([^\"'\s]{{4,}})[\"']"), 1),
            (re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{8,}=*)"), 1),
            (
                re.compile(
                    r"\b(sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}|xai-[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{20,}"
                    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}"
                    r"|hf_[A-Za-z0-9]{20,})"
                ),
                1,
            ),
        ]
    return _patterns


def _reset_for_tests() -> None:
    """Forget every secret and source (tests only)."""
    global _environment_read
    with _lock:
        _known.clear()
        _ordered.clear()
        _sources.clear()
        _environment_read = False
