"""``pi``: the object an extension's ``activate(pi)`` factory receives (pi's ``ExtensionAPI``).

Registration methods (``on``, ``register_tool``, ``register_command``, ``register_flag``,
``register_shortcut``, ``register_provider``, ``register_message_renderer``, file fallbacks)
collect what the factory asks for; :meth:`ExtensionAPI.compile` turns that into **one pluggy
plugin object** whose ``@hookimpl`` attributes register the tools, commands, ... and handle the
events. There is no second dispatch system: listing, blocking and tracing treat extensions
exactly as hook plugins.

Session actions (``send_message``, ``set_model``, ...) reach the running session; during the
load phase they raise :class:`piko.extensions.context.ExtensionRuntimeNotInitializedError`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    import logging

from piko.extensions.context import ExtensionRuntimeNotInitializedError
from piko.extensions.context import schedule
from piko.lib.off_loop import call_on_loop
from piko.lib.off_loop import home_loop
from piko.lib.off_loop import on_loop
from piko.platform.markers import hookimpl
from piko.platform.registries import CommandDefinition
from piko.platform.registries import FlagDefinition
from piko.platform.registries import MessageRendererDefinition
from piko.platform.registries import ShortcutDefinition
from piko.platform.registries import ToolDefinition
from piko.platform.semantics import subscribable_events

_MISSING = object()

# omp's names of events pi and piko call otherwise.
EVENT_ALIASES = {
    "session_before_branch": "session_before_fork",
    "session_branch": "session_fork",
    "session.compacting": "session_compacting",
}


def adapt_handler(handler: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    """Let a handler take ``(event, ctx)``, ``(event)`` or nothing."""
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return handler
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return handler
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) >= 2:
        return handler
    from piko.platform.dispatch import wrapping

    if len(positional) == 1:
        return wrapping(handler, lambda event, ctx: handler(event))
    return wrapping(handler, lambda event, ctx: handler())


def _event_hook(handlers: list[Callable[[Any, Any], Any]], first: str = "event") -> Callable[..., Any]:
    """A ``piko_<event>`` implementation running ``handlers``; the dispatcher expands the list.

    ``first`` is the name of the spec's first argument (``request`` for service hooks): pluggy
    refuses an implementation whose argument names the spec does not have.
    """

    def event_hook(event: Any, ctx: Any) -> Any:
        # Only reached when someone calls pm.hook directly; the dispatcher uses _piko_handlers.
        result = None
        for handler in handlers:
            value = handler(event, ctx)
            if value is not None and not hasattr(value, "__await__"):
                result = value
        return result

    def request_hook(request: Any, ctx: Any) -> Any:
        return event_hook(request, ctx)

    hook = request_hook if first == "request" else event_hook
    hook._piko_handlers = handlers  # type: ignore[union-attr]
    return hookimpl(hook)


_MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")  # as docs/mcp.md names servers


CUSTOM_ENTRY_CHANNEL = "piko:custom_entry"
"""The ``pi.events`` channel told of each ``pi.append_entry`` (``{"id", "custom_type"}``)."""


def registered_displays(app: Any, kind: str) -> list[Any]:
    """What every extension registered for ``kind`` (``"assistant_thinking_renderer"``,
    ``"entry_renderer"``, ``"markdown_transformer"``...), in load and registration order."""
    return [
        value
        for api in getattr(app, "extension_apis", None) or []
        for registered, value in api.display_registrations
        if registered == kind
    ]


class PackageExports:
    """``pi.pi``: every name of the :mod:`piko` module, and ``settings`` of the running app."""

    def __init__(self, app: Any) -> None:
        self._app = app

    @property
    def settings(self) -> Any:
        return getattr(self._app, "settings", None)

    def __getattr__(self, name: str) -> Any:
        import piko

        return getattr(piko, name)


class ExtensionAPI:
    """Registration and actions of one extension (snake_case mirror of pi's ``ExtensionAPI``)."""

    def __init__(self, name: str, source: str | None = None, app: Any = None) -> None:
        self.name = name
        self.source = source or name
        self._app = app
        self.label: str | None = None
        self._handlers: dict[str, list[Callable[[Any, Any], Any]]] = {}
        self._tools: list[ToolDefinition] = []
        self._commands: list[CommandDefinition] = []
        self._flags: list[FlagDefinition] = []
        self._shortcuts: list[ShortcutDefinition] = []
        self._providers: list[Any] = []
        self._renderers: list[MessageRendererDefinition] = []
        self._write_fallbacks: list[Callable[..., Any]] = []
        self._delete_fallbacks: list[Callable[..., Any]] = []
        self._extra: Any = None
        self._compiled: Any = None
        self._unknown_events: set[str] = set()
        self._tool_renderers: dict[str, dict[str, Callable[..., Any]]] = {}
        self._service_tiers: dict[str, str] = {}
        self.display_registrations: list[tuple[str, Any]] = []

    # -- shared services ---------------------------------------------------------------------

    @property
    def events(self) -> Any:
        """The event bus shared by all extensions (``pi.events.emit`` / ``pi.events.on``)."""
        return self._app.event_bus

    @property
    def pi(self) -> Any:
        """The package's exports (pi's ``pi.pi``): the :mod:`piko` module's names, and ``settings``,
        the running app's :class:`~piko.config.settings.Settings` (the scope of
        :mod:`piko.config.registry`'s handles)."""
        return PackageExports(self._app)

    @property
    def logger(self) -> logging.Logger:
        """The extension's logger; what it logs is redacted (:mod:`piko.lib.redaction`)."""
        import logging  # on first use: logging costs start-up time

        from piko.lib.redaction import RedactingLogFilter

        logger = logging.getLogger(f"piko.extensions.{self.name}")
        if not any(isinstance(f, RedactingLogFilter) for f in logger.filters):
            logger.addFilter(RedactingLogFilter())
        return logger

    # -- registration ------------------------------------------------------------------------

    def on(self, event: str, handler: Callable[..., Any]) -> None:
        """Handle ``event`` (pi's event names: ``"tool_call"``, ``"session_start"``, ...).

        omp's names for pi's events are accepted (``session_before_branch`` is
        ``session_before_fork``). An event this runtime does not have is one warning per
        extension and name, and the handler is left out: an extension written for a newer
        runtime still loads.
        """
        event = EVENT_ALIASES.get(event, event)
        if event not in subscribable_events():
            if event not in self._unknown_events:
                self._unknown_events.add(event)
                import difflib

                close = difflib.get_close_matches(event, sorted(subscribable_events()), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self._warn(f"pi.on('{event}'): no such event in this version of piko{hint}; handler ignored")
            return
        self._handlers.setdefault(event, []).append(adapt_handler(handler))
        self._refresh()

    def register_tool(self, tool: Any = None, **kwargs: Any) -> ToolDefinition:
        """Register a tool: pi's object (``register_tool({"name": ..., "execute": ...})``, camelCase
        or snake_case keys), keywords (``register_tool(name=, description=, execute=)``) or a
        :class:`ToolDefinition`. ``hidden``/``default_inactive`` keep it inactive until asked for;
        ``on_session(event, ctx)`` hears the session events; unknown fields are one warning."""
        from piko.extensions.extension_shapes import options_of
        from piko.extensions.extension_shapes import tool_fields
        from piko.lib.records import replace

        if isinstance(tool, ToolDefinition):
            definition = tool
            if kwargs:
                definition = replace(tool, **kwargs)
        else:
            options = options_of(tool, kwargs)
            definition = ToolDefinition(**tool_fields(options, self._warn))
            if callable(options.get("on_session")):
                self._subscribe_on_session(options["on_session"])
        definition.plugin = self.name
        if not definition.label:
            definition.label = definition.name
        self._tools.append(definition)
        self._apply_tool_renderers()
        if self._live():
            self._app.registries.add_runtime("tools", definition)
            if definition.default_active:
                self._activate_now(definition.name)
        self._refresh()
        return definition

    def _subscribe_on_session(self, on_session: Callable[..., Any]) -> None:
        """A tool's ``on_session(event, ctx)``: called on each session event with ``event.reason``."""
        from types import SimpleNamespace

        reasons = {
            "session_start": "start", "session_switch": "switch", "session_fork": "branch",
            "session_tree": "tree", "session_shutdown": "shutdown",
        }  # fmt: skip
        for event_name, reason in reasons.items():

            def hear(event: Any, ctx: Any, reason: str = reason) -> Any:
                return on_session(SimpleNamespace(reason=reason, event=event), ctx)

            self._handlers.setdefault(event_name, []).append(hear)

    def _activate_now(self, name: str) -> None:
        """A tool registered while the session runs joins the active tools (pi mounts it live)."""
        runtime = getattr(self._app, "runtime", None)
        if runtime is None:
            return
        active = list(runtime.get_active_tools())
        if name not in active:
            runtime.set_active_tools([*active, name])

    def _warn(self, message: str) -> None:
        """One diagnostic line naming this extension (``Warning: ...`` on stderr, ``pi plugins``)."""
        line = f"extension '{self.name}' ({self.source}): {message}"
        if self._app is not None:
            self._app.pm.diagnose(line)
        else:
            self.logger.warning(line)

    def register_command(
        self,
        name: str,
        description: Any = "",
        handler: Callable[..., Any] | None = None,
        get_argument_completions: Callable[..., Any] | None = None,
        **options: Any,
    ) -> CommandDefinition:
        """Register ``/name``: ``register_command(name, {"description":, "handler":})`` as pi
        does, or keywords; ``handler(args, ctx)`` may be a coroutine function."""
        from piko.extensions.extension_shapes import COMMAND_FIELDS
        from piko.extensions.extension_shapes import options_of
        from piko.extensions.extension_shapes import simple_fields

        given = options_of(description if not isinstance(description, str) else None, options)
        if callable(description) and not isinstance(description, dict):
            given.setdefault("handler", description)
        fields = simple_fields("command", name, given, COMMAND_FIELDS, self._warn)
        text = description if isinstance(description, str) else fields.get("description", "")
        definition = CommandDefinition(
            name=name.lstrip("/"),
            description=str(text or ""),
            handler=handler or fields.get("handler"),
            get_argument_completions=get_argument_completions or fields.get("get_argument_completions"),
            plugin=self.name,
        )
        self._commands.append(definition)
        if self._live():
            self._app.registries.add_runtime("commands", definition)
        self._refresh()
        return definition

    def register_flag(
        self, name: str, description: Any = "", type: str = "boolean", default: Any = None, **options: Any
    ) -> FlagDefinition:
        """Register ``--name``: ``register_flag(name, {"description":, "type":, "default":})`` or
        keywords (``type`` ``"boolean"`` or ``"string"``); read it with :meth:`get_flag`."""
        if not isinstance(description, str):  # pi's options object: checked field by field
            from piko.extensions.extension_shapes import FLAG_FIELDS
            from piko.extensions.extension_shapes import options_of
            from piko.extensions.extension_shapes import simple_fields

            fields = simple_fields("flag", name, options_of(description, options), FLAG_FIELDS, self._warn)
            description = fields.get("description", "")
            type = fields.get("type", type)
            default = fields.get("default", default)
        elif options:
            self._warn(f"flag '{name}': unknown field(s) {', '.join(sorted(options))}; ignored")
        if type not in ("boolean", "string"):
            raise ValueError(f"flag '{name}': type must be 'boolean' or 'string'")
        definition = FlagDefinition(
            name=name.lstrip("-"), description=str(description or ""), type=type, default=default
        )
        definition.plugin = self.name
        self._flags.append(definition)
        self._refresh()
        return definition

    def get_flag(self, name: str) -> Any:
        """The value given on the command line, else the flag's default."""
        name = name.lstrip("-")
        values = getattr(self._app, "flag_values", {}) if self._app is not None else {}
        if name in values:
            return values[name]
        for flag in self._flags:
            if flag.name == name:
                return flag.default
        return None

    def register_shortcut(
        self, key: str, description: Any = "", handler: Callable[..., Any] | None = None, **options: Any
    ) -> None:
        """Register a key for the interactive mode: ``register_shortcut(key, {"description":,
        "handler":})`` or keywords; ``handler(ctx)``."""
        from piko.extensions.extension_shapes import SHORTCUT_FIELDS
        from piko.extensions.extension_shapes import options_of
        from piko.extensions.extension_shapes import simple_fields

        if not isinstance(description, str) or options:
            fields = simple_fields(
                "shortcut", key, options_of(description if not isinstance(description, str) else None, options),
                SHORTCUT_FIELDS, self._warn,
            )  # fmt: skip
            handler = handler or fields.get("handler")
            description = description if isinstance(description, str) else fields.get("description", "")
        self._shortcuts.append(
            ShortcutDefinition(key=key, description=str(description or ""), handler=handler, plugin=self.name)
        )
        self._refresh()

    def register_provider(self, name: str, config: Any = None, **kwargs: Any) -> Any:
        """Register a provider (``base_url``/``baseUrl``, ``api``, ``api_key``, ``models``, ``stream_simple``...)."""
        from piko.platform.registries import provider_config

        config, kwargs, fetch = self._provider_extras(name, config, kwargs)
        provider = provider_config(name, config, kwargs, plugin=self.name)
        if fetch is not None:
            from piko.extensions.dynamic_models import dynamic_models_factory

            provider.models_factory = dynamic_models_factory(name, fetch, provider.models, self._warn_now)
            provider.models = []
        provider.override = True  # pi's registerProvider changes a provider of that name, as asked
        # its key wins over stored logins and models.json, unless it is the fallback of an oauth login
        provider.api_key_first = bool(provider.api_key) and provider.oauth is None
        self._providers.append(provider)
        if self._live():
            self._app.model_registry.add_provider(provider)
        self._refresh()
        return provider

    def _warn_now(self, message: str) -> None:
        """:meth:`_warn`, shown at once when start-up warnings were already printed."""
        self._warn(message)
        if self._app is not None and getattr(self._app, "booted", False):
            self._app.report()

    def _provider_extras(
        self, name: str, config: Any, kwargs: dict[str, Any]
    ) -> tuple[Any, dict[str, Any], Any]:
        """The config without omp's provider fields piko reads here (``fetchDynamicModels``) or
        not at all (``usage``, ``cacheVersion``: one warning each); and the fetch function."""
        config = dict(config) if isinstance(config, dict) else config
        kwargs = dict(kwargs)
        fetch = None
        for source in (config, kwargs):
            if not isinstance(source, dict):
                continue
            for key in ("fetchDynamicModels", "fetch_dynamic_models"):
                if key in source:
                    fetch = source.pop(key)
            for key, why in (("usage", "piko has no usage reports"), ("cacheVersion", "piko keeps no usage cache"),
                             ("cache_version", "piko keeps no usage cache")):  # fmt: skip
                if key in source:
                    source.pop(key)
                    self._warn(f"provider '{name}': {key} is not supported ({why}); ignored")
        if fetch is not None and not callable(fetch):
            raise ValueError(f"register_provider({name!r}): fetchDynamicModels must be a function")
        return config, kwargs, fetch

    def unregister_provider(self, name: str) -> None:
        """Remove a provider this extension registered; one it overrode comes back as it was."""
        self._providers = [p for p in self._providers if p.name != name]
        if self._live():
            self._app.model_registry.remove_provider(name, plugin=self.name)
        self._refresh()

    # -- MCP servers (pi 1.6); an MCP plugin connects them --------------------------------------

    def register_mcp_server(self, name: str, config: Any = None, **kwargs: Any) -> None:
        """Add an MCP server for this run, shaped as an ``mcpServers`` entry of ``mcp.json``
        (``command``/``args``/``env``/``cwd``, or ``url``/``headers``; ``exposure``, ...).

        Registering the same name again replaces this extension's entry; a name another
        extension registered, a bad name or an entry without ``command`` or ``url`` raises
        ``ValueError``. A server of that name in ``mcp.json`` takes precedence.
        """
        entry = {**(dict(config) if isinstance(config, dict) else {}), **kwargs}
        if config is not None and not isinstance(config, dict):
            raise ValueError(f"register_mcp_server({name!r}): the config must be a dict")
        if not isinstance(name, str) or not _MCP_SERVER_NAME.fullmatch(name):
            raise ValueError(f"register_mcp_server: invalid server name {name!r} (letters, digits, _ and -)")
        if not isinstance(entry.get("command"), str) and not isinstance(entry.get("url"), str):
            raise ValueError(f'register_mcp_server("{name}"): the config needs a "command" or a "url"')
        servers = self._app.extension_mcp_servers
        owner = servers.get(name, (None, self.name))[1]
        if owner != self.name:
            raise ValueError(f'register_mcp_server: "{name}" is already registered by extension {owner}')
        servers[name] = (entry, self.name)
        self._mcp_servers_changed()

    def unregister_mcp_server(self, name: str) -> None:
        """Remove a server this extension registered (others' are left alone)."""
        servers = self._app.extension_mcp_servers
        if name in servers and servers[name][1] == self.name:
            del servers[name]
            self._mcp_servers_changed()

    def _mcp_servers_changed(self) -> None:
        """Once the session runs, ``mcp_servers_change`` tells the MCP plugin (not awaited)."""
        if not self._live():
            return  # while loading: the servers connect at session start
        from piko.data.events import McpServersChangeEvent

        runtime = self._app.runtime
        event = McpServersChangeEvent(servers=self.get_mcp_servers())
        schedule(self._app.dispatcher.emit("mcp_servers_change", event, runtime.ctx))

    def get_mcp_servers(self) -> list[dict[str, Any]]:
        """Every extension-registered server: ``{"name", "config", "extension"}``."""
        return [
            {"name": name, "config": dict(entry), "extension": extension}
            for name, (entry, extension) in self._app.extension_mcp_servers.items()
        ]

    def register_message_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        """Render custom messages of ``custom_type`` in the interactive mode."""
        self._renderers.append(
            MessageRendererDefinition(custom_type=custom_type, renderer=renderer, plugin=self.name)
        )
        self._refresh()

    # -- display registrations (kept in display_registrations; the interactive mode reads them) ---

    def register_assistant_thinking_renderer(self, renderer: Callable[..., Any]) -> None:
        """``renderer(context, theme)`` adds a renderable (or text, or ``None``) below each visible
        thinking block in the interactive mode; ``context.text`` is the block's text."""
        self._keep_display("assistant_thinking_renderer", renderer)

    def register_composer_shape(self, definition: Any) -> None:
        """Kept in :attr:`display_registrations`; piko's editor has one shape."""
        self._keep_display("composer_shape", definition)

    def register_entry_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        """``renderer(entry, {"expanded"}, theme)`` draws the ``custom`` entries of ``custom_type``
        (``pi.append_entry``) in the interactive transcript: live, and when a session is shown."""
        self._keep_display("entry_renderer", (custom_type, renderer))

    def register_markdown_transformer(self, transformer: Callable[..., Any], options: Any = None) -> None:
        """``transformer(markdown, context)`` changes markdown before the interactive mode draws it
        (``{"messageTypes": [...]}`` picks the surfaces); one per extension: again replaces it."""
        self.display_registrations = [r for r in self.display_registrations if r[0] != "markdown_transformer"]
        self._keep_display("markdown_transformer", (transformer, options))

    def register_tool_renderer(self, tool_name: str, options: Any = None, **kwargs: Any) -> None:
        """``render_call``/``render_result`` for a tool, also one registered later or by someone else
        (pi 1.6's ``registerToolRenderer``); applied when the tool is (or becomes) known."""
        from piko.extensions.extension_shapes import options_of

        given = options_of(options, kwargs)
        renderers = {k: given[k] for k in ("render_call", "render_result") if callable(given.get(k))}
        self._tool_renderers[tool_name] = renderers
        self._apply_tool_renderers()

    def _apply_tool_renderers(self) -> None:
        registry = getattr(getattr(self._app, "registries", None), "tools", None) if self._app else None
        for tool in [*self._tools, *(list(registry) if registry is not None else [])]:
            for field_name, renderer in self._tool_renderers.get(tool.name, {}).items():
                if getattr(tool, field_name, None) is None:
                    setattr(tool, field_name, renderer)

    def _keep_display(self, kind: str, value: Any) -> None:
        self.display_registrations.append((kind, value))

    # -- service tiers -----------------------------------------------------------------------

    @property
    def _tiers(self) -> dict[str, str]:
        shared = getattr(self._app, "service_tiers", None) if self._app is not None else None
        return shared if isinstance(shared, dict) else self._service_tiers

    def get_service_tiers(self) -> dict[str, str]:
        """A copy of the session's per-family service tiers (shared by every extension)."""
        return dict(self._tiers)

    def set_service_tier(self, family: str, tier: str | None = None) -> None:
        """Set the tier of a provider family for the next requests (``None`` clears it); a tier
        the family does not accept raises ``ValueError`` (:mod:`piko.extensions.service_tiers`)."""
        from piko.extensions.service_tiers import checked_tier

        if tier is None:
            self._tiers.pop(family, None)
        else:
            self._tiers[family] = checked_tier(family, tier)

    def register_file_write_fallback(self, handler: Callable[..., Any]) -> None:
        """Offer a privileged write when a tool's write fails with EPERM/EACCES/EROFS."""
        self._write_fallbacks.append(adapt_handler(handler))
        self._refresh()

    def register_file_delete_fallback(self, handler: Callable[..., Any]) -> None:
        """Offer a privileged unlink when a tool's delete fails with EPERM/EACCES/EROFS."""
        self._delete_fallbacks.append(adapt_handler(handler))
        self._refresh()

    def remove_file_fallbacks(self) -> None:
        """Forget this extension's file fallbacks (pi removes them at session shutdown)."""
        if self._write_fallbacks or self._delete_fallbacks:
            self._write_fallbacks.clear()
            self._delete_fallbacks.clear()
            self._refresh()

    def set_label(self, label_or_entry_id: str | None, label: Any = _MISSING) -> None:
        """``set_label(text)`` names this extension; ``set_label(entry_id, label)`` labels a session entry."""
        if label is _MISSING:
            self.label = label_or_entry_id
            if self._app is not None and self.name in self._app.pm.infos:
                self._app.pm.infos[self.name].label = label_or_entry_id
            return
        self._runtime("set_label").set_label(label_or_entry_id, label)

    async def exec(
        self, command: str, args: list[str] | None = None, options: Any = None, **keywords: Any
    ) -> Any:
        """Run a program (no shell) and return ``ExecResult(stdout, stderr, code, killed)``.

        Options as keywords (``timeout`` in seconds, ``signal``, ``cwd``, ``env``) or as pi's
        object, ``pi.exec(cmd, args, {"signal": s, "timeout": 5000})``, whose ``timeout`` is in
        milliseconds as in the reference.
        """
        from piko.extensions.extension_shapes import options_of
        from piko.lib.exec import run_command

        given = options_of(options)
        if "timeout" in given and given["timeout"] is not None:
            given["timeout"] = given["timeout"] / 1000  # pi's object gives milliseconds
        unknown = sorted(set(given) - {"timeout", "signal", "cwd", "env"})
        if unknown:
            raise TypeError(f"pi.exec: unknown options {', '.join(unknown)} (timeout, signal, cwd, env)")
        return await run_command(command, list(args or []), **{**given, **keywords})

    # -- session actions (available once the session runs) -----------------------------------

    def _runtime(self, name: str) -> Any:
        """The running session (seen through a :class:`~piko.lib.off_loop.LoopProxy` on a handler thread)."""
        runtime = getattr(self._app, "runtime", None) if self._app is not None else None
        if runtime is None:
            raise ExtensionRuntimeNotInitializedError(
                f"pi.{name}() is available once the session runs: call it from an event handler, "
                "a command or a tool, not while the extension loads"
            )
        return on_loop(runtime)

    def send_message(
        self, message: Any, options: Any = None, *, deliver_as: str | None = None,
        trigger_turn: bool = False, attribution: str | None = None,
    ) -> Any:  # fmt: skip
        """Inject a custom message (``custom_type``, ``content``, ``display``, ``details``; plain
        text is its content).

        Options, as keywords or pi's object (``send_message(msg, {"deliverAs": "steer"})``):
        ``deliver_as`` ``"steer"`` (default while streaming), ``"followUp"``, ``"nextTurn"`` or
        ``"aside"``; ``trigger_turn`` starts a turn when idle; ``attribution`` ``"user"``/``"agent"``.
        Returns a task (awaiting it is optional).
        """
        return self._send(
            "send_message", "send_custom_message", message, options,
            deliver_as=deliver_as, trigger_turn=trigger_turn, attribution=attribution,
        )  # fmt: skip

    def send_user_message(
        self,
        content: Any,
        options: Any = None,
        *,
        deliver_as: str | None = None,
        attribution: str | None = None,
    ) -> Any:
        """Submit user text or blocks without command or template expansion (returns a task).

        ``deliver_as`` (or pi's ``{"deliverAs": ...}``): omitted starts a prompt when idle and
        steers while streaming; ``"steer"``/``"followUp"`` queue; ``"aside"`` steers or starts a
        turn. Sent from an ``input`` handler, it does not come back to the ``input`` handlers.
        ``attribution`` (``"user"`` by default, or ``"agent"``) is recorded on the message.
        """
        return self._send(
            "send_user_message", "send_user_message", content, options,
            deliver_as=deliver_as, attribution=attribution,
        )  # fmt: skip

    def _send(self, name: str, action: str, body: Any, options: Any, **keywords: Any) -> Any:
        """A task running the session's ``action`` (for ``pi.<name>``) on ``body``, each keyword as
        given, else as pi's ``options`` object (camelCase or snake_case keys) has it."""
        from piko.extensions.extension_shapes import options_of

        given = options_of(options)
        chosen = {key: value or given.get(key, value) for key, value in keywords.items()}
        return schedule(getattr(self._runtime(name), action)(body, **chosen))

    def append_entry(self, custom_type: str, data: Any = None) -> Any:
        """Persist extension state as a ``custom`` session entry (not sent to the model); the
        interactive mode draws it when an entry renderer takes its type (:data:`CUSTOM_ENTRY_CHANNEL`)."""
        entry_id = self._runtime("append_entry").append_entry(custom_type, data)
        bus = getattr(self._app, "event_bus", None)
        if bus is not None:
            bus.emit(CUSTOM_ENTRY_CHANNEL, {"id": entry_id, "custom_type": custom_type})
        return entry_id

    def set_session_name(self, name: str) -> Any:
        """Name the session (a ``session_info`` entry; ``/resume`` and ``pi --list`` show it)."""
        return self._runtime("set_session_name").set_session_name(name)

    def get_session_name(self) -> str | None:
        """The session's name, or ``None`` when it has none."""
        result = self._runtime("get_session_name").get_session_name()
        return None if result is None else str(result)

    def get_active_tools(self) -> list[str]:
        """The names of the tools the model is offered now."""
        return list(self._runtime("get_active_tools").get_active_tools())

    def get_all_tools(self) -> list[dict[str, Any]]:
        """Every registered tool, active or not: ``name``, ``description``, ``parameters``, ``source`` (its plugin)."""
        return list(self._runtime("get_all_tools").get_all_tools())

    def set_active_tools(self, names: list[str]) -> Any:
        """Offer exactly the tools ``names`` (unknown names are ignored) from the next model call on."""
        return self._runtime("set_active_tools").set_active_tools(list(names))

    def get_commands(self) -> list[dict[str, Any]]:
        """Extension commands, prompt templates and skills, as RPC ``get_commands`` lists them."""
        return list(self._runtime("get_commands").get_commands())

    async def set_model(self, model: Any) -> bool:
        """Switch the session's model (a ``Model`` or ``"provider/id"``); False without credentials."""
        runtime = self._runtime("set_model")
        if isinstance(model, str):
            provider, _, model_id = model.partition("/")
            found = runtime.model_registry.find(provider, model_id)
            if found is None:
                return False
            model = found
        try:
            await runtime.set_model(model)
        except RuntimeError:
            return False
        return True

    def get_thinking_level(self) -> str:
        """The session's thinking level (``"off"``, ``"minimal"``, ... ``"xhigh"``)."""
        return str(self._runtime("get_thinking_level").thinking_level)

    def set_thinking_level(self, level: str) -> Any:
        """Change the thinking level (clamped to what the model supports, as ``/thinking`` does)."""
        return self._runtime("set_thinking_level").set_thinking_level(level)

    # -- compilation -------------------------------------------------------------------------

    def _live(self) -> bool:
        return self._compiled is not None and getattr(self._app, "runtime", None) is not None

    def _refresh(self) -> None:
        """After start-up, re-register the compiled plugin so new handlers take effect."""
        if self._compiled is None or self._app is None:
            return
        if home_loop() is not None:  # called by a handler on its thread: the plugin manager is the loop's
            call_on_loop(self._refresh)
            return
        pm = self._app.pm
        if pm.get_plugin(self.name) is not self._compiled:
            return
        pm.unregister(self._compiled)
        plugin = self.compile(extra=self._extra)
        pm.register(plugin, self.name)
        if self.name in pm.infos:
            pm.infos[self.name].hooks = pm.hooks_of(plugin)

    def compile(self, extra: Any = None) -> Any:
        """One plugin object implementing the hooks for everything registered so far.

        ``extra`` (the extension's module) contributes its own ``@hookimpl`` functions; where
        it implements an event this API also handles, the module's function runs first.
        """
        self._extra = extra
        plugin_cls = type(f"Extension[{self.name}]", (), {"__module__": __name__})
        plugin = plugin_cls()
        marker = "piko_impl"
        if extra is not None:
            for attr in dir(extra):
                if attr.startswith("piko_"):
                    value = getattr(extra, attr, None)
                    if callable(value) and hasattr(value, marker):
                        setattr(plugin, attr, value)
        for event, handlers in self._handlers.items():
            attr = f"piko_{event}"
            own = getattr(plugin, attr, None)
            merged = list(handlers)
            if own is not None:
                merged.insert(0, adapt_handler(own))
            setattr(plugin, attr, _event_hook(merged))
        self._add_registration(plugin, "piko_register_tools", self._tools)
        self._add_registration(plugin, "piko_register_commands", self._commands)
        self._add_registration(plugin, "piko_register_flags", self._flags)
        self._add_registration(plugin, "piko_register_shortcuts", self._shortcuts)
        self._add_registration(plugin, "piko_register_message_renderers", self._renderers)
        self._add_registration(plugin, "piko_register_providers", self._providers)
        for attr, handlers in (
            ("piko_file_write_fallback", self._write_fallbacks),
            ("piko_file_delete_fallback", self._delete_fallbacks),
        ):
            if handlers:
                setattr(plugin, attr, _event_hook(list(handlers), first="request"))
        self._compiled = plugin
        return plugin

    @staticmethod
    def _add_registration(plugin: Any, attr: str, items: list[Any]) -> None:
        if not items:
            return
        own = getattr(plugin, attr, None)
        snapshot = list(items)

        def register_all(register: Any) -> None:
            if own is not None:
                own(register)
            for item in snapshot:
                register(item)

        setattr(plugin, attr, hookimpl(register_all))
