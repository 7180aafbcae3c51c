"""``/model``, ``/scoped-models`` and ``/thinking``: choosing the model, the Ctrl+P cycle, the thinking level."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.command_api import PickItem

THINKING_DESCRIPTIONS = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning (~1k tokens)",
    "low": "Light reasoning (~2k tokens)",
    "medium": "Moderate reasoning (~8k tokens)",
    "high": "Deep reasoning (~16k tokens)",
    "xhigh": "Maximum reasoning (~32k tokens)",
    "max": "The most reasoning the model offers",
}

ANTHROPIC_SUBSCRIPTION_AUTH_WARNING = (
    "Anthropic subscription auth is active. Third-party harness usage draws from extra usage and is "
    "billed per token, not your Claude plan limits. Manage extra usage at https://claude.ai/settings/usage."
)
NO_PROVIDERS_HINT = "Only showing models from configured providers. Use /login to add providers."

_warned: weakref.WeakSet[Any] = weakref.WeakSet()  # apps that showed the subscription warning
_SCOPE = object()  # the "switch scope" row of the model selector


# ---------------------------------------------------------------------------
# /model
# ---------------------------------------------------------------------------


def model_candidates(session: Any) -> list[Any]:
    """The models ``/model <name>`` may name: the scoped ones if any, else all with credentials."""
    if session.models.scoped_models:
        return [s.model for s in session.models.scoped_models]
    try:
        return list(session.model_registry.available_models())
    except Exception:
        return []


def model_completions(session: Any, prefix: str) -> list[str]:
    """``provider/id`` of the candidate models matching ``prefix`` (fuzzy, best first)."""
    from piko.lib.fuzzy import fuzzy_filter

    models = model_candidates(session)
    matches = fuzzy_filter(models, prefix, lambda m: f"{m.id} {m.provider}")
    return [f"{m.provider}/{m.id}" for m in matches]


def _search_text(model: Any) -> str:
    return f"{model.id} {model.provider} {model.provider}/{model.id} {model.provider} {model.id}"


def _refused_by_policy(registry: Any, search: str | None) -> str | None:
    """The managed policy's line when ``search`` names a model (``provider/id``) it refuses."""
    if not search or "/" not in search or not hasattr(registry, "model_refused"):
        return None
    provider, model_id = search.split("/", 1)
    refused: str | None = registry.model_refused(provider, model_id)
    return refused


def _sorted_for_selector(models: list[Any], current: Any) -> list[Any]:
    from piko.models.resolver import same_model

    return sorted(models, key=lambda m: (not same_model(m, current), m.provider.lower()))


async def model_command(ctx: InteractiveContext, args: str) -> None:
    """``/model [search]``: switch directly on an exact match, else choose in a selector."""
    from piko.models.resolver import find_exact

    session = ctx.session
    term = args.strip()
    if term:
        exact = find_exact(term, model_candidates(session))
        if exact is not None:
            await switch_model(ctx, exact)
            return
    chosen = await choose_model(ctx, term or None)
    if chosen is not None:
        await switch_model(ctx, chosen)


async def choose_model(ctx: InteractiveContext, search: str | None = None) -> Any:
    """The model selector (pi's): all models with credentials, or the scoped ones; ``None`` if cancelled."""
    from piko.lib.fuzzy import fuzzy_filter
    from piko.models.resolver import same_model

    session = ctx.session
    try:
        available = list(session.model_registry.available_models())
    except Exception as exc:
        ctx.show_error(str(exc) or type(exc).__name__)
        return None
    scoped = [s.model for s in session.models.scoped_models]
    scope = "scoped" if scoped else "all"
    while True:
        pool = scoped if scope == "scoped" else _sorted_for_selector(available, session.model)
        if search:
            pool = fuzzy_filter(pool, search, _search_text)
        if not pool and not scoped:
            refused = _refused_by_policy(session.model_registry, search)
            if refused:
                ctx.show_error(refused)
            elif search:
                ctx.show_error(f'No model matches "{search}". {NO_PROVIDERS_HINT}')
            else:
                ctx.show_info(f"No models available. {NO_PROVIDERS_HINT}")
            return None
        items: list[PickItem] = []
        if scoped:
            other = "all" if scope == "scoped" else "scoped"
            items.append(PickItem(label=f"Scope: {scope} (choose to show {other})", value=_SCOPE))
        current_value = None
        for model in pool:
            is_current = same_model(model, session.model)
            items.append(
                PickItem(
                    label=f"{model.id} [{model.provider}]",
                    value=model,
                    detail=f"Model Name: {model.name or model.id}",
                    current=is_current,
                )
            )
            if is_current:
                current_value = model
        title = "Select model" if scoped else f"Select model\n{NO_PROVIDERS_HINT}"
        choice = await ctx.pick(title, items, initial=current_value)
        if choice is _SCOPE:
            scope = "all" if scope == "scoped" else "scoped"
            continue
        return choice


async def switch_model(ctx: InteractiveContext, model: Any) -> bool:
    """Switch to ``model`` (recorded in the session and settings) and say so; False on failure."""
    try:
        await ctx.session.set_model(model)
    except Exception as exc:
        ctx.show_error(str(exc) or type(exc).__name__)
        return False
    ctx.show_info(f"Model: {model.id}")
    await maybe_warn_anthropic_subscription(ctx, model)
    return True


async def maybe_warn_anthropic_subscription(ctx: InteractiveContext, model: Any = None) -> None:
    """pi's once-per-run warning when Anthropic is used through a Claude subscription (OAuth)."""
    from piko.plugins.modes.interactive.commands.auth_bridge import stored_credential
    from piko.plugins.modes.interactive.commands.common import warn

    app = ctx.app
    model = model if model is not None else ctx.session.model
    if model is None or model.provider != "anthropic" or app in _warned:
        return
    if app.settings.get("warnings.anthropicExtraUsage") is False:
        return
    credential = stored_credential(app, "anthropic")
    subscription = bool(credential and credential.get("type") == "oauth")
    if not subscription:
        try:
            key = await asyncio.to_thread(ctx.session.model_registry.api_key, "anthropic")
        except Exception:
            return
        subscription = isinstance(key, str) and key.startswith("sk-ant-oat")
    if subscription:
        _warned.add(app)
        warn(ctx, ANTHROPIC_SUBSCRIPTION_AUTH_WARNING)


# ---------------------------------------------------------------------------
# /scoped-models
# ---------------------------------------------------------------------------

_SAVE, _ENABLE_ALL, _CLEAR_ALL = ("action", "save"), ("action", "enable-all"), ("action", "clear-all")


def toggle(enabled: list[str] | None, model_id: str) -> list[str]:
    """Enable or disable one model; from "all enabled" the first toggle keeps only that model."""
    if enabled is None:
        return [model_id]
    return [i for i in enabled if i != model_id] if model_id in enabled else [*enabled, model_id]


def sorted_ids(enabled: list[str] | None, all_ids: list[str]) -> list[str]:
    """Enabled models first, in their cycle order, then the others."""
    if enabled is None:
        return list(all_ids)
    return [*enabled, *(i for i in all_ids if i not in enabled)]


def _apply_scope(session: Any, enabled: list[str] | None, total: int) -> None:
    """Session-only: the Ctrl+P cycle follows ``enabled`` (all or none enabled means no filter)."""
    from piko.models.resolver import resolve_model_scope

    if enabled and len(enabled) < total:
        scoped, _warnings = resolve_model_scope(list(enabled), session.model_registry)
        session.models.scoped_models = scoped
    else:
        session.models.scoped_models = []


async def scoped_models_command(ctx: InteractiveContext, args: str) -> None:
    """``/scoped-models``: toggle the models Ctrl+P cycles through; save them as ``enabledModels``."""
    from piko.models.resolver import resolve_model_scope

    session = ctx.session
    app = ctx.app
    models = list(session.model_registry.available_models())
    if not models:
        ctx.show_info("No models available")
        return
    by_id = {f"{m.provider}/{m.id}": m for m in models}
    all_ids = list(by_id)
    enabled: list[str] | None = None
    if session.models.scoped_models:
        enabled = [f"{s.model.provider}/{s.model.id}" for s in session.models.scoped_models]
    else:
        patterns = app.settings.get("enabledModels")
        if isinstance(patterns, list) and patterns:
            scoped, _warnings = resolve_model_scope([str(p) for p in patterns], session.model_registry)
            enabled = [f"{s.model.provider}/{s.model.id}" for s in scoped]
    dirty = False
    last: Any = None
    while True:
        count = "all enabled" if enabled is None else f"{len(enabled)}/{len(all_ids)} enabled"
        title = (
            "Model Configuration\n"
            f"Session-only until saved. Choose a model to toggle it ({count}"
            f"{', unsaved' if dirty else ''})."
        )
        items = [
            PickItem(label="Save to settings", value=_SAVE, detail="enabledModels in settings.json"),
            PickItem(label="Enable all", value=_ENABLE_ALL),
            PickItem(label="Clear all", value=_CLEAR_ALL),
        ]
        for model_id in sorted_ids(enabled, all_ids):
            model = by_id[model_id]
            mark = "" if enabled is None else (" ✓" if model_id in enabled else " ✗")
            items.append(
                PickItem(
                    label=f"{model.id} [{model.provider}]{mark}",
                    value=model_id,
                    detail=f"Model Name: {model.name or model.id}",
                )
            )
        choice = await ctx.pick(title, items, initial=last)
        if choice is None:
            return
        last = choice
        if choice == _SAVE:
            patterns = None if enabled is None or len(enabled) == len(all_ids) else list(enabled)
            try:
                app.settings.set_global("enabledModels", patterns)
            except OSError as exc:
                ctx.show_error(f"Could not save the model selection: {exc}")
                continue
            dirty = False
            ctx.show_info("Model selection saved to settings")
            continue
        if choice == _ENABLE_ALL:
            enabled = None  # no filter
        elif choice == _CLEAR_ALL:
            enabled = []
        else:
            enabled = toggle(enabled, str(choice))
        dirty = True
        _apply_scope(session, enabled, len(all_ids))


# ---------------------------------------------------------------------------
# /thinking
# ---------------------------------------------------------------------------


def thinking_completions(prefix: str) -> list[str]:
    from piko.data.messages import THINKING_LEVELS

    return [level for level in THINKING_LEVELS if level.startswith(prefix.strip().lower())]


async def thinking_command(ctx: InteractiveContext, args: str) -> None:
    """``/thinking [level]``: set the thinking level, or choose it."""
    session = ctx.session
    if not session.models.supports_thinking():
        ctx.show_info("Current model does not support thinking")
        return
    levels = list(session.models.available_thinking_levels())
    wanted = args.strip().lower()
    if wanted:
        if wanted not in levels:
            ctx.show_error(f'Invalid thinking level "{wanted}". Valid values: {", ".join(levels)}')
            return
        level = wanted
    else:
        items = [
            PickItem(
                label=name,
                value=name,
                detail=THINKING_DESCRIPTIONS.get(name, ""),
                current=name == session.thinking_level,
            )
            for name in levels
        ]
        chosen = await ctx.pick(
            "Thinking Level\nSelect reasoning depth for thinking-capable models",
            items,
            filterable=False,
            initial=session.thinking_level,
        )
        if chosen is None:
            return
        level = str(chosen)
    session.set_thinking_level(level)
    ctx.show_info(f"Thinking level: {session.thinking_level}")
