"""The cost a provider billed, where its usage reports one (OpenRouter), read as pi 1.6 reads it."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["billed_cost", "is_openrouter"]


def is_openrouter(model: Any) -> bool:
    """Whether requests for ``model`` go to OpenRouter (its provider, or a base URL on openrouter.ai)."""
    return model.provider == "openrouter" or "openrouter.ai" in (model.base_url or "")


def _amount(value: Any) -> float | None:
    """``value`` as a cost in dollars: a finite number, not negative; None for anything else."""
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    ):
        return float(value)
    return None


def billed_cost(raw_usage: dict[str, Any]) -> float | None:
    """What the response cost in dollars by OpenRouter's accounting in ``raw_usage``, or None when
    it is missing or incomplete: ``cost``, plus the upstream inference cost for a request on the
    user's own key (``is_byok``)."""
    cost = _amount(raw_usage.get("cost"))
    byok = raw_usage.get("is_byok")
    if cost is None or byok is not True:
        return cost if byok is False else None
    details = raw_usage.get("cost_details")
    if not isinstance(details, dict) or "upstream_inference_cost" not in details:
        return None
    if details["upstream_inference_cost"] is not None:  # null: given as its two parts
        upstream = _amount(details["upstream_inference_cost"])
        return None if upstream is None else cost + upstream
    prompt = _amount(details.get("upstream_inference_prompt_cost"))
    completion = _amount(details.get("upstream_inference_completions_cost"))
    if prompt is None or completion is None:
        return None
    return cost + prompt + completion
