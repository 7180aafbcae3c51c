"""Registries of what plugins register: tools, provider APIs, providers, commands, flags, modes, ...

Each registration hook is called once per plugin with a ``register`` callable bound to that
plugin (see :meth:`Registries.collect`), so every entry records its owner. Definitions may
name their implementation as an ``"module:attr"`` import string; it is imported on first use,
which keeps start-up cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import ClassVar
from typing import Generic
from typing import TypeVar

from piko.data.messages import Model
from piko.data.messages import ToolResult
from piko.lib.records import Record
from piko.lib.records import field
from piko.lib.text import snake

T = TypeVar("T")


def resolve_import(target: Any) -> Any:
    """Import ``"package.module:attr.sub"``; any other value is returned as it is."""
    if not isinstance(target, str):
        return target
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


class Lazy:
    """Mixin: ``self.resolved(attr)`` imports an import-string field once and keeps the result."""

    def resolved(self, attr: str) -> Any:
        """The field ``attr``, imported (and kept) when it is an import string ``"module:name"``."""
        value = getattr(self, attr)
        if isinstance(value, str):
            value = resolve_import(value)
            object.__setattr__(self, attr, value)
        return value


# ---------------------------------------------------------------------------
# Definitions
# ---------------------------------------------------------------------------


class Registration(Record):
    """What every registered definition carries: the ``plugin`` that owns it, and ``override``:
    ``True`` replaces a definition of the same name that another plugin owns (shown in
    ``pi plugins``; see :meth:`Registry.add`)."""

    plugin: str = ""
    override: bool = False


class ToolDefinition(Lazy, Registration):
    """An LLM-callable tool.

    ``execute(tool_call_id, params, signal, on_update, ctx)`` returns a
    :class:`piko.data.messages.ToolResult` (or a dict with ``content``/``details``/``is_error``)
    and may be a coroutine function. ``prepare_arguments(arguments)``, when given, repairs the
    model's arguments before schema validation (older argument shapes, JSON sent as a string).
    ``prompt_snippet`` is the one line the system prompt shows for the tool;
    ``prompt_guidelines`` are added to the guidelines when it is active. ``order`` places the
    tool in the default tool list (lower first; tools without one follow in load order): piko's
    built-in tools use 0-6 to come in pi's order. ``metadata`` keeps the fields of a pi/omp tool
    object piko does not act on (``approval``, ``loadMode``, ...). ``annotations`` are hints
    about what the tool does (MCP's ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
    ``openWorldHint``), shown to extensions by ``pi.get_all_tools()``.
    """

    name: str
    label: str = ""
    description: str = ""
    parameters: dict[str, Any] = field(factory=lambda: {"type": "object", "properties": {}})
    execute: Any = None
    prepare_arguments: Any = None
    default_active: bool = False
    order: int | None = None
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(factory=list)
    render_call: Any = None
    render_result: Any = None
    metadata: dict[str, Any] = field(factory=dict)
    annotations: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The tool as a model is offered it: ``name``, ``description``, ``parameters``."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    async def run(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        """Call ``execute`` and return its result as a :class:`~piko.data.messages.ToolResult`.

        A coroutine function runs on the loop; a plain function runs on a thread of its own (it
        may block), reaching ``ctx`` and ``on_update`` through the loop, and an abort of
        ``signal`` ends the wait for it. Exceptions propagate to the caller.
        """
        from piko.data.wire import normalize_tool_result
        from piko.lib.off_loop import LoopProxy
        from piko.lib.off_loop import is_coroutine_callable
        from piko.lib.off_loop import loop_bound
        from piko.lib.off_loop import run_abortable

        execute = self.resolved("execute")
        if is_coroutine_callable(execute):
            value = execute(tool_call_id, params, signal, on_update, ctx)
        else:
            thread_ctx = LoopProxy(ctx) if ctx is not None else None
            update = loop_bound(on_update) if on_update is not None else None
            value = await run_abortable(
                execute, tool_call_id, params, signal, update, thread_ctx, signal=signal
            )
        if hasattr(value, "__await__"):
            value = await value
        return normalize_tool_result(value)


class ProviderApi(Lazy, Registration):
    """A provider wire protocol: ``stream(model, context, options)`` -> async iterator of events."""

    name: str
    stream: Any = None


class CommandDefinition(Registration):
    """A slash command; ``handler(args, ctx)`` may be a coroutine function."""

    name: str
    description: str = ""
    handler: Any = None
    get_argument_completions: Any = None
    source: str = "extension"


class CliCommandDefinition(Lazy, Registration):
    """A CLI subcommand: a ``click.Command`` or an import string naming one.

    ``reports_diagnostics``: the command prints the run's diagnostics itself (``pi plugins``
    lists them after its table), so piko does not print them as warnings first.
    """

    name: str
    command: Any = None
    help: str = ""
    reports_diagnostics: bool = False


class FlagDefinition(Lazy, Registration):
    """A CLI flag registered by a plugin.

    ``type``: ``"boolean"``, ``"string"`` (a value follows) or ``"optional"`` (a value may
    follow). With ``run`` (a callable or an import string), giving the flag runs
    ``run(app, value, out)`` instead of a mode and exits with its status (``pi --export``,
    ``pi --list-models``); ``value_name`` is how ``pi --help`` shows its value.
    """

    name: str
    description: str = ""
    type: str = "boolean"
    default: Any = None
    run: Any = None
    value_name: str = ""


class ShortcutDefinition(Registration):
    """A keyboard shortcut of the interactive mode.

    ``reserved``: the key belongs to the mode itself (its own binding, no handler here); a later
    registration of it is refused as reserved. The interactive mode reserves its keys this way.
    """

    key: str
    description: str = ""
    handler: Any = None
    reserved: bool = False


class ModeDefinition(Lazy, Registration):
    """A run mode: ``run(app) -> int`` (or a coroutine function); ``interactive`` needs a terminal."""

    name: str
    run: Any = None
    description: str = ""
    interactive: bool = False


class MessageRendererDefinition(Registration):
    """How the interactive mode shows custom messages of one ``custom_type``."""

    custom_type: str
    renderer: Any = None


class ResourceLoaderDefinition(Lazy, Record):
    """A loader of one resource kind (context files, skills, prompt templates, themes)."""

    kind: str
    loader: Any = None
    plugin: str = ""


class PackageSourceDefinition(Lazy, Registration):
    """A ``pi install`` source scheme (``pip``, ``git``, ``path``, ``npm``)."""

    scheme: str
    handler: Any = None


# ---------------------------------------------------------------------------
# Registries
# ---------------------------------------------------------------------------


class Registry(Generic[T]):
    """Named definitions with their owners.

    A second definition of a name is refused with one line naming both plugins, unless it says
    ``override=True``: then it replaces the first, which stays reachable (:meth:`original`) and is
    listed in :attr:`overrides` for ``pi plugins``. ``overrides_forbidden`` (a policy) refuses
    overrides too. Each refusal is listed in :attr:`refusals` (``pi plugins`` shows the plugin
    ``refused``).
    """

    def __init__(self, kind: str, key: str = "name", group: str = "") -> None:
        self.kind = kind
        self.group = group or kind + "s"  # the registry's name: tools, modes, provider_apis...
        self._key = key
        self._items: dict[str, T] = {}
        self._originals: dict[str, T] = {}
        self.overrides: list[Override] = []
        self.refusals: list[Refusal] = []
        self.overrides_forbidden: str | None = None  # where the rule comes from, when forbidden
        self.diagnostics: list[str] = []

    def refuse(self, plugin: str, name: str, cause: str) -> None:
        """Record that ``plugin``'s definition of ``name`` was not taken, and say so in one line."""
        self.refusals.append(Refusal(group=self.group, name=name, plugin=plugin, cause=cause))
        self.diagnostics.append(f"plugin '{plugin}': {cause}")

    def add(self, definition: T, *, replace: bool = False) -> bool:
        name = getattr(definition, self._key)
        existing = self._items.get(name)
        if existing is not None and not replace:
            owner = getattr(existing, "plugin", "?")
            new_owner = getattr(definition, "plugin", "?")
            if not getattr(definition, "override", False) or owner == new_owner:
                self.refuse(new_owner, name, already_registered(self.kind, name, owner))
                return False
            if self.overrides_forbidden:
                self.refuse(
                    new_owner, name, override_forbidden(self.kind, name, owner, self.overrides_forbidden)
                )
                return False
            self._originals.setdefault(name, existing)
            self.overrides.append(Override(group=self.group, name=name, plugin=new_owner, replaced=owner))
        self._items[name] = definition
        return True

    def original(self, name: str) -> T | None:
        """The first definition of ``name``, also when an override replaced it."""
        return self._originals.get(name) or self._items.get(name)

    def remove(self, name: str) -> T | None:
        return self._items.pop(name, None)

    def get(self, name: str) -> T | None:
        return self._items.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> list[str]:
        return list(self._items)


def _add_runtime(registry: Registry[Any], definition: Any) -> bool:
    held = registry.get(getattr(definition, registry._key))
    own = held is not None and getattr(held, "plugin", None) == getattr(definition, "plugin", None)
    return registry.add(definition, replace=own)


def already_registered(kind: str, name: str, owner: str) -> str:
    """The cause of a refused registration: the name is taken."""
    return (
        f"{kind} '{name}' is already registered by plugin '{owner}'; ignored "
        "(register it with override=True to replace it)"
    )


def override_forbidden(kind: str, name: str, owner: str, rule: str) -> str:
    """The cause of a refused override: a policy forbids overrides."""
    return f"{kind} '{name}' of plugin '{owner}' not overridden: overrides are forbidden by {rule}"


class _Outcome(Record, frozen=True):
    """A registration that did not simply add a name: which group, name and plugin."""

    VERB: ClassVar[str] = ""
    group: str
    name: str
    plugin: str

    @property
    def label(self) -> str:
        return f"{self.VERB} {self.group}.{self.name}"


class Refusal(_Outcome, frozen=True):
    """One registration that was refused (``pi plugins``: ``refused: CAUSE``, ``--check`` fails)."""

    VERB = "refused"
    cause: str


class Override(_Outcome, frozen=True):
    """One definition that replaced another plugin's (``pi plugins``: ``overrides tools.read``)."""

    VERB = "overrides"
    replaced: str


def _as_definition(
    cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], positional: tuple[str, ...]
) -> Any:
    """Build ``cls`` from ``register(definition)``, ``register(**kwargs)`` or positional names."""
    if len(args) == 1 and isinstance(args[0], cls) and not kwargs:
        return args[0]
    if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
        kwargs = dict(args[0])
        args = ()
    for name, value in zip(positional, args, strict=False):
        kwargs[name] = value
    return cls(**kwargs)


class Registries:
    """All registries, filled lazily by calling each registration hook once per plugin."""

    SPECS: dict[str, tuple[str, type, tuple[str, ...], str]] = {
        # registry attribute: (hook, definition class, positional argument names, key)
        "tools": ("piko_register_tools", ToolDefinition, ("name",), "name"),
        "provider_apis": ("piko_register_provider_apis", ProviderApi, ("name", "stream"), "name"),
        "commands": ("piko_register_commands", CommandDefinition, ("name",), "name"),
        "cli_commands": ("piko_register_cli_commands", CliCommandDefinition, ("name", "command"), "name"),
        "flags": ("piko_register_flags", FlagDefinition, ("name",), "name"),
        "shortcuts": ("piko_register_shortcuts", ShortcutDefinition, ("key",), "key"),
        "modes": ("piko_register_modes", ModeDefinition, ("name", "run"), "name"),
        "message_renderers": (
            "piko_register_message_renderers", MessageRendererDefinition, ("custom_type", "renderer"), "custom_type"
        ),
        "package_sources": (
            "piko_register_package_sources", PackageSourceDefinition, ("scheme", "handler"), "scheme"
        ),
    }  # fmt: skip

    def __init__(self, pm: Any, provenance: Any = None) -> None:
        self.pm = pm
        self.provenance = provenance  # who registered what, remembered for blocked plugins
        self._filled: dict[str, Registry[Any]] = {}
        self._generation: dict[str, int] = {}
        self._resource_loaders: list[ResourceLoaderDefinition] | None = None
        self._runtime: dict[str, list[Any]] = {}
        self.diagnostics: list[str] = []
        self.overrides_forbidden: str | None = None  # set by the App when a policy forbids them
        self.policy: Any = None  # the managed policy (piko.config.policy.Policy), set by the App

    def __getattr__(self, name: str) -> Registry[Any]:
        spec = Registries.SPECS.get(name)
        if spec is None:
            raise AttributeError(name)
        registry = self._filled.get(name)
        if registry is None or self._generation.get(name) != self.pm.generation:
            registry = self._fill(name, *spec)
        return registry

    def _fill(self, attr: str, hook: str, cls: type, positional: tuple[str, ...], key: str) -> Registry[Any]:
        registry: Registry[Any] = Registry(attr.rstrip("s").replace("_", " "), key, group=attr)
        registry.overrides_forbidden = self.overrides_forbidden
        self.collect(hook, lambda plugin: self._registrar(registry, cls, positional, plugin))
        # keep runtime registrations (made after start-up through the extension API)
        for item in self._runtime.get(attr, []):
            _add_runtime(registry, item)
        self._filled[attr] = registry
        self._generation[attr] = self.pm.generation
        if self.provenance is not None:
            for definition in registry:
                self.provenance.remember(attr, getattr(definition, key), getattr(definition, "plugin", ""))
        for message in registry.diagnostics:
            if message not in self.diagnostics:
                self.diagnostics.append(message)
        return registry

    def _registrar(
        self, registry: Registry[Any], cls: type, positional: tuple[str, ...], plugin: str
    ) -> Callable[..., Any]:
        def register(*args: Any, **kwargs: Any) -> Any:
            definition = _as_definition(cls, args, kwargs, positional)
            definition.plugin = definition.plugin or plugin
            if self._refused_by_policy(cls, definition):
                return None
            if cls is ShortcutDefinition:
                held = registry.get(definition.key.lower())
                if held is not None and held.reserved:
                    registry.refuse(
                        plugin, definition.key, f"shortcut '{definition.key}' is reserved by piko; ignored"
                    )
                    return None
            registry.add(definition)
            return definition

        return register

    def collect(self, hook: str, registrar_for: Callable[[str], Callable[..., Any]]) -> None:
        """Call ``hook`` on each plugin, in piko's call order, with its own ``register``."""
        from piko.platform.ordering import call_order

        impls = call_order(self.pm, getattr(self.pm.hook, hook).get_hookimpls())
        tracer = getattr(self.pm, "tracer", None)  # PIKO_TRACE: these calls bypass pluggy's monitoring
        for impl in impls:
            register = registrar_for(impl.plugin_name)
            if tracer is not None:
                tracer.line(f"hook {hook} -> {impl.plugin_name}")
            try:
                impl.function(**{arg: register for arg in impl.argnames})
            except Exception as exc:
                message = f"{hook} failed: {type(exc).__name__}: {exc}"
                self.diagnostics.append(f"plugin '{impl.plugin_name}': {message}")
                info = getattr(self.pm, "infos", {}).get(impl.plugin_name)
                if info is not None and info.error is None:  # pi plugins: failed, with the cause
                    info.error = message

    def _refused_by_policy(self, cls: type, definition: Any) -> bool:
        """A tool the managed policy blocks is never registered (said once, with the rule)."""
        if cls is not ToolDefinition or self.policy is None:
            return False
        line = self.policy.violation("tools", definition.name)
        if line is None:
            return False
        message = f"plugin '{definition.plugin}': {line}"
        if message not in self.diagnostics:
            self.diagnostics.append(message)
        if self.provenance is not None:
            self.provenance.remember("tools", definition.name, definition.plugin)
        return True

    def add_runtime(self, attr: str, definition: Any) -> bool:
        """Register a definition after start-up (an extension registering from a handler): the
        same rule as at start-up, except that a plugin may replace its own definition."""
        if attr == "tools" and self._refused_by_policy(ToolDefinition, definition):
            return False
        registry = getattr(self, attr)
        self._runtime.setdefault(attr, []).append(definition)
        added = _add_runtime(registry, definition)
        for message in registry.diagnostics:
            if message not in self.diagnostics:
                self.diagnostics.append(message)
        return added

    def overrides(self) -> list[Override]:
        """Every definition that replaced another plugin's, in every registry filled so far."""
        return [o for attr in Registries.SPECS for o in getattr(self, attr).overrides]

    def refusals(self) -> list[Refusal]:
        """Every registration refused (a name taken, an override forbidden, a reserved key)."""
        return [r for attr in Registries.SPECS for r in getattr(self, attr).refusals]

    def owners(self) -> set[str]:
        """The plugins that have a definition in some registry."""
        return {getattr(d, "plugin", "") for attr in Registries.SPECS for d in getattr(self, attr)}

    def resource_loaders(self, kind: str) -> list[ResourceLoaderDefinition]:
        """The loaders registered for one resource kind, in registration order."""
        if self._resource_loaders is None:
            loaders: list[ResourceLoaderDefinition] = []

            def registrar_for(plugin: str) -> Callable[..., Any]:
                def register(*args: Any, **kwargs: Any) -> None:
                    definition = _as_definition(ResourceLoaderDefinition, args, kwargs, ("kind", "loader"))
                    definition.plugin = definition.plugin or plugin
                    loaders.append(definition)

                return register

            self.collect("piko_register_resource_loaders", registrar_for)
            self._resource_loaders = loaders
        return [loader for loader in self._resource_loaders if loader.kind == kind]


class ProviderConfig(Registration):
    """A provider: where it lives, how to authenticate, which models it serves.

    ``api_key`` and the values of ``headers`` and ``model_headers`` are *config values*: a
    literal, the name of an environment variable, or ``!command`` (its output), resolved when
    a request is made. ``extra`` holds raw data of the provider's source (the catalog's
    ``defaultBaseUrl``, ``apis``, ``extraEnv``, ``oauth``...) for the API plugins that need it.
    """

    name: str
    base_url: str = ""
    api: str = ""
    api_key: str | None = None  # literal, environment variable name, or "!command"
    env_keys: list[str] = field(factory=list)  # environment variables pi reads for this provider
    headers: dict[str, str] | None = None  # request headers (config values)
    auth_header: bool = False  # send "Authorization: Bearer <key>" whatever the API
    models: list[Model] = field(factory=list)
    models_factory: Callable[[], list[Model]] | None = None  # builds ``models`` when first needed
    model_overrides: dict[str, dict[str, Any]] | None = None  # model id -> pi's override fields
    model_headers: dict[str, dict[str, str]] | None = None  # model id -> request headers (config values)
    compat: dict[str, Any] | None = None
    stream_simple: Any = None  # command-backed provider: stream(model, context, options)
    oauth: Any = None
    display_name: str = ""
    extra: dict[str, Any] = field(factory=dict)
    # pi's registerProvider without ``oauth``: ``api_key`` comes before stored logins, and a later
    # source (models.json) does not replace it
    api_key_first: bool = False


# ---------------------------------------------------------------------------
# One registration contract for providers
# ---------------------------------------------------------------------------

_PROVIDER_FIELDS = frozenset(
    {
        "base_url", "api", "api_key", "env_keys", "headers", "auth_header", "model_overrides", "compat",
        "stream_simple", "oauth", "display_name", "extra", "models_factory", "override",
    }
)  # fmt: skip


class RegistrationError(ValueError):
    """A registration of the wrong shape; the message names the plugin, the field and what was expected."""


def provider_config(
    name: str | None, config: Any = None, fields: dict[str, Any] | None = None, *, plugin: str = ""
) -> ProviderConfig:
    """A :class:`ProviderConfig` from what a plugin passed: a ``ProviderConfig``, or pi-style
    fields (camelCase, as in ``models.json``, or snake_case) as a dict and/or keywords.

    ``name`` is the provider's id wherever it is given (``register(name="acme")`` and
    ``pi.register_provider("acme", ...)`` alike); inside a pi-style config dict, ``name`` is pi's
    display name. ``models`` may hold :class:`~piko.data.messages.Model` objects or dicts of
    their fields. The hook's ``register`` and the extension API's ``register_provider`` both
    build their providers here.
    """
    from piko.data.messages import Model
    from piko.data.wire import camel
    from piko.data.wire import model_from_wire

    who = f"plugin '{plugin}': " if plugin else ""
    fields = dict(fields or {})
    if isinstance(config, ProviderConfig):
        if fields:
            raise RegistrationError(
                f"{who}provider '{config.name}': give a ProviderConfig or fields, not both"
            )
        if not plugin or not config.plugin:
            config.plugin = config.plugin or plugin
        return config
    if config is not None and not isinstance(config, dict):
        raise RegistrationError(
            f"{who}provider '{name}': the config is a {type(config).__name__}; "
            "expected a ProviderConfig or a dict of its fields"
        )
    data: dict[str, Any] = {}
    display = None
    for key, value in (config or {}).items():
        if key == "name":  # pi's display name of the provider
            display = value
            continue
        data[snake(key)] = value
    if "name" in fields:
        name = name or fields.pop("name")
        fields.pop("name", None)
    for key, value in fields.items():
        data[snake(key)] = value
    if display is not None:
        data.setdefault("display_name", display)
    if not isinstance(name, str) or not name:
        raise RegistrationError(f"{who}a provider needs a name (a non-empty string); got {name!r}")
    models: list[Model] = []
    model_headers: dict[str, dict[str, str]] = dict(data.pop("model_headers", None) or {})
    given = data.pop("models", None) or []
    if not isinstance(given, (list, tuple)):
        raise RegistrationError(
            f"{who}provider '{name}': models is a {type(given).__name__}; "
            "expected a list of piko.Model objects or dicts of their fields"
        )
    for index, model in enumerate(given):
        model_id = model.get("id") if isinstance(model, dict) else getattr(model, "id", None)
        if isinstance(model, (dict, Model)) and (not isinstance(model_id, str) or not model_id):
            raise RegistrationError(
                f"{who}provider '{name}': models[{index}].id is a {type(model_id).__name__}; "
                "expected a non-empty string (the model's id)"
            )
        if isinstance(model, dict):
            try:
                model = model_from_wire({camel(k) if "_" in k else k: v for k, v in model.items()})
            except Exception as exc:
                raise RegistrationError(
                    f"{who}provider '{name}': models[{index}] does not read as a model: {exc}"
                ) from None
        if not isinstance(model, Model):
            raise RegistrationError(
                f"{who}provider '{name}': models[{index}] is a {type(model).__name__}; "
                "expected a piko.Model or a dict of its fields (id, name, api, contextWindow, ...)"
            )
        if model.headers:  # as pi's: resolved per request like the provider's headers
            model_headers[model.id] = model.headers
            model.headers = None
        models.append(model)
    unknown = sorted(set(data) - _PROVIDER_FIELDS)
    if unknown:
        raise RegistrationError(
            f"{who}provider '{name}': unknown field(s) {', '.join(unknown)}; expected some of "
            "baseUrl, api, apiKey, headers, authHeader, models, modelOverrides, compat, name"
        )
    return ProviderConfig(
        name=name, models=models, model_headers=model_headers or None, plugin=plugin, **data
    )
