"""The hooks that start piko and collect what plugins register."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piko.platform.markers import hookspec

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    from piko.app.application import App
    from piko.platform.manager import PikoPluginManager
    from piko.platform.protocols import RegisterCliCommand
    from piko.platform.protocols import RegisterCommand
    from piko.platform.protocols import RegisterFlag
    from piko.platform.protocols import RegisterMessageRenderer
    from piko.platform.protocols import RegisterMode
    from piko.platform.protocols import RegisterPackageSource
    from piko.platform.protocols import RegisterProvider
    from piko.platform.protocols import RegisterProviderApi
    from piko.platform.protocols import RegisterResourceLoader
    from piko.platform.protocols import RegisterShortcut
    from piko.platform.protocols import RegisterTool


# ---------------------------------------------------------------------------
# Bootstrap hooks
# ---------------------------------------------------------------------------


@hookspec(historic=True)
def piko_addhooks(pluginmanager: PikoPluginManager) -> None:
    """Add hook specifications of a plugin's own.

    Fires once per plugin, right after it is registered (historic: late plugins get it too).

    :param pluginmanager: the :class:`piko.platform.manager.PikoPluginManager`; call
        ``pluginmanager.add_hookspecs(module_or_class)``.
    Return value: ignored.
    """


@hookspec(historic=True)
def piko_configure(config: App) -> None:
    """Plugins are loaded and settings are read; set up what needs the configuration.

    Fires once at start-up, after discovery, extension loading and blocking, before any
    registration hook is collected (historic: plugins registered later still receive it).

    :param config: the :class:`piko.app.application.App` (settings, cwd, agent dir, CLI options, registries).
    Return value: ignored.
    """


@hookspec
def piko_unconfigure(config: App) -> None:
    """piko is about to exit: release what ``piko_configure`` acquired.

    Fires once, after the mode returned and ``session_shutdown`` was dispatched.

    :param config: the :class:`piko.app.application.App`.
    Return value: ignored.
    """


# ---------------------------------------------------------------------------
# Registration hooks
# ---------------------------------------------------------------------------


@hookspec
def piko_register_tools(register: RegisterTool) -> None:
    """Register LLM-callable tools.

    Fires when the tool registry is first needed (a session is created, ``pi plugins``).

    :param register: ``register(ToolDefinition)`` or ``register(name=..., label=...,
        description=..., parameters=<JSON schema>, execute=..., default_active=False, order=None)``;
        ``execute`` may be a callable or an ``"module:attr"`` import string resolved on first call.
    Return value: ignored. A second tool with a name already taken is refused with a diagnostic.
    """


@hookspec
def piko_register_provider_apis(register: RegisterProviderApi) -> None:
    """Register provider APIs: the wire protocols (``anthropic-messages``, ``openai-completions``, ...).

    Fires when the model registry is first needed.

    :param register: ``register(ProviderApi(name=..., stream=...))`` or keyword arguments;
        ``stream(model, context, options)`` returns an async iterator of assistant message
        events (``piko.data.streaming``); it may be an ``"module:attr"`` import string.
    Return value: ignored.
    """


@hookspec
def piko_register_providers(register: RegisterProvider) -> None:
    """Register providers and their models (catalog entries, models.json, company gateways).

    Fires when the model registry is first needed, after ``piko_register_provider_apis``.

    :param register: ``register(ProviderConfig(name=..., base_url=..., api=..., api_key=...,
        headers=..., auth_header=..., models=[Model, ...], stream_simple=...))``. A later
        registration of the same provider name replaces models it names and keeps the others
        (see :mod:`piko.models.registry`); ``tryfirst`` implementations run first (the built-in
        catalog, then models.json). ``register.diagnostic(message)`` reports a problem of the
        plugin's own sources (shown as ``Warning: message``).
    Return value: ignored.
    """


@hookspec
def piko_register_commands(register: RegisterCommand) -> None:
    """Register slash commands (``/name args``) for the interactive and RPC modes.

    :param register: ``register(name, description=..., handler=...,
        get_argument_completions=None)``; ``handler(args, ctx)`` may be a coroutine function.
    Return value: ignored. A name taken by a built-in command is refused with a diagnostic.
    """


@hookspec
def piko_register_cli_commands(register: RegisterCliCommand) -> None:
    """Register CLI subcommands (``pi install``, ``pi plugins``, ...).

    Fires when the CLI is built, before arguments are parsed.

    :param register: ``register(name, command)`` where ``command`` is a ``click.Command`` or a
        ``"module:attr"`` import string naming one (imported only when that subcommand runs),
        plus ``help=`` (one line for ``pi --help``).
    Return value: ignored.
    """


@hookspec
def piko_register_flags(register: RegisterFlag) -> None:
    """Register CLI flags of a plugin (``pi --plan``); values are read with ``get_flag``.

    Fires when the CLI is built, so ``pi --help`` lists them.

    :param register: ``register(name, description=..., type="boolean" | "string", default=None)``.
    Return value: ignored.
    """


@hookspec
def piko_register_shortcuts(register: RegisterShortcut) -> None:
    """Register keyboard shortcuts for the interactive mode.

    :param register: ``register(key, description=..., handler=...)``; ``handler(ctx)``.
        ``reserved=True`` (and no handler) holds a key for a mode's own binding: a later
        registration of it is refused with a diagnostic. The interactive mode reserves pi's keys
        (ctrl+c, ctrl+d, escape, enter, ...) this way.
    Return value: ignored.
    """


@hookspec
def piko_register_modes(register: RegisterMode) -> None:
    """Register run modes (``text``/``json`` print, ``rpc``, ``interactive``, or your own).

    Fires when the CLI resolves ``--mode``.

    :param register: ``register(name, run=..., description=..., interactive=False)``;
        ``run(app) -> int`` (or a coroutine function) runs the mode and returns the exit code.
    Return value: ignored.
    """


@hookspec
def piko_register_message_renderers(register: RegisterMessageRenderer) -> None:
    """Register renderers for custom messages (by ``customType``) in the interactive mode.

    :param register: ``register(custom_type, renderer)``; ``renderer(message, options, theme)``
        returns a rich renderable.
    Return value: ignored.
    """


@hookspec
def piko_register_resource_loaders(register: RegisterResourceLoader) -> None:
    """Register loaders for resources: context files, skills, prompt templates, themes.

    :param register: ``register(kind, loader)`` where ``kind`` is ``"context_files"``,
        ``"skills"``, ``"prompt_templates"`` or ``"themes"`` and ``loader(request)`` returns
        a list of resources of that kind (see :mod:`piko.resources.loader`).
    Return value: ignored.
    """


@hookspec
def piko_register_package_sources(register: RegisterPackageSource) -> None:
    """Register package sources for ``pi install`` (``pip:``, ``git:``, ``path:``, ``npm:``).

    :param register: ``register(scheme, handler)``; ``handler`` implements install, remove,
        update and resolve of that scheme's sources.
    Return value: ignored.
    """
