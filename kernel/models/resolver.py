"""Choosing models: ``--provider``/``--model`` patterns, ``--models`` scopes, defaults, thinking levels.

The rules are pi's: exact ``provider/id`` or id first, then a substring of id or name preferring
aliases (ids without a date suffix) and, among them, the highest id; a trailing ``:<level>``
sets the thinking level; globs (``anthropic/*``, ``*sonnet*``) select scopes. Without flags the
model comes from the session, then settings, then each provider's default model, then the first
model with credentials.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from piko.data.messages import THINKING_LEVELS
from piko.data.messages import Model
from piko.lib.records import Record
from piko.lib.records import replace

DEFAULT_THINKING_LEVEL = "medium"

# Each provider's preferred model (pi 0.73.1's choices).
DEFAULT_MODEL_PER_PROVIDER: dict[str, str] = {
    "amazon-bedrock": "us.anthropic.claude-opus-4-6-v1",
    "anthropic": "claude-opus-4-7",
    "openai": "gpt-5.4",
    "azure-openai-responses": "gpt-5.4",
    "openai-codex": "gpt-5.5",
    "deepseek": "deepseek-v4-pro",
    "google": "gemini-3.1-pro-preview",
    "google-vertex": "gemini-3.1-pro-preview",
    "github-copilot": "gpt-5.4",
    "openrouter": "moonshotai/kimi-k2.6",
    "vercel-ai-gateway": "zai/glm-5.1",
    "xai": "grok-4.20-0309-reasoning",
    "groq": "openai/gpt-oss-120b",
    "cerebras": "zai-glm-4.7",
    "zai": "glm-5.1",
    "mistral": "devstral-medium-latest",
    "minimax": "MiniMax-M2.7",
    "minimax-cn": "MiniMax-M2.7",
    "moonshotai": "kimi-k2.6",
    "moonshotai-cn": "kimi-k2.6",
    "huggingface": "moonshotai/Kimi-K2.6",
    "fireworks": "accounts/fireworks/models/kimi-k2p6",
    "opencode": "kimi-k2.6",
    "opencode-go": "kimi-k2.6",
    "kimi-coding": "kimi-for-coding",
    "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.6",
    "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.6",
    "xiaomi": "mimo-v2.5-pro",
    "xiaomi-token-plan-cn": "mimo-v2.5-pro",
    "xiaomi-token-plan-ams": "mimo-v2.5-pro",
    "xiaomi-token-plan-sgp": "mimo-v2.5-pro",
}

_DATED = re.compile(r"-\d{8}$")


class ModelResolutionError(ValueError):
    """``--provider``/``--model`` name nothing that exists."""


class ScopedModel(Record, kw_only=False):
    """A model in the Ctrl+P cycle, with the thinking level its pattern asked for."""

    model: Model
    thinking_level: str | None = None


def is_valid_thinking_level(level: str) -> bool:
    return level in THINKING_LEVELS


def supported_thinking_levels(model: Model | None) -> list[str]:
    """The levels a model accepts (``["off"]`` for models without reasoning)."""
    if model is None:
        return list(THINKING_LEVELS)
    if not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level in ("xhigh", "max") and level not in mapping:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model | None, level: str) -> str:
    """The nearest supported level: the requested one, else the next higher, else lower."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def same_model(a: Model | None, b: Model | None) -> bool:
    return a is not None and b is not None and a.provider == b.provider and a.id == b.id


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not _DATED.search(model_id)


def find_exact(reference: str, models: list[Model]) -> Model | None:
    """``provider/id`` or a bare id that names exactly one model (case-insensitive)."""
    ref = reference.strip()
    if not ref:
        return None
    lower = ref.lower()
    canonical = [m for m in models if f"{m.provider}/{m.id}".lower() == lower]
    if len(canonical) == 1:
        return canonical[0]
    if canonical:
        return None
    if "/" in ref:
        provider, _, model_id = ref.partition("/")
        matches = [
            m for m in models if m.provider.lower() == provider.lower() and m.id.lower() == model_id.lower()
        ]
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    by_id = [m for m in models if m.id.lower() == lower]
    return by_id[0] if len(by_id) == 1 else None


def match_model(pattern: str, models: list[Model]) -> Model | None:
    """Exact match, else the best partial match (aliases first, highest id)."""
    exact = find_exact(pattern, models)
    if exact is not None:
        return exact
    needle = pattern.lower()
    matches = [m for m in models if needle in m.id.lower() or (m.name and needle in m.name.lower())]
    if not matches:
        return None
    aliases = [m for m in matches if _is_alias(m.id)]
    pool = aliases or matches
    return max(pool, key=lambda m: m.id)


def parse_model_pattern(
    pattern: str, models: list[Model], *, strict: bool = False
) -> tuple[Model | None, str | None, str | None]:
    """``(model, thinking level, warning)`` for ``pattern``, which may end in ``:<level>``."""
    model = match_model(pattern, models)
    if model is not None:
        return model, None, None
    if ":" not in pattern:
        return None, None, None
    prefix, _, suffix = pattern.rpartition(":")
    if is_valid_thinking_level(suffix):
        model, _level, warning = parse_model_pattern(prefix, models, strict=strict)
        if model is not None:
            return model, (None if warning else suffix), warning
        return None, None, warning
    if strict:
        return None, None, None
    model, _level, warning = parse_model_pattern(prefix, models, strict=strict)
    if model is not None:
        return (
            model,
            None,
            f'Invalid thinking level "{suffix}" in pattern "{pattern}". Using default instead.',
        )
    return None, None, warning


def _exact_match(text: str, models: list[Model]) -> Model | None:
    """The model whose id or ``provider/id`` is ``text``, ignoring case."""
    lower = text.lower()
    return next((m for m in models if m.id.lower() == lower or f"{m.provider}/{m.id}".lower() == lower), None)


def resolve_cli_model(
    registry: Any, provider: str | None, model: str | None
) -> tuple[Model | None, str | None, str | None]:
    """``(model, thinking level, warning)`` for ``--provider``/``--model``; raises on no match."""
    if not model:
        return None, None, None
    names = registry.model_providers()
    if not names:
        raise ModelResolutionError(
            "No models available. Check your installation or add models to models.json."
        )
    providers = {name.lower(): name for name in names}
    chosen = providers.get(provider.lower()) if provider else None
    if provider and chosen is None:
        why = registry.unavailable(provider) if hasattr(registry, "unavailable") else None
        raise ModelResolutionError(
            why or f'Unknown provider "{provider}". Use --list-models to see available providers/models.'
        )
    pattern = model
    inferred = False
    if chosen is None and "/" in model:
        maybe = providers.get(model.split("/", 1)[0].lower())
        if maybe is not None:
            chosen, pattern, inferred = maybe, model.split("/", 1)[1], True
    if chosen is None:
        exact = _exact_match(model, registry.all_models())
        if exact is not None:
            return exact, None, None
    if provider and chosen and model.lower().startswith(f"{chosen}/".lower()):
        pattern = model[len(chosen) + 1 :]
    # with a provider known only its models are needed (the others may not even be built)
    candidates = registry.models_of(chosen) if chosen else registry.all_models()
    found, level, warning = parse_model_pattern(pattern, candidates, strict=True)
    if found is not None:
        return found, level, warning
    if inferred:
        models = registry.all_models()
        exact = _exact_match(model, models)
        if exact is not None:
            return exact, None, None
        found, level, warning = parse_model_pattern(model, models, strict=True)
        if found is not None:
            return found, level, warning
    refused = _refused(registry, chosen, pattern, model)
    if refused:
        raise ModelResolutionError(refused)
    if chosen and _policy_allows(registry, chosen, pattern):
        own = registry.models_of(chosen)
        if own:
            default_id = DEFAULT_MODEL_PER_PROVIDER.get(chosen)
            base = next((m for m in own if m.id == default_id), own[0])
            note = f'Model "{pattern}" not found for provider "{chosen}". Using custom model id.'
            return (
                replace(base, id=pattern, name=pattern),
                None,
                (f"{warning} {note}" if warning else note),
            )
    shown = f"{chosen}/{pattern}" if chosen else model
    if chosen and not _policy_allows(registry, chosen, pattern):
        policy = registry.app.policy
        raise ModelResolutionError(
            policy.violation("models", f"{chosen}/{pattern}") or "refused by the managed policy"
        )
    why = None if chosen else unavailable_provider(registry, model)
    raise ModelResolutionError(
        why or f'Model "{shown}" not found. Use --list-models to see available models.'
    )


def unavailable_provider(registry: Any, pattern: str) -> str | None:
    """Why the provider ``pattern`` starts with (``acme/acme-1``, ``acme/*``) is not there (a policy,
    or its plugin is blocked or broken), when it names one piko does not have."""
    if "/" not in pattern or not hasattr(registry, "unavailable"):
        return None
    prefix = pattern.split("/", 1)[0]
    if any(name.lower() == prefix.lower() for name in registry.model_providers()):
        return None
    return registry.unavailable(prefix)  # type: ignore[no-any-return]


def _refused(registry: Any, provider: str | None, pattern: str, model: str) -> str | None:
    """The managed policy's line when the model asked for is one it refuses."""
    if not hasattr(registry, "model_refused"):
        return None
    if provider:
        return registry.model_refused(provider, pattern)  # type: ignore[no-any-return]
    if "/" in model:
        return registry.model_refused(*model.split("/", 1))  # type: ignore[no-any-return]
    return None


def _policy_allows(registry: Any, provider: str, model_id: str) -> bool:
    """Whether a custom model id may be used with ``provider`` under the managed policy."""
    policy = getattr(getattr(registry, "app", None), "policy", None)
    return policy is None or policy.allows_model(provider, model_id)


def resolve_model_scope(patterns: list[str], registry: Any) -> tuple[list[ScopedModel], list[str]]:
    """Models for ``--models`` / settings ``enabledModels``, and warnings for patterns that match nothing."""
    available = registry.available_models()
    scoped: list[ScopedModel] = []
    warnings: list[str] = []

    def add(model: Model, level: str | None) -> None:
        if not any(same_model(s.model, model) for s in scoped):
            scoped.append(ScopedModel(model, level))

    for pattern in patterns:
        if any(ch in pattern for ch in "*?["):
            glob, level = pattern, None
            if ":" in pattern and is_valid_thinking_level(pattern.rsplit(":", 1)[1]):
                glob, level = pattern.rsplit(":", 1)
            glob_lower = glob.lower()
            matching = [
                m
                for m in available
                if fnmatch.fnmatchcase(f"{m.provider}/{m.id}".lower(), glob_lower)
                or fnmatch.fnmatchcase(m.id.lower(), glob_lower)
            ]
            if not matching:
                warnings.append(
                    unavailable_provider(registry, pattern) or f'No models match pattern "{pattern}"'
                )
            for model in matching:
                add(model, level)
            continue
        model, level, warning = parse_model_pattern(pattern, available)
        if warning:
            warnings.append(warning)
        if model is None:
            warnings.append(unavailable_provider(registry, pattern) or f'No models match pattern "{pattern}"')
            continue
        add(model, level)
    return scoped, warnings


def default_available_model(registry: Any) -> Model | None:
    """Each provider's default model in pi's order, else the first model with credentials."""
    available = registry.available_models()
    if not available:
        return None
    for provider, model_id in DEFAULT_MODEL_PER_PROVIDER.items():
        for model in available:
            if model.provider == provider and model.id == model_id:
                return model
    return available[0]
