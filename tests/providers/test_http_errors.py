"""An HTTP error from a provider's server is one ``error`` event, worded as pi's SDK for that API
words it, and sent once: these SDKs do not retry a refused request (pi asks Mistral's for no
retries). Retried statuses are tested in each provider's own module."""

from __future__ import annotations

import pytest
from support.provider_wires import WIRES
from support.stream_runs import refused

from piko.data.streaming import StreamOptions

GOOGLE_400 = (
    '{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}'
)
GOOGLE_429 = (
    '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",'
    '"status":"RESOURCE_EXHAUSTED"}}'
)
MISTRAL_401 = (
    'Mistral API error (401): {"message":"Unauthorized","request_id":"0b6a3e1c9f2d4e5a8b7c6d5e4f3a2b1c"}'
)
MISTRAL_429 = (
    'Mistral API error (429): {"object":"error","message":"Rate limit exceeded","type":"rate_limited",'
    '"param":null,"code":"1300"}'
)


@pytest.mark.parametrize(
    ("api", "status", "message"),
    [
        ("google-generative-ai", 400, GOOGLE_400),  # the body itself
        ("google-generative-ai", 429, GOOGLE_429),
        ("mistral-conversations", 401, MISTRAL_401),
        ("mistral-conversations", 429, MISTRAL_429),
        ("openai-responses", 400, "400 Invalid request."),  # the OpenAI SDK's status and message
        ("openai-responses", 401, "401 Incorrect API key provided."),
        ("openai-responses", 404, "404 The model does not exist or you do not have access to it."),
        ("azure-openai-responses", 400, "400 Invalid request."),
        ("azure-openai-responses", 401, "401 Incorrect API key provided."),
    ],
)
def test_a_refused_request_is_one_error_worded_as_pis_sdk_words_it(
    api: str, status: int, message: str
) -> None:
    wire = WIRES[api]
    assert refused(wire.stream, wire.model, StreamOptions(api_key="test-key"), {"status": status}) == (
        message,
        1,
    )
