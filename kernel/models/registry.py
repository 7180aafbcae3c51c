"""Providers and models as plugins registered them, API keys, and the stream function for a model.

Provider plugins register :class:`ProviderConfig` objects through ``piko_register_providers``;
provider API plugins register the wire protocols through ``piko_register_provider_apis``.
Registrations run in pluggy's order of preference: ``tryfirst`` implementations (the built-in
catalog, then ``~/.pi/agent/models.json``), then the others in load order (third-party plugins,
extensions), so later registrations override earlier ones as pi's do.

Registering a provider name that exists merges, as pi merges ``models.json`` into its catalog:

* models with an id already known replace that model, new ids are added, the others are kept;
* a ``base_url`` or ``compat`` given without models applies to the models already there
  (``compat`` is merged key by key); ``model_overrides`` patch models already there;
* settings that are set (API, key, headers, ...) override; environment variable lists join.

A provider may hand over ``models_factory`` instead of ``models`` (the built-in catalog does:
building its thousand models costs about 6 ms). Its models are built the first time they are
asked for (:meth:`ModelRegistry.find`, :meth:`~ModelRegistry.models_of`,
:meth:`~ModelRegistry.all_models`, :meth:`~ModelRegistry.provider`, or a later registration
merging into it) and take the place in :meth:`~ModelRegistry.all_models` that they would have
taken had they been built at once.

API keys are resolved in pi's order: the runtime override (``--api-key``), then an extension's
``api_key`` (``pi.register_provider`` without ``oauth``: ``api_key_first``, which a later
``models.json`` entry does not replace), then ``piko_resolve_api_key`` implementations (auth.json key, OAuth token, environment variables,
custom resolvers), then the provider's own ``api_key`` (a literal, an environment variable
name, or ``!command``). **Before each request** the caller asks :meth:`ModelRegistry.request_auth`
for the key and the request headers (the model's own headers, then the provider's and the
model's configured headers with their values resolved like keys, then
``Authorization: Bearer <key>`` for ``auth_header`` providers) and passes both in
:class:`piko.data.streaming.StreamOptions`, as pi's session does with ``getApiKeyAndHeaders``.
Every key and credential header value met on the way is registered with :mod:`piko.lib.redaction`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from piko.data.messages import Model
from piko.lib.records import Record
from piko.lib.records import replace
from piko.lib.redaction import is_credential_name
from piko.lib.redaction import register_config_value
from piko.lib.redaction import register_secret
from piko.platform.ordering import call_order
from piko.platform.registries import Override
from piko.platform.registries import ProviderConfig
from piko.platform.registries import Refusal
from piko.platform.registries import RegistrationError
from piko.platform.registries import already_registered
from piko.platform.registries import override_forbidden
from piko.platform.registries import provider_config

API_KEY_COMMAND_TIMEOUT_S = 10  # pi's execSync timeout for "!command" values
CONFIGURED = "<configured>"  # what a check-only key lookup answers when a credential exists


class RequestAuth(Record):
    """What one request needs: the key and headers, or why it cannot be made."""

    ok: bool = True
    api_key: str | None = None
    headers: dict[str, str] | None = None
    error: str | None = None


def merge_compat(base: dict[str, Any] | None, override: dict[str, Any] | None) -> dict[str, Any] | None:
    """pi's compat merge: keys of ``override`` win; routing objects are merged one level deeper."""
    if not override:
        return base
    merged = {**(base or {}), **override}
    for key in ("openRouterRouting", "vercelGatewayRouting"):
        if (base and key in base) or key in override:
            merged[key] = {**((base or {}).get(key) or {}), **(override.get(key) or {})}
    return merged


class ModelRegistry:
    """All providers and models, filled by the registration hooks of provider plugins."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.providers: dict[str, ProviderConfig] = {}
        self._models: dict[str, Model | None] = {}  # key "provider/id"; None marks a waiting provider's place
        self._waiting: dict[str, ProviderConfig] = {}  # provider name -> registration whose models wait
        self.runtime_api_keys: dict[str, str] = {}
        self.diagnostics: list[str] = []
        # provider -> why its stored credential gave no key (a failing ``!command``), for the request's error
        self.key_problems: dict[str, str] = {}
        self.overrides: list[Override] = []  # providers of one plugin changed by another's, as asked
        self.refusals: list[Refusal] = []  # providers refused: the name was another plugin's
        self._replaced: dict[
            str, dict[str, tuple[ProviderConfig, list[Model]]]
        ] = {}  # name -> plugin -> before
        self.policy_blocked: dict[str, str] = {}  # provider -> the policy file that blocks it
        self.policy_blocked_models: dict[str, str] = {}  # "provider/id" -> the policy line refusing it
        self._loaded = False

    # -- filling -----------------------------------------------------------------------------

    def load(self) -> ModelRegistry:
        """Collect ``piko_register_providers`` (once), in piko's call order (``tryfirst`` first)."""
        if self._loaded:
            return self
        self._loaded = True
        pm = self.app.pm
        for impl in call_order(pm, pm.hook.piko_register_providers.get_hookimpls()):
            register = self._registrar(impl.plugin_name)
            try:
                impl.function(**{arg: register for arg in impl.argnames})
            except Exception as exc:  # one broken provider plugin must not hide the others
                self.diagnostics.append(
                    f"plugin '{impl.plugin_name}': piko_register_providers failed: {type(exc).__name__}: {exc}"
                )
        return self

    def reload(self) -> ModelRegistry:
        """Collect the providers again (plugins came or went); ``--api-key`` overrides are kept."""
        self.providers.clear()
        self._models.clear()
        self._waiting.clear()
        self.diagnostics.clear()
        self.overrides.clear()
        self.refusals.clear()
        self._replaced.clear()
        self._loaded = False
        return self.load()

    def _registrar(self, plugin: str) -> Callable[..., Any]:
        def register(
            name_or_config: str | ProviderConfig | None = None, config: Any = None, **fields: Any
        ) -> ProviderConfig | None:
            """``register(ProviderConfig(...))``, ``register(name, {pi-style fields})`` or
            ``register(name=..., base_url=..., ...)``: the extension API's contract too."""
            try:
                if isinstance(name_or_config, ProviderConfig):
                    built = provider_config(None, name_or_config, fields, plugin=plugin)
                else:
                    built = provider_config(name_or_config, config, fields, plugin=plugin)
            except RegistrationError as exc:  # this registration is lost; the plugin's others load
                self.diagnostics.append(str(exc))
                return None
            self.add_provider(built)
            return built

        def diagnostic(message: str) -> None:
            """Report a problem of the plugin's own sources (``Warning: ...`` on stderr)."""
            if message not in self.diagnostics:
                self.diagnostics.append(message)

        register.diagnostic = diagnostic  # type: ignore[attr-defined]
        return register

    def model_refused(self, provider: str, model_id: str) -> str | None:
        """The managed policy's one line when it refuses ``provider/model_id``, else ``None``."""
        self.all_models()  # models are checked as they are built
        return self.policy_blocked_models.get(f"{provider}/{model_id}")

    def unavailable(self, provider: str) -> str | None:
        """Why ``provider`` is not there: a policy blocks it, or its plugin is blocked or broken."""
        for name, source in self.policy_blocked.items():
            if name.lower() == provider.lower():
                return f"provider {name} is blocked by policy ({source})"
        from piko.platform.provenance import explain

        return explain(self.app, "providers", provider) if hasattr(self.app, "provenance") else None

    def overrides_forbidden(self) -> str | None:
        """Where a rule forbidding overrides comes from (the policy file), or ``None``."""
        policy = getattr(self.app, "policy", None)
        return policy.forbids_overrides() if policy is not None else None

    def _refuse(self, config: ProviderConfig, cause: str) -> None:
        self.refusals.append(Refusal(group="providers", name=config.name, plugin=config.plugin, cause=cause))
        self.diagnostics.append(f"plugin '{config.plugin}': {cause}")

    def add_provider(self, config: ProviderConfig) -> None:
        """Add a provider, or merge into the one of the same name (see the module docstring)."""
        policy = getattr(self.app, "policy", None)
        if policy is not None and not policy.allows_provider(config.name):
            # said when somebody asks for it (unavailable()), not as a warning on every run
            self.policy_blocked[config.name] = policy.source
            return
        _register_configured_secrets(config)
        provenance = getattr(self.app, "provenance", None)
        if provenance is not None:
            provenance.remember("providers", config.name, config.plugin)
        existing = self.providers.get(config.name)
        if existing is not None and existing.plugin and config.plugin and existing.plugin != config.plugin:
            if not config.override:
                self._refuse(config, already_registered("provider", config.name, existing.plugin))
                return
            forbidden = self.overrides_forbidden()
            if forbidden:
                self._refuse(config, override_forbidden("provider", config.name, existing.plugin, forbidden))
                return
            self.overrides.append(
                Override(group="providers", name=config.name, plugin=config.plugin, replaced=existing.plugin)
            )
            self._build_waiting((config.name,))
            self._replaced.setdefault(config.name, {}).setdefault(config.plugin, self._snapshot(existing))
        if existing is not None:
            self._build_waiting((config.name,))  # merging needs the models that are there
        if config.models_factory is not None:
            if existing is None and not config.models and not config.model_overrides:
                self.providers[config.name] = replace(
                    config, models=[], models_factory=None, extra=dict(config.extra)
                )
                self._waiting[config.name] = config
                self._models[_waiting_key(config.name)] = None
                return
            config = replace(config, models=[*config.models, *config.models_factory()], models_factory=None)
        if existing is None:
            merged = replace(config, models=[], model_overrides=None, extra=dict(config.extra))
            self.providers[config.name] = merged
        else:
            merged = existing
            keep_key = merged.api_key_first and not config.api_key_first  # an extension's key stays
            for name in ("api", "api_key", "stream_simple", "oauth", "display_name"):
                value = getattr(config, name)
                if value and not (name == "api_key" and keep_key):
                    setattr(merged, name, value)
            if config.api_key_first:
                merged.api_key_first = True
            elif config.oauth is not None and config.api_key:
                merged.api_key_first = False
            if config.base_url:
                merged.base_url = config.base_url
            if config.compat:
                merged.compat = merge_compat(merged.compat, config.compat)
            if config.headers:
                merged.headers = {**(merged.headers or {}), **config.headers}
            merged.auth_header = merged.auth_header or config.auth_header
            merged.env_keys = list(dict.fromkeys([*merged.env_keys, *config.env_keys]))
            merged.extra.update(config.extra)
            merged.plugin = config.plugin or merged.plugin
            if config.base_url or config.compat:
                self._update_existing(merged, config)
        if config.model_headers:
            merged.model_headers = {**(merged.model_headers or {}), **config.model_headers}
        if config.model_overrides:
            self._apply_overrides(merged, config.model_overrides)
        self._add_models(merged, config, config.models)

    def _add_models(self, merged: ProviderConfig, config: ProviderConfig, models: list[Model]) -> None:
        policy = getattr(self.app, "policy", None)
        for model in models:
            model = self._complete(model, merged, config)
            key = f"{model.provider}/{model.id}"
            if policy is not None and not policy.allows_model(model.provider, model.id):
                self.policy_blocked_models[key] = policy.violation("models", key) or policy.source
                continue
            if key not in self._models:
                merged.models.append(model)
            else:
                merged.models = [model if m.id == model.id else m for m in merged.models]
            self._models[key] = model

    def _build_waiting(self, names: tuple[str, ...] | None = None) -> None:
        """Build the models of waiting providers (all of them, or ``names``) in their place."""
        chosen = list(self._waiting) if names is None else [n for n in names if n in self._waiting]
        if not chosen:
            return
        places = {_waiting_key(name): self._waiting.pop(name) for name in chosen}
        entries, self._models = self._models, {}
        for key, model in entries.items():
            config = places.get(key)
            if config is None:
                self._models[key] = model
            elif config.models_factory is not None:
                self._add_models(self.providers[config.name], config, config.models_factory())

    def _snapshot(self, provider: ProviderConfig) -> tuple[ProviderConfig, list[Model]]:
        """A copy of ``provider`` and its models, as they are before another plugin changes them."""
        copied = replace(
            provider, models=list(provider.models), extra=dict(provider.extra),
            headers=dict(provider.headers) if provider.headers else provider.headers,
            env_keys=list(provider.env_keys),
        )  # fmt: skip
        return copied, [m for m in self._models.values() if m is not None and m.provider == provider.name]

    def remove_provider(self, name: str, *, plugin: str | None = None) -> None:
        """Forget a provider and its models; ``plugin``'s removal of a provider it overrode puts
        back what it replaced (pi: ``unregisterProvider`` restores the built-in)."""
        replaced = self._replaced.get(name, {}).pop(plugin, None) if plugin else None
        if replaced is not None:
            config, models = replaced
            self._models = {k: m for k, m in self._models.items() if m is None or m.provider != name}
            self.providers[name] = config
            for model in models:
                self._models[f"{name}/{model.id}"] = model
            self.overrides = [o for o in self.overrides if not (o.name == name and o.plugin == plugin)]
            return
        self.providers.pop(name, None)
        self._waiting.pop(name, None)
        self._models = {
            k: m
            for k, m in self._models.items()
            if k != _waiting_key(name) and (m is None or m.provider != name)
        }

    def _replace(self, provider: ProviderConfig, model: Model) -> None:
        self._models[f"{provider.name}/{model.id}"] = model
        provider.models = [model if m.id == model.id else m for m in provider.models]

    def _update_existing(self, provider: ProviderConfig, config: ProviderConfig) -> None:
        """A provider-level ``base_url``/``compat`` given later applies to the models already there."""
        for model in list(provider.models):
            changes: dict[str, Any] = {}
            if config.base_url:
                changes["base_url"] = config.base_url
            if config.compat:
                changes["compat"] = merge_compat(model.compat, config.compat)
            self._replace(provider, replace(model, **changes))

    def _complete(self, model: Model, provider: ProviderConfig, config: ProviderConfig) -> Model:
        changes: dict[str, Any] = {}
        if model.provider != provider.name:
            changes["provider"] = provider.name
        if not model.api:
            changes["api"] = config.api or provider.api
        if not model.base_url:
            changes["base_url"] = config.base_url or provider.base_url
        if not model.name:
            changes["name"] = model.id
        if config.compat:
            changes["compat"] = merge_compat(config.compat, model.compat)
        return replace(model, **changes) if changes else model

    def _apply_overrides(self, provider: ProviderConfig, overrides: dict[str, dict[str, Any]]) -> None:
        """pi's ``modelOverrides``: patch models already registered (unknown ids are ignored)."""
        from piko.data.messages import ModelCost

        for model_id, patch in overrides.items():
            model = self._models.get(f"{provider.name}/{model_id}")
            if model is None or not isinstance(patch, dict):
                continue
            changes: dict[str, Any] = {}
            for wire, attr in (("name", "name"), ("reasoning", "reasoning"), ("input", "input"),
                               ("contextWindow", "context_window"), ("maxTokens", "max_tokens")):  # fmt: skip
                if patch.get(wire) is not None:
                    changes[attr] = patch[wire]
            if patch.get("thinkingLevelMap") is not None:
                changes["thinking_level_map"] = {
                    **(model.thinking_level_map or {}),
                    **patch["thinkingLevelMap"],
                }
            cost = patch.get("cost")
            if isinstance(cost, dict):
                base = model.cost
                changes["cost"] = ModelCost(
                    input=cost.get("input", base.input),
                    output=cost.get("output", base.output),
                    cache_read=cost.get("cacheRead", base.cache_read),
                    cache_write=cost.get("cacheWrite", base.cache_write),
                    extra=dict(base.extra),
                )
            if patch.get("compat"):
                changes["compat"] = merge_compat(model.compat, patch["compat"])
            if patch.get("headers"):
                provider.model_headers = {**(provider.model_headers or {}), model_id: dict(patch["headers"])}
            if changes:
                self._replace(provider, replace(model, **changes))

    # -- reading -----------------------------------------------------------------------------

    def all_models(self) -> list[Model]:
        """Every registered model."""
        self.load()
        self._build_waiting()
        return [model for model in self._models.values() if model is not None]

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model ``provider/model_id``."""
        self.load()
        self._build_waiting((provider,))
        return self._models.get(f"{provider}/{model_id}")

    def models_of(self, provider: str) -> list[Model]:
        """The models of one provider (exact name), in registration order."""
        config = self.provider(provider)
        return list(config.models) if config is not None else []

    def model_providers(self) -> list[str]:
        """Names of the providers that serve at least one model, without building any model."""
        self.load()
        return [name for name, config in self.providers.items() if config.models or name in self._waiting]

    def provider(self, name: str) -> ProviderConfig | None:
        """A provider's configuration, its models built."""
        self.load()
        self._build_waiting((name,))
        return self.providers.get(name)

    def display_name(self, provider: str) -> str:
        """How pi names a provider in messages (``Anthropic``, ``OpenRouter``, or the id)."""
        config = self.provider(provider)
        return (config.display_name if config is not None else "") or provider

    def env_keys(self, provider: str) -> list[str]:
        """The environment variables that may hold ``provider``'s key, without building its models."""
        self.load()
        config = self.providers.get(provider)
        return list(config.env_keys) if config is not None else []

    def key_variable(self, provider: str) -> str | None:
        """The environment variable to suggest for ``provider``'s key (``ANTHROPIC_API_KEY``)."""
        names = self.env_keys(provider)
        return next((n for n in names if n.endswith("_API_KEY")), names[0] if names else None)

    def missing_key_message(self, provider: str) -> str:
        """One clear line naming the variable to set, then how to get going."""
        from piko.models.guidance import no_api_key_message

        return no_api_key_message(provider, self.key_variable(provider))

    def has_auth(self, provider: str) -> bool:
        """Whether a credential is configured for ``provider``, without refreshing OAuth tokens
        or running ``!command`` values (pi's ``hasConfiguredAuth``)."""
        return self._configured_auth(provider, self.provider(provider))

    def _configured_auth(self, provider: str, config: ProviderConfig | None) -> bool:
        """:meth:`has_auth` for a provider's configuration, built or still waiting (a provider's
        credentials never depend on its models)."""
        if provider in self.runtime_api_keys:
            return True
        if config is not None and (config.api_key or config.stream_simple is not None):
            return True
        if self.app.pm.hook.piko_resolve_api_key(provider=provider, app=self.app, check_only=True):
            return True
        return any(os.environ.get(env) for env in (config.env_keys if config else []))

    def available_models(self) -> list[Model]:
        """Models whose provider has credentials (what ``--list-models`` and RPC offer).

        Providers registered with ``extra={"explicitOnly": True}`` (the offline ``faux`` demo)
        are left out: they serve only when named with ``--provider``/``--model``. The models of a
        provider without credentials are not built (the catalog's thousand are not, with one key).
        """
        self.load()
        auth: dict[str, bool] = {}

        def usable(provider: str) -> bool:
            if provider not in auth:
                config = self.providers.get(provider)
                explicit_only = bool(config and config.extra.get("explicitOnly"))
                auth[provider] = not explicit_only and self._configured_auth(provider, config)
            return auth[provider]

        self._build_waiting(tuple(name for name in list(self._waiting) if usable(name)))
        return [model for model in self._models.values() if model is not None and usable(model.provider)]

    # -- keys and streams --------------------------------------------------------------------

    def api_key(self, provider: str, *, interactive: bool = True) -> str | None:
        """The key for ``provider`` in pi's order (see the module docstring).

        Whatever key is found is registered with :mod:`piko.lib.redaction`, so no output shows it.
        """
        key = self._find_api_key(provider)
        register_secret(key)
        return key

    def _find_api_key(self, provider: str) -> str | None:
        if provider in self.runtime_api_keys:
            return self.runtime_api_keys[provider]
        config = self.provider(provider)
        if config is not None and config.api_key_first and config.api_key:
            first = resolve_config_value(config.api_key)
            if first:
                return first
        key = self.app.pm.hook.piko_resolve_api_key(provider=provider, app=self.app, check_only=False)
        if key is not None:  # "" means: no key, and look no further (a failed OAuth refresh)
            return str(key) or None
        if config is not None and config.api_key:
            return resolve_config_value(config.api_key)
        for env in config.env_keys if config else []:
            if os.environ.get(env):
                return os.environ[env]
        return None

    def request_auth(self, model: Model) -> RequestAuth:
        """The key and headers of one request to ``model`` (pi's ``getApiKeyAndHeaders``)."""
        config = self.provider(model.provider)
        try:
            api_key = self.api_key(model.provider)
            if api_key is None and model.provider in self.key_problems:
                raise ValueError(self.key_problems[model.provider])
            if api_key is None and config is not None and config.api_key:
                raise ValueError(_unresolved(config.api_key, f'API key for provider "{model.provider}"'))
            provider_headers = resolve_headers(
                config.headers if config else None, f'provider "{model.provider}"'
            )
            per_model = (config.model_headers or {}).get(model.id) if config else None
            model_headers = resolve_headers(per_model, f'model "{model.provider}/{model.id}"')
        except ValueError as exc:
            return RequestAuth(ok=False, error=str(exc))
        headers = {**(model.headers or {}), **provider_headers, **model_headers}
        if config is not None and config.auth_header:
            if not api_key:
                return RequestAuth(ok=False, error=f'No API key found for "{model.provider}"')
            headers["Authorization"] = f"Bearer {api_key}"
        for name, value in headers.items():
            if is_credential_name(name):
                register_secret(value)
        return RequestAuth(ok=True, api_key=api_key, headers=headers or None)

    def stream_function(self, model: Model) -> Any:
        """The stream function for ``model``: its provider's own, else its API's."""
        config = self.provider(model.provider)
        if config is not None and config.stream_simple is not None:
            if isinstance(config.stream_simple, str):
                from piko.platform.registries import resolve_import

                config.stream_simple = resolve_import(config.stream_simple)
            return config.stream_simple
        api = self.app.registries.provider_apis.get(model.api)
        if api is None:
            return None
        return api.resolved("stream")


def _register_configured_secrets(config: ProviderConfig) -> None:
    """Tell :mod:`piko.lib.redaction` about the literal key and credential headers a provider was given."""
    register_config_value(config.api_key)
    header_sets = [config.headers or {}, *(config.model_headers or {}).values()]
    header_sets += [model.headers or {} for model in config.models]
    for headers in header_sets:
        for name, value in headers.items():
            if is_credential_name(name):
                register_config_value(value)


def _waiting_key(provider: str) -> str:
    """The place of a waiting provider's models in the registry's ordered index (never a model key)."""
    return "\0" + provider


class KeyCommandError(Exception):
    """A ``!command`` key gave no key; the message says why (never what the command printed)."""


def key_command_timeout_s() -> float:
    """How long a ``!command`` key may run: pi's 10 s, or ``PIKO_KEY_COMMAND_TIMEOUT_S``."""
    try:
        return float(os.environ.get("PIKO_KEY_COMMAND_TIMEOUT_S") or API_KEY_COMMAND_TIMEOUT_S)
    except ValueError:
        return float(API_KEY_COMMAND_TIMEOUT_S)


def run_key_command(command: str, env: dict[str, str] | None = None) -> str:
    """Run a ``!command`` config value with the shell (``env`` over the process environment):
    its trimmed output. Raises :class:`KeyCommandError` saying why there is none; what the
    command wrote is never part of the message (its stderr is dropped)."""
    import subprocess  # only for '!command' keys

    timeout = key_command_timeout_s()
    try:
        done = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=timeout,
            env={**os.environ, **env} if env else None,
        )
    except subprocess.TimeoutExpired:
        raise KeyCommandError(f"the command did not finish within {timeout:g} s") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise KeyCommandError(f"the command could not run: {type(exc).__name__}") from None
    if done.returncode != 0:
        raise KeyCommandError(f"the command exited with status {done.returncode}")
    value = done.stdout.strip()
    if not value:
        raise KeyCommandError("the command printed nothing")
    return value


def run_config_command(command: str) -> str | None:
    """Run a ``!command`` config value with the shell: its trimmed output, or None on failure."""
    try:
        return run_key_command(command)
    except KeyCommandError:
        return None


def resolve_config_value(value: str) -> str | None:
    """pi's config values: ``!command`` runs the command, an environment variable name is read,
    anything else is a literal.

    A value shaped like a variable name (``ACME_API_KEY``: capitals and digits joined by
    underscores) whose variable is not set resolves to nothing, where pi would send the name
    itself as the key; the error then says which variable is missing.
    """
    if value.startswith("!"):
        return run_config_command(value[1:])
    found = os.environ.get(value)
    if found:
        return found
    return None if looks_like_variable(value) else value


def looks_like_variable(value: str) -> bool:
    """``ACME_API_KEY`` yes; ``EMPTY``, ``sk-...`` or ``ollama`` no."""
    import re

    return re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", value) is not None


def _unresolved(value: str, description: str) -> str:
    if value.startswith("!"):
        return f"Failed to resolve {description} from shell command: {value[1:]}"
    if looks_like_variable(value):
        return f"Failed to resolve {description}: the environment variable {value} is not set"
    return f"Failed to resolve {description}"


def resolve_headers(headers: dict[str, str] | None, description: str) -> dict[str, str]:
    """Resolve every header value as a config value; raises ``ValueError`` naming the one that fails."""
    out: dict[str, str] = {}
    for name, value in (headers or {}).items():
        resolved = resolve_config_value(value)
        if resolved is None:
            raise ValueError(_unresolved(value, f'{description} header "{name}"'))
        out[name] = resolved
    return out
