"""Providers and models as plugins registered them, API keys, and the stream function for a model.

Provider plugins register :class:`ProviderConfig` objects through ``piko_register_providers``;
provider API plugins register the wire protocols through ``piko_register_provider_apis``.
Registering a provider name that exists merges: models with the same id are replaced, others
kept, and non-empty settings (base URL, headers, key) override. API keys are resolved in pi's
order: the runtime override (``--api-key``), then ``piko_resolve_api_key`` implementations
(auth.json, OAuth, environment variables, models.json values), then the provider's own
``api_key`` value (a literal, an environment variable name, or ``!command``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Any

import attrs
from attrs import define, field

from piko.messages import Model

API_KEY_COMMAND_TIMEOUT_S = 30


@define(kw_only=True)
class ProviderConfig:
    """A provider: where it lives, how to authenticate, which models it serves."""

    name: str
    base_url: str = ""
    api: str = ""
    api_key: str | None = None  # literal, environment variable name, or "!command"
    env_keys: list[str] = field(factory=list)  # environment variables pi reads for this provider
    headers: dict[str, str] | None = None
    auth_header: bool = False  # send "Authorization: Bearer <key>" whatever the API
    models: list[Model] = field(factory=list)
    model_overrides: dict[str, dict[str, Any]] | None = None
    compat: dict[str, Any] | None = None
    stream_simple: Any = None  # command-backed provider: stream(model, context, options)
    oauth: Any = None
    plugin: str = ""


class ModelRegistry:
    """All providers and models, filled by the registration hooks of provider plugins."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.providers: dict[str, ProviderConfig] = {}
        self._models: dict[str, Model] = {}  # key "provider/id"
        self.runtime_api_keys: dict[str, str] = {}
        self.diagnostics: list[str] = []
        self._loaded = False

    # -- filling -----------------------------------------------------------------------------

    def load(self) -> ModelRegistry:
        """Collect ``piko_register_providers`` (once)."""
        if self._loaded:
            return self
        self._loaded = True

        def registrar_for(plugin: str) -> Callable[..., Any]:
            def register(config: ProviderConfig | None = None, **kwargs: Any) -> ProviderConfig:
                if config is None:
                    config = ProviderConfig(**kwargs)
                config.plugin = config.plugin or plugin
                self.add_provider(config)
                return config

            return register

        self.app.registries.collect("piko_register_providers", registrar_for)
        return self

    def add_provider(self, config: ProviderConfig) -> None:
        """Add a provider, or merge into the one of the same name."""
        existing = self.providers.get(config.name)
        if existing is None:
            merged = attrs.evolve(config, models=[])
            self.providers[config.name] = merged
        else:
            merged = existing
            for f in ("base_url", "api", "api_key", "headers", "compat", "stream_simple", "oauth", "model_overrides"):
                value = getattr(config, f)
                if value:
                    setattr(merged, f, value)
            merged.auth_header = merged.auth_header or config.auth_header
            merged.env_keys = list(dict.fromkeys([*merged.env_keys, *config.env_keys]))
            merged.plugin = config.plugin or merged.plugin
        for model in config.models:
            model = self._complete(model, merged)
            key = f"{model.provider}/{model.id}"
            if key not in self._models:
                merged.models.append(model)
            else:
                merged.models = [model if m.id == model.id else m for m in merged.models]
            self._models[key] = model
        if merged.model_overrides:
            self._apply_overrides(merged)

    def remove_provider(self, name: str) -> None:
        """Forget a provider and its models."""
        self.providers.pop(name, None)
        self._models = {k: m for k, m in self._models.items() if m.provider != name}

    def _complete(self, model: Model, provider: ProviderConfig) -> Model:
        changes: dict[str, Any] = {}
        if not model.provider:
            changes["provider"] = provider.name
        if not model.api:
            changes["api"] = provider.api
        if not model.base_url:
            changes["base_url"] = provider.base_url
        if not model.name:
            changes["name"] = model.id
        if provider.compat and not model.compat:
            changes["compat"] = dict(provider.compat)
        if provider.headers:
            changes["headers"] = {**provider.headers, **(model.headers or {})}
        return attrs.evolve(model, **changes) if changes else model

    def _apply_overrides(self, provider: ProviderConfig) -> None:
        from piko.wire import camel

        for model_id, patch in (provider.model_overrides or {}).items():
            key = f"{provider.name}/{model_id}"
            model = self._models.get(key)
            if model is None:
                continue
            snake = {f.name for f in attrs.fields(Model)}
            changes = {}
            for wire_key, value in patch.items():
                name = next((n for n in snake if camel(n) == wire_key or n == wire_key), None)
                if name is not None and name != "extra":
                    changes[name] = value
            if "cost" in changes and isinstance(changes["cost"], dict):
                from piko.wire import from_wire
                from piko.messages import ModelCost

                base = {camel(k): v for k, v in attrs.asdict(model.cost).items() if k != "extra"}
                changes["cost"] = from_wire(ModelCost, {**base, **changes["cost"]})
            updated = attrs.evolve(model, **changes)
            self._models[key] = updated
            provider.models = [updated if m.id == model_id else m for m in provider.models]

    # -- reading -----------------------------------------------------------------------------

    def all_models(self) -> list[Model]:
        """Every registered model."""
        self.load()
        return list(self._models.values())

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model ``provider/model_id``."""
        self.load()
        return self._models.get(f"{provider}/{model_id}")

    def provider(self, name: str) -> ProviderConfig | None:
        self.load()
        return self.providers.get(name)

    def has_auth(self, provider: str) -> bool:
        """Whether a key (or a command-backed stream that needs none) exists for ``provider``."""
        config = self.provider(provider)
        if config is not None and config.stream_simple is not None and not config.api_key:
            return True
        return bool(self.api_key(provider, interactive=False))

    def available_models(self) -> list[Model]:
        """Models whose provider has credentials (what ``--list-models`` and RPC offer)."""
        return [m for m in self.all_models() if self.has_auth(m.provider)]

    # -- keys and streams --------------------------------------------------------------------

    def api_key(self, provider: str, *, interactive: bool = True) -> str | None:
        """The key for ``provider`` in pi's order (see the module docstring)."""
        if provider in self.runtime_api_keys:
            return self.runtime_api_keys[provider]
        key = self.app.pm.hook.piko_resolve_api_key(provider=provider, app=self.app)
        if key:
            return str(key)
        config = self.provider(provider)
        if config is not None and config.api_key:
            return resolve_config_value(config.api_key)
        for env in config.env_keys if config else []:
            if os.environ.get(env):
                return os.environ[env]
        return None

    def stream_function(self, model: Model) -> Any:
        """The stream function for ``model``: its provider's own, else its API's."""
        config = self.provider(model.provider)
        if config is not None and config.stream_simple is not None:
            return config.stream_simple
        api = self.app.registries.provider_apis.get(model.api)
        if api is None:
            return None
        return api.resolved("stream")


def resolve_config_value(value: str) -> str | None:
    """pi's config values: ``!command`` runs the command, an environment variable name is read,
    anything else is a literal."""
    if value.startswith("!"):
        try:
            done = subprocess.run(
                value[1:], shell=True, capture_output=True, text=True, timeout=API_KEY_COMMAND_TIMEOUT_S
            )
        except (OSError, subprocess.SubprocessError):
            return None
        out = done.stdout.strip()
        return out or None
    env_value = os.environ.get(value)
    if env_value:
        return env_value
    return value
