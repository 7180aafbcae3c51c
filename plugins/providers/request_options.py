"""Request details several provider APIs share: cache retention, max tokens, thinking budgets,
base URLs, SDK retries, header layers and GitHub Copilot's per-request headers."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from collections.abc import Mapping

from piko.data.messages import ImageContent
from piko.data.messages import Message
from piko.data.messages import Model
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import StreamOptions
from piko.lib.provider_env import provider_getenv
from piko.lib.records import replace
from piko.plugins.providers.provider_errors import ProviderError

DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_OUTPUT_TOKENS = 1024


def resolve_cache_retention(value: str | None) -> str:
    """``none``/``short``/``long``; unset means ``short`` unless ``PI_CACHE_RETENTION=long``."""
    if value:
        return value
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


def base_max_tokens(model: Model, options: StreamOptions) -> int | None:
    """The requested output limit: the option, else the model's (at most 32000)."""
    if options.max_tokens:
        return int(options.max_tokens)
    return min(model.max_tokens, 32000) if model.max_tokens > 0 else None


def adjust_max_tokens_for_thinking(
    base: int, model_max: int, level: str, budgets: Mapping[str, int] | None = None
) -> tuple[int, int]:
    """``(max_tokens, thinking_budget)`` for budget-based thinking (``xhigh`` and ``max`` count as ``high``)."""
    merged = {**DEFAULT_THINKING_BUDGETS, **(budgets or {})}
    key = "high" if level in ("xhigh", "max") else level
    budget = int(merged.get(key, DEFAULT_THINKING_BUDGETS["high"]))
    max_tokens = min(base + budget, model_max)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_OUTPUT_TOKENS)
    return max_tokens, budget


def layer_headers(own: Mapping[str, str], model: Model, options: StreamOptions) -> dict[str, str]:
    """The API's own request headers, then the model's (models.json), then the request's: later
    ones win."""
    headers = dict(own)
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    return headers


def without_sdk_retries(options: StreamOptions) -> StreamOptions:
    """No retries unless asked for (``options.extra["max_retries"]``), as the Google SDK does and
    as pi configures Mistral's."""
    if "max_retries" in options.extra:
        return options
    return replace(options, extra={**options.extra, "max_retries": 0})


_PLACEHOLDER = re.compile(r"\{([A-Z_][A-Z0-9_]*)\}")


def resolve_base_url(model: Model) -> str:
    """The model's base URL with ``{ENV_VAR}`` placeholders (Cloudflare) filled from the provider's
    auth.json ``env`` map or the environment."""
    url = model.base_url
    if "{" not in url:
        return url

    def substitute(match: re.Match[str]) -> str:
        value = provider_getenv(model.provider, match.group(1))
        if not value:
            raise ProviderError(f"{match.group(1)} is required for provider {model.provider} but is not set.")
        return value

    return _PLACEHOLDER.sub(substitute, url)


def has_copilot_vision_input(messages: Iterable[Message]) -> bool:
    """Whether a user message or tool result carries an image (GitHub Copilot's vision header)."""
    for msg in messages:
        if isinstance(msg, UserMessage | ToolResultMessage) and isinstance(msg.content, list):
            if any(isinstance(b, ImageContent) for b in msg.content):
                return True
    return False


def copilot_dynamic_headers(messages: list[Message]) -> dict[str, str]:
    """GitHub Copilot's per-request headers: initiator, intent, vision."""
    last = messages[-1] if messages else None
    headers = {
        "X-Initiator": "agent" if last is not None and not isinstance(last, UserMessage) else "user",
        "Openai-Intent": "conversation-edits",
    }
    if has_copilot_vision_input(messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers
