"""The redaction rule (``piko.lib.redaction``) and the places that apply it.

The planted-key search of ``tests/hardening/test_security_planted_keys.py`` runs the whole
program; these tests pin the rule itself and the places the search cannot reach on its own.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from piko import hookimpl
from piko.lib import redaction
from piko.lib.redaction import mask
from piko.lib.redaction import mask_known_in
from piko.lib.redaction import mask_known_secrets
from piko.lib.redaction import redact
from piko.lib.redaction import register_config_value
from piko.lib.redaction import register_secret

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no known secrets and an environment without credentials."""
    for name in list(os.environ):
        if name.upper().endswith(("API_KEY", "TOKEN", "SECRET", "PASSWORD", "ACCESS_KEY")):
            monkeypatch.delenv(name)
    redaction._reset_for_tests()
    yield
    redaction._reset_for_tests()


def test_the_masked_form_keeps_four_characters_of_a_long_secret_only() -> None:
    assert mask(KEY) == "sk-p…(redacted)"
    assert mask("short-secret") == "…(redacted)"


def test_known_secrets_are_masked_anywhere_and_short_values_and_placeholders_are_not_kept() -> None:
    register_secret("vault-value-123456789")
    register_secret("abc")  # too short to be told from ordinary words
    register_secret("<authenticated>")  # a placeholder, not a key
    assert mask_known_secrets("got vault-value-123456789 twice: vault-value-123456789") == (
        "got vaul…(redacted) twice: vaul…(redacted)"
    )
    assert mask_known_secrets("abc <authenticated>") == "abc <authenticated>"


def test_a_configured_variable_name_or_command_is_not_taken_for_the_secret() -> None:
    register_config_value("OPENAI_API_KEY")
    register_config_value("!op read op://vault/key")
    register_config_value("literal-key-from-models-json")
    assert redaction.known_secrets() == ["literal-key-from-models-json"]


def test_credential_variables_of_the_environment_are_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", "acme-environment-value")
    monkeypatch.setenv("ACME_HOME", "/opt/acme-not-a-secret")
    assert mask_known_secrets("acme-environment-value in /opt/acme-not-a-secret") == (
        "acme…(redacted) in /opt/acme-not-a-secret"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abcdefgh12345678", "Authorization: Bearer abcd…(redacted)"),
        ('{"x-api-key": "k-1234567890"}', '{"x-api-key": "…(redacted)"}'),
        ("{'authorization': 'Bearer tok_0123456789abcdef'}", "{'authorization': 'Bearer tok_…(redacted)'}"),
        (
            "StreamOptions(api_key='key-0123456789abcdef', x=1)",
            "StreamOptions(api_key='key-…(redacted)', x=1)",
        ),
        ('"apiKey": "abcd1234"', '"apiKey": "…(redacted)"'),
        ("token sk-ant-api03-AAAAAAAAAAAAAAAAAAAA ok", "token sk-a…(redacted) ok"),
        ("google AIzaSyA-0123456789abcdefghijklmnopqrstu", "google AIza…(redacted)"),
        (
            "gsk_abcdefghijklmnopqrstuvwx and ghp_abcdefghijklmnopqrstuvwxyz",
            "gsk_…(redacted) and ghp_…(redacted)",
        ),
    ],
)
def test_credential_shapes_are_masked_without_being_known(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected  # applying the rule twice changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "401 Incorrect API key provided: sk-proj-****************************abcd.",
        '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
        "max_tokens: 16384, risk-assessment-framework-version-two, task-runner-with-a-long-name",
        "No API key found for anthropic. Set ANTHROPIC_API_KEY or run `pi login`",
    ],
)
def test_ordinary_provider_messages_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_values_are_masked_in_a_copy_and_untouched_when_nothing_is_known() -> None:
    entry = {"message": {"content": [{"type": "text", "text": "plain"}]}}
    assert mask_known_in(entry) is entry
    register_secret("vault-value-123456789")
    entry = {"message": {"content": [{"type": "text", "text": "key vault-value-123456789"}], "n": 3}}
    masked = mask_known_in(entry)
    assert masked == {"message": {"content": [{"type": "text", "text": "key vaul…(redacted)"}], "n": 3}}
    assert entry["message"]["content"][0]["text"] == "key vault-value-123456789"


def test_an_extension_logger_redacts_messages_and_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    from piko.extensions.extension_api import ExtensionAPI

    register_secret("vault-value-123456789")
    logger = ExtensionAPI("careless", "careless.py", app=None).logger
    with caplog.at_level(logging.WARNING, logger="piko.extensions.careless"):
        logger.warning("using %s", "vault-value-123456789")
        try:
            raise RuntimeError("failed with vault-value-123456789")
        except RuntimeError:
            logger.exception("boom")
    text = caplog.text
    assert "vault-value-123456789" not in text
    assert "using vaul…(redacted)" in text and "RuntimeError: failed with vaul…(redacted)" in text


def test_the_tracer_masks_a_key_a_custom_resolver_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The defect: ``hook piko_resolve_api_key done: 'sk-...'`` in clear."""
    from piko.platform.manager import PikoPluginManager
    from piko.platform.tracing import Tracer

    class Vault:
        @hookimpl
        def piko_resolve_api_key(self, provider: str) -> str:
            return "vault-resolver-answer-0123456789"

    pm = PikoPluginManager()
    stream = io.StringIO()
    Tracer(stream).attach(pm)
    pm.register(Vault(), "vault")
    assert pm.hook.piko_resolve_api_key(provider="acme", app=None, check_only=False) == (
        "vault-resolver-answer-0123456789"
    )
    assert "hook piko_resolve_api_key done: 'vaul…(redacted)'" in stream.getvalue()
    assert "vault-resolver-answer-0123456789" not in stream.getvalue()


def test_a_provider_error_quoting_the_key_is_redacted_at_the_source() -> None:
    from piko.plugins.providers.provider_errors import anthropic_http_error
    from piko.plugins.providers.provider_errors import openai_http_error

    register_secret("vault-value-123456789")
    body = json.dumps({"error": {"message": "Incorrect API key provided: vault-value-123456789"}})
    assert openai_http_error(401, body) == "401 Incorrect API key provided: vaul…(redacted)"
    assert "vault-value" not in anthropic_http_error(401, body)


def test_a_session_file_never_holds_a_known_key_but_the_live_message_does(tmp_path: Path) -> None:
    from piko.data.messages import AssistantMessage
    from piko.data.messages import TextContent
    from piko.data.messages import UserMessage
    from piko.sessions.manager import SessionManager

    register_secret("vault-value-123456789")
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    manager.append_message(UserMessage(content="my key is vault-value-123456789", timestamp=1))
    manager.append_message(AssistantMessage(content=[TextContent(text="noted")], timestamp=2))
    assert manager.session_file is not None
    written = Path(manager.session_file).read_text(encoding="utf-8")
    assert "vault-value-123456789" not in written and "my key is vaul…(redacted)" in written
    assert "vault-value-123456789" in str(manager.build_context().messages[0].content)
