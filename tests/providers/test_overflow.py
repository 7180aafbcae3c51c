"""Context overflow detection: pi's provider phrasings (the ``providers.error-kinds`` plugin's
answer to ``piko_classify_error``) and the silent cases the session reads from the usage."""

from __future__ import annotations

import pytest

from piko.data.messages import AssistantMessage
from piko.data.messages import Usage
from piko.engine.overflow import is_context_overflow as overflow_in
from piko.platform.manager import PikoPluginManager
from piko.plugins.providers import error_kinds
from piko.plugins.providers.error_kinds import OVERFLOW_PATTERNS

PM = PikoPluginManager()
PM.register(error_kinds, "providers.error-kinds")


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    return overflow_in(message, context_window, pm=PM)


def failed(text: str) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=text)


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",
        '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
        "ValidationException: Input is too long for requested model.",
        "400 Your input exceeds the context window of this model.",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
        "Please reduce the length of the messages or completion",
        "This endpoint's maximum context length is 128000 tokens. However, you requested about 130000 tokens",
        "prompt token count of 140000 exceeds the limit of 128000",
        "the request exceeds the available context size, try increasing it",
        "tokens to keep from the initial prompt is greater than the context length",
        "invalid params, context window exceeds limit",
        "Your request exceeded model token limit: 262144 (requested: 300000)",
        "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
        "model_context_window_exceeded",
        "prompt too long; exceeded max context length by 512 tokens",
        "context_length_exceeded",
        "Too many tokens in the request",
        "token limit exceeded",
        "400 status code (no body)",
        "413 (no body)",
    ],
)
def test_provider_phrasings(text: str) -> None:
    assert is_context_overflow(failed(text))


def test_pattern_count_matches_pi() -> None:
    assert len(OVERFLOW_PATTERNS) == 20


@pytest.mark.parametrize(
    "text",
    [
        "ThrottlingException: Too many tokens, please wait before trying again.".replace(
            "ThrottlingException", "Throttling error"
        ),
        "429 rate limit: too many tokens per minute",
        "Too many requests: too many tokens",
        "500 The server had an error while processing your request. Sorry about that!",
        "Connection error.",
        "the 400 status code (no body) came late",  # only at the start counts
    ],
)
def test_non_overflow_errors(text: str) -> None:
    assert not is_context_overflow(failed(text))


def test_an_overflow_phrase_needs_an_error_stop() -> None:
    assert not is_context_overflow(AssistantMessage(stop_reason="stop", error_message="prompt is too long"))


def test_silent_overflow_cases() -> None:
    over = AssistantMessage(stop_reason="stop", usage=Usage(input=120_000, cache_read=10_000, output=5))
    assert is_context_overflow(over, 128_000)
    assert not is_context_overflow(over)  # needs the window
    assert not is_context_overflow(over, 200_000)
    truncated = AssistantMessage(stop_reason="length", usage=Usage(input=127_000, output=0))
    assert is_context_overflow(truncated, 128_000)
    assert not is_context_overflow(
        AssistantMessage(stop_reason="length", usage=Usage(input=127_000, output=3)), 128_000
    )
    assert not is_context_overflow(
        AssistantMessage(stop_reason="length", usage=Usage(input=100_000, output=0)), 128_000
    )


def test_a_plugin_answering_piko_classify_error_first_is_believed() -> None:
    from piko import hookimpl

    class Gateway:
        @hookimpl(tryfirst=True)
        def piko_classify_error(self, message: AssistantMessage, model: object) -> str | None:
            return "overflow" if "mailbox full" in message.error_message else None

    pm = PikoPluginManager()
    pm.register(error_kinds, "providers.error-kinds")
    assert not overflow_in(failed("400 mailbox full"), pm=pm)
    pm.register(Gateway(), "acme.gateway")
    assert overflow_in(failed("400 mailbox full"), pm=pm)
    assert overflow_in(failed("prompt is too long"), pm=pm)  # the others still answered by pi's phrasings
