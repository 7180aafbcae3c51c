"""Registries of what plugins register: tools, provider APIs, providers, commands, flags, modes, ...

Each registration hook is called once per plugin with a ``register`` callable bound to that
plugin (see :meth:`Registries.collect`), so every entry records its owner. Definitions may
name their implementation as an ``"module:attr"`` import string; it is imported on first use,
which keeps start-up cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from piko.data.messages import Model
from piko.lib.records import Record, field

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
        value = getattr(self, attr)
        if isinstance(value, str):
            value = resolve_import(value)
            object.__setattr__(self, attr, value)
        return value


# ---------------------------------------------------------------------------
# Definitions
# ---------------------------------------------------------------------------


class ToolDefinition(Lazy, Record):
    """An LLM-callable tool.

    ``execute(tool_call_id, params, signal, on_update, ctx)`` returns a
    :class:`piko.data.messages.ToolResult` (or a dict with ``content``/``details``/``is_error``)
    and may be a coroutine function. ``prepare_arguments(arguments)``, when given, repairs the
    model's arguments before schema validation (older argument shapes, JSON sent as a string).
    ``prompt_snippet`` is the one line the system prompt shows for the tool;
    ``prompt_guidelines`` are added to the guidelines when it is active.
    """

    name: str
    label: str = ""
    description: str = ""
    parameters: dict[str, Any] = field(factory=lambda: {"type": "object", "properties": {}})
    execute: Any = None
    prepare_arguments: Any = None
    default_active: bool = False
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(factory=list)
    render_call: Any = None
    render_result: Any = None
    plugin: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


class ProviderApi(Lazy, Record):
    """A provider wire protocol: ``stream(model, context, options)`` -> async iterator of events."""

    name: str
    stream: Any = None
    plugin: str = ""


class CommandDefinition(Record):
    """A slash command; ``handler(args, ctx)`` may be a coroutine function."""

    name: str
    description: str = ""
    handler: Any = None
    get_argument_completions: Any = None
    source: str = "extension"
    plugin: str = ""


class CliCommandDefinition(Lazy, Record):
    """A CLI subcommand: a ``click.Command`` or an import string naming one."""

    name: str
    command: Any = None
    help: str = ""
    plugin: str = ""


class FlagDefinition(Lazy, Record):
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
    plugin: str = ""


class ShortcutDefinition(Record):
    """A keyboard shortcut of the interactive mode.

    ``reserved``: the key belongs to the mode itself (its own binding, no handler here); a later
    registration of it is refused as reserved. The interactive mode reserves its keys this way.
    """

    key: str
    description: str = ""
    handler: Any = None
    reserved: bool = False
    plugin: str = ""


class ModeDefinition(Lazy, Record):
    """A run mode: ``run(app) -> int`` (or a coroutine function); ``interactive`` needs a terminal."""

    name: str
    run: Any = None
    description: str = ""
    interactive: bool = False
    plugin: str = ""


class MessageRendererDefinition(Record):
    """How the interactive mode shows custom messages of one ``custom_type``."""

    custom_type: str
    renderer: Any = None
    plugin: str = ""


class ResourceLoaderDefinition(Lazy, Record):
    """A loader of one resource kind (context files, skills, prompt templates, themes)."""

    kind: str
    loader: Any = None
    plugin: str = ""


class PackageSourceDefinition(Lazy, Record):
    """A ``pi install`` source scheme (``pip``, ``git``, ``path``, ``npm``)."""

    scheme: str
    handler: Any = None
    plugin: str = ""


# Keys pi reserves in the interactive mode; extension shortcuts on them are refused.


# ---------------------------------------------------------------------------
# Registries
# ---------------------------------------------------------------------------


class Registry(Generic[T]):
    """Named definitions with their owners; a second definition of a name is refused."""

    def __init__(self, kind: str, key: str = "name") -> None:
        self.kind = kind
        self._key = key
        self._items: dict[str, T] = {}
        self.diagnostics: list[str] = []

    def add(self, definition: T, *, replace: bool = False) -> bool:
        name = getattr(definition, self._key)
        if name in self._items and not replace:
            owner = getattr(self._items[name], "plugin", "?")
            new_owner = getattr(definition, "plugin", "?")
            self.diagnostics.append(
                f"plugin '{new_owner}': {self.kind} '{name}' is already registered by '{owner}'; ignored"
            )
            return False
        self._items[name] = definition
        return True

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

    def __init__(self, pm: Any) -> None:
        self.pm = pm
        self._filled: dict[str, Registry[Any]] = {}
        self._generation: dict[str, int] = {}
        self._resource_loaders: list[ResourceLoaderDefinition] | None = None
        self._runtime: dict[str, list[Any]] = {}
        self.diagnostics: list[str] = []

    def __getattr__(self, name: str) -> Registry[Any]:
        spec = Registries.SPECS.get(name)
        if spec is None:
            raise AttributeError(name)
        registry = self._filled.get(name)
        if registry is None or self._generation.get(name) != self.pm.generation:
            registry = self._fill(name, *spec)
        return registry

    def _fill(self, attr: str, hook: str, cls: type, positional: tuple[str, ...], key: str) -> Registry[Any]:
        registry: Registry[Any] = Registry(attr.rstrip("s").replace("_", " "), key)
        self.collect(hook, lambda plugin: self._registrar(registry, cls, positional, plugin))
        # keep runtime registrations (made after start-up through the extension API)
        for item in self._runtime.get(attr, []):
            registry.add(item, replace=True)
        self._filled[attr] = registry
        self._generation[attr] = self.pm.generation
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
            if cls is ShortcutDefinition:
                held = registry.get(definition.key.lower())
                if held is not None and held.reserved:
                    registry.diagnostics.append(
                        f"plugin '{plugin}': shortcut '{definition.key}' is reserved by piko; ignored"
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
                self.diagnostics.append(
                    f"plugin '{impl.plugin_name}': {hook} failed: {type(exc).__name__}: {exc}"
                )

    def add_runtime(self, attr: str, definition: Any) -> bool:
        """Register a definition after start-up (an extension registering from a handler)."""
        registry = getattr(self, attr)
        self._runtime.setdefault(attr, []).append(definition)
        return bool(registry.add(definition, replace=True))

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


class ProviderConfig(Record):
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
    plugin: str = ""
