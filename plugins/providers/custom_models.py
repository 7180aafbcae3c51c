"""Custom providers and models from ``~/.pi/agent/models.json`` (plugin ``providers.custom-models``).

Read as pi reads it (see :mod:`piko.plugins.providers.models_json` for the checks): each
provider becomes a :class:`~piko.models.registry.ProviderConfig` registered right after the
built-in catalog, so that for a built-in provider name it merges as pi's does: ``baseUrl`` and
``compat`` apply to the built-in models, ``modelOverrides`` patch them, and ``models`` are
added or replace the built-in model of the same id. ``apiKey`` and header values stay config
values (literal, environment variable name, ``!command``) resolved at request time; literal
keys and credential headers are registered with :mod:`piko.lib.redaction`. A broken file is
reported once (``Warning: errors loading models.json: ...``) and nothing of it is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl

DEFAULT_CONTEXT_WINDOW = 128000
DEFAULT_MAX_TOKENS = 16384


def models_json_path() -> Path:
    """``models.json`` in the agent directory (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``)."""
    from piko.config.paths import agent_dir

    return agent_dir() / "models.json"


def _builtin_providers() -> set[str]:
    try:
        from piko.plugins.providers.catalog import provider_names

        return set(provider_names())
    except (OSError, ValueError):
        return set()


def custom_model(provider: str, provider_data: dict[str, Any], data: dict[str, Any]) -> Any:
    """A :class:`piko.data.messages.Model` from one ``models[]`` entry, with pi's defaults.

    ``api`` and ``baseUrl`` are left empty when neither the model nor its provider set them:
    the registry fills them from the provider (for a built-in one, its first model's).
    """
    from piko.data.messages import Model
    from piko.data.messages import ModelCost
    from piko.models.registry import merge_compat

    cost = data.get("cost") or {}
    return Model(
        id=data["id"],
        name=data.get("name") or data["id"],
        api=data.get("api") or provider_data.get("api") or "",
        provider=provider,
        base_url=data.get("baseUrl") or provider_data.get("baseUrl") or "",
        reasoning=bool(data.get("reasoning", False)),
        thinking_level_map=data.get("thinkingLevelMap"),
        input=list(data.get("input") or ["text"]),
        cost=ModelCost(
            input=cost.get("input", 0),
            output=cost.get("output", 0),
            cache_read=cost.get("cacheRead", 0),
            cache_write=cost.get("cacheWrite", 0),
        ),
        context_window=data["contextWindow"]
        if data.get("contextWindow") is not None
        else DEFAULT_CONTEXT_WINDOW,
        max_tokens=data["maxTokens"] if data.get("maxTokens") is not None else DEFAULT_MAX_TOKENS,
        compat=merge_compat(provider_data.get("compat"), data.get("compat")),
    )


def provider_configs(config: dict[str, Any]) -> list[Any]:
    """One :class:`~piko.models.registry.ProviderConfig` per provider of a checked ``models.json``."""
    from piko.platform.registries import ProviderConfig

    configs = []
    for name, data in config["providers"].items():
        models = [custom_model(name, data, m) for m in data.get("models") or []]
        model_headers = {m["id"]: dict(m["headers"]) for m in data.get("models") or [] if m.get("headers")}
        configs.append(
            ProviderConfig(
                name=name,
                base_url=data.get("baseUrl") or "",
                api=data.get("api") or "",
                api_key=data.get("apiKey"),
                headers=dict(data["headers"]) if data.get("headers") else None,
                auth_header=bool(data.get("authHeader", False)),
                models=models,
                model_overrides=data.get("modelOverrides") or None,
                model_headers=model_headers or None,
                compat=data.get("compat"),
                display_name=data.get("name") or "",
                extra={"apiKeyCommand": data["apiKeyCommand"]} if data.get("apiKeyCommand") else {},
                # models.json says what it changes: a built-in provider of that name is merged
                override=True,
            )
        )
    return configs


def load_custom_providers(
    path: Path | None = None, warnings: list[str] | None = None
) -> tuple[list[Any], str | None]:
    """The providers of ``models.json`` and the problem that stopped reading it, if any; keys
    the file's schema does not know are added to ``warnings``."""
    from piko.plugins.providers.models_json import ModelsConfigError
    from piko.plugins.providers.models_json import check_rules
    from piko.plugins.providers.models_json import read_models_config
    from piko.plugins.providers.models_json import unknown_keys

    path = path or models_json_path()
    try:
        config = read_models_config(path)
        if config is None:
            return [], None
        if warnings is not None:
            warnings.extend(
                f"models.json: unknown key {key} (ignored; {path})" for key in unknown_keys(config)
            )
        builtin = _builtin_providers()
        try:
            check_rules(config, builtin.__contains__)
        except ValueError as exc:
            raise ModelsConfigError(f"Failed to load models.json: {exc}\n\nFile: {path}") from exc
    except ModelsConfigError as exc:
        return [], str(exc)
    return provider_configs(config), None


def configured_credentials(path: Path | None = None) -> list[str]:
    """The ``apiKey`` values and credential header values of ``models.json``, as written."""
    from piko.lib.redaction import is_credential_name
    from piko.plugins.providers.models_json import ModelsConfigError
    from piko.plugins.providers.models_json import read_models_config

    try:
        config = read_models_config(path or models_json_path())
    except ModelsConfigError:
        return []
    found: list[str] = []
    for provider in (config or {}).get("providers", {}).values():
        found.append(provider.get("apiKey"))
        header_sets = [provider.get("headers") or {}]
        header_sets += [m.get("headers") or {} for m in provider.get("models") or []]
        header_sets += [o.get("headers") or {} for o in (provider.get("modelOverrides") or {}).values()]
        for headers in header_sets:
            found.extend(v for k, v in headers.items() if is_credential_name(k))
    return [value for value in found if isinstance(value, str)]


@hookimpl
def piko_configure(config: Any) -> None:
    """Let :mod:`piko.lib.redaction` mask the keys of models.json (read when first needed)."""
    from piko.lib.redaction import add_secret_source

    add_secret_source(configured_credentials)


@hookimpl(trylast=True)
def piko_register_providers(register: Any) -> None:
    """Register the providers of ``models.json`` last: the user's file is laid over what the
    catalog and every plugin registered (its fields win, its models are added)."""
    warnings: list[str] = []
    configs, error = load_custom_providers(warnings=warnings)
    report = getattr(register, "diagnostic", None)
    if report is not None:
        for warning in warnings:
            report(warning)
    if error is not None:
        if report is not None:
            report(f"errors loading models.json:\n{error}")
        return
    for config in configs:
        register(config)
