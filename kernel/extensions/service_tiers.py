"""Service tiers per provider family (pi's ``getServiceTiers`` / ``setServiceTier``).

The session keeps one tier per family (``"openai"``, ``"anthropic"``, ``"google"``); the tiers a
family accepts are omp's. A request to a model of the OpenAI APIs carries its family's tier as
``service_tier``; piko's Anthropic and Google providers send none (their tiers are checked and
kept). A tier set while a response streams applies from the next request.
"""

from __future__ import annotations

from typing import Any

SERVICE_TIERS: dict[str, tuple[str, ...]] = {
    "openai": ("auto", "default", "flex", "scale", "priority", "ultrafast"),
    "anthropic": ("priority",),
    "google": ("flex", "priority"),
}


def checked_tier(family: str, tier: Any) -> str:
    """``tier`` as text when ``family`` accepts it; ``ValueError`` naming what it accepts otherwise."""
    accepted = SERVICE_TIERS.get(family)
    if accepted is None:
        raise ValueError(f"unknown service tier family {family!r} (known: {', '.join(SERVICE_TIERS)})")
    if tier not in accepted:
        raise ValueError(f"{family} accepts the service tiers {', '.join(accepted)}; not {tier!r}")
    return str(tier)


def family_of(model: Any) -> str | None:
    """The tier family of ``model``'s API (``None``: one without tiers)."""
    api = str(getattr(model, "api", "") or "")
    if api.startswith(("openai-", "azure-openai-")):
        return "openai"
    if api.startswith("anthropic-"):
        return "anthropic"
    if api.startswith("google-"):
        return "google"
    return None


def request_tier(tiers: dict[str, str], model: Any) -> str | None:
    """The ``service_tier`` a request to ``model`` carries (OpenAI's APIs only)."""
    family = family_of(model)
    return tiers.get(family) if family == "openai" else None
