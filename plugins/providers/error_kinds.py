"""What providers' error texts mean: the phrasings pi recognises as a context overflow or as a
transient failure worth retrying, answered last to ``piko_classify_error``.

A provider plugin with its own phrasing answers the hook before this one; pi matches these
patterns whatever the provider, since gateways (OpenRouter, proxies) pass other providers'
errors through.
"""

from __future__ import annotations

import functools
import re

from piko import hookimpl
from piko.data.messages import AssistantMessage
from piko.data.messages import Model

# Provider error messages meaning the input exceeds the context window (case-insensitive).
OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"prompt is too long",  # Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"
    r"request_too_large",  # Anthropic: request body over the byte limit (HTTP 413)
    r"input is too long for requested model",  # Amazon Bedrock
    r"exceeds the context window",  # OpenAI (completions and responses)
    r"input token count.*exceeds the maximum",  # Google Gemini
    r"maximum prompt length is \d+",  # xAI Grok
    r"reduce the length of the messages",  # Groq
    r"maximum context length is \d+ tokens",  # OpenRouter, all backends
    r"exceeds the limit of \d+",  # GitHub Copilot
    r"exceeds the available context size",  # llama.cpp server
    r"greater than the context length",  # LM Studio
    r"context window exceeds limit",  # MiniMax
    r"exceeded model token limit",  # Kimi For Coding
    r"too large for model with \d+ maximum context length",  # Mistral
    r"model_context_window_exceeded",  # z.ai finish reason surfaced as an error
    r"prompt too long; exceeded (?:max )?context length",  # Ollama
    r"context[_ ]length[_ ]exceeded",  # generic
    r"too many tokens",  # generic
    r"token limit exceeded",  # generic
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras: 400/413 without a body
)

# Errors that may contain an overflow phrase but are not overflows (throttling, rate limits).
NON_OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"^(Throttling error|Service unavailable):",  # Amazon Bedrock
    r"rate limit",
    r"too many requests",
)

# pi's errors worth retrying (overloads, rate limits, 5xx, network trouble)
RETRYABLE_PATTERNS: tuple[str, ...] = (
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504",
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error",
    r"connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed",
    r"fetch failed|upstream.?connect|reset before headers|socket hang up|ended without",
    r"http2 request did not get a response|timed? out|timeout|terminated|retry delay",
)


@functools.cache
def _matcher(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled alternation per pattern list, made the first time an error is classified."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def classify(text: str) -> str:
    """``"overflow"``, ``"retryable"`` or ``"fatal"`` for a provider's error text."""
    if not _matcher(NON_OVERFLOW_PATTERNS).search(text) and _matcher(OVERFLOW_PATTERNS).search(text):
        return "overflow"
    if _matcher(RETRYABLE_PATTERNS).search(text):
        return "retryable"
    return "fatal"


@hookimpl(trylast=True)
def piko_classify_error(message: AssistantMessage, model: Model | None) -> str | None:
    return classify(message.error_message) if message.error_message else None
