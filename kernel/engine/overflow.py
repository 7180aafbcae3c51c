"""Context overflow detection: does a failed (or suspiciously full) response mean "context too long"?

Providers word the error differently; these are the phrasings pi recognises. Some providers do
not fail at all: z.ai accepts an oversized prompt (reported input above the context window) and
Xiaomi MiMo truncates it and stops with ``length`` and no output. Compaction uses this to decide
between compacting and retrying.
"""

from __future__ import annotations

import functools
import re

from piko.data.messages import AssistantMessage

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


@functools.cache
def _matcher(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled alternation per pattern list, made the first time an error is classified."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` reports that the request exceeded the model's context window.

    ``context_window`` enables the silent cases: a successful response whose input (plus cache
    reads) exceeds the window, or a ``length`` stop with no output whose input fills 99% of it.
    """
    if message.stop_reason == "error" and message.error_message:
        text = message.error_message
        if not _matcher(NON_OVERFLOW_PATTERNS).search(text) and _matcher(OVERFLOW_PATTERNS).search(text):
            return True
    if context_window:
        usage = message.usage
        input_tokens = usage.input + usage.cache_read
        if message.stop_reason == "stop" and input_tokens > context_window:
            return True
        if message.stop_reason == "length" and usage.output == 0 and input_tokens >= context_window * 0.99:
            return True
    return False
