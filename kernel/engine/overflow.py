"""What a failed (or suspiciously full) response means: "context too long", a transient failure,
or neither. Compaction and auto-retry decide on it.

The error texts are the plugins' to read (``piko_classify_error``; the built-in
``providers.error-kinds`` knows pi's phrasings). Some providers do not fail at all: z.ai accepts
an oversized prompt (reported input above the context window) and Xiaomi MiMo truncates it and
stops with ``length`` and no output; those cases are read here from the usage.
"""

from __future__ import annotations

from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model

ERROR_KINDS = ("overflow", "retryable", "fatal")


def error_kind(pm: Any, message: AssistantMessage, model: Model | None = None) -> str | None:
    """The plugins' reading of a failed response (``None`` when it did not fail)."""
    if message.stop_reason != "error" or not message.error_message:
        return None
    if pm is None:
        return "fatal"
    kind = pm.hook.piko_classify_error(message=message, model=model)
    return kind if kind in ERROR_KINDS else "fatal"


def is_context_overflow(
    message: AssistantMessage,
    context_window: int | None = None,
    *,
    pm: Any = None,
    model: Model | None = None,
) -> bool:
    """Whether ``message`` reports that the request exceeded the model's context window.

    A failed response is an overflow when a plugin says so (``pm`` asks them). ``context_window``
    enables the silent cases: a successful response whose input (plus cache reads) exceeds the
    window, or a ``length`` stop with no output whose input fills 99% of it.
    """
    if error_kind(pm, message, model) == "overflow":
        return True
    if context_window:
        usage = message.usage
        input_tokens = usage.input + usage.cache_read
        if message.stop_reason == "stop" and input_tokens > context_window:
            return True
        if message.stop_reason == "length" and usage.output == 0 and input_tokens >= context_window * 0.99:
            return True
    return False
