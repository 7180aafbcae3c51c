"""The application object: settings, plugins, registries and the dispatcher of one piko process.

``App.boot`` loads plugins in a fixed order: the managed policy is read (:mod:`piko.config.policy`);
the user's blocking is decided (``--disable-plugin``, ``PIKO_DISABLE_PLUGINS``, the user's settings
``disabledPlugins``, the policy, the ``PIKO_PLUGINS`` allowlist); entry points are discovered and
loaded, and the user's extension files (``-e``, the global ``extensions`` list and folder). Then
project trust is settled (:mod:`piko.app.trust`: these plugins may decide through
``project_trust``; asked once only in an interactive run). A trusted project's ``.pi/python``
packages then go first on the import path and load, and its ``disabledPlugins`` blocks (and
unloads) what it names; package sources install what settings list but is missing; the
extension files of packages and of a trusted project's ``.pi/extensions/`` load; misspelled
hooks are weeded out, a notice names each plugin of the user that a trusted project disabled,
and ``piko_configure`` runs. Modes receive the ``App`` and build sessions on it.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any
from typing import TextIO

from piko.config.paths import agent_dir as default_agent_dir
from piko.config.paths import expand_user
from piko.config.paths import offline as paths_offline
from piko.config.paths import project_dir
from piko.config.settings import Settings
from piko.config.trust_store import TrustStore
from piko.extensions.event_bus import EventBus
from piko.extensions.extension_api import ExtensionAPI
from piko.lib.records import Record
from piko.lib.records import field
from piko.platform import discovery
from piko.platform.manager import PikoPluginManager
from piko.platform.provenance import Provenance
from piko.platform.registries import Registries
from piko.platform.tracing import Tracer


class BootOptions(Record):
    """What must be known before plugins load (pre-parsed from the command line)."""

    disable_plugins: list[str] = field(factory=list)
    extensions: list[str] = field(factory=list)
    no_extensions: bool = False
    interactive: bool = False  # may ask on the terminal (whether to trust the project)
    mode: str = "print"  # the run's mode as ``ctx.mode`` names it: tui, print, json, rpc or a plugin's
    command: str | None = None  # the first word when it is not an option (a subcommand or a prompt)
    offline: bool = False  # --offline: install nothing at start-up
    # (name, activate(pi)) extensions given as code (the SDK's ``extensions=``), loaded after the files
    inline_extensions: list[tuple[str, Any]] = field(factory=list)
    approve: bool | None = None  # --approve (True) / --no-approve (False): trust for this run only


# Who asked to block a plugin, as ``pi plugins`` shows it.
USER_DISABLED = "settings disabledPlugins"
PROJECT_DISABLED = "project settings disabledPlugins"


def _env_list(name: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, "").split(",") if part.strip()]


class App:
    """One piko process: everything a mode needs to build and run sessions."""

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        agent_dir: str | os.PathLike[str] | None = None,
        *,
        settings: Settings | None = None,
    ) -> None:
        """``settings``: the settings to use instead of reading the files (``Settings.in_memory``)."""
        self.cwd = Path(cwd) if cwd is not None else Path(os.getcwd())
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.trust = TrustStore(self.agent_dir)
        self.project_trusted = self.trust.is_trusted(self.cwd)
        if settings is not None:
            settings.set_project_trusted(self.project_trusted)
        self.settings = settings or Settings(self.cwd, self.agent_dir, project_trusted=self.project_trusted)
        self.service_tiers: dict[str, str] = {}  # per provider family (pi.set_service_tier)
        self.pm = PikoPluginManager()
        self.tracer = Tracer.from_environment()
        if self.tracer is not None:
            self.tracer.attach(self.pm)
        self.provenance = Provenance()
        self.registries = Registries(self.pm, self.provenance)
        self.event_bus = EventBus()
        self.options: dict[str, Any] = {}
        self.flag_values: dict[str, Any] = {}
        # pi.register_mcp_server: name -> (mcp.json-shaped entry, extension name), for an MCP plugin
        self.extension_mcp_servers: dict[str, tuple[dict[str, Any], str]] = {}
        self.extension_apis: list[ExtensionAPI] = []  # every ``pi`` handed out, in load order
        self.runtime: Any = None  # the running agent session, once a mode created one
        self.adjust_resources: Any = None  # resources found -> resources used (the SDK's overrides)
        self.trust_decision: Any = None  # how boot settled project trust (piko.app.trust.TrustDecision)
        self.notices: list[str] = []
        self.booted = False

    # -- boot ----------------------------------------------------------------------------------

    def boot(self, options: BootOptions | None = None) -> App:
        """Load every plugin and extension that is not blocked (see the module docstring)."""
        options = options or BootOptions()
        from piko.app import core_plugin
        from piko.app import trust
        from piko.config.policy import load_policy

        apply_http_proxy(self.settings.global_data.get("httpProxy"))
        self.policy = load_policy()
        self.registries.overrides_forbidden = self.policy.forbids_overrides()
        self.registries.policy = self.policy
        if self.policy.settings:  # forced values win over every settings file and flag
            self.settings.force(self.policy.settings, self.policy.source)
        self.pm.register_internal(core_plugin, "core")
        self.pm.hook.piko_addhooks.call_historic(kwargs={"pluginmanager": self.pm})
        # The user's own plugins load first, with nothing of the project's: they may take part
        # in the trust decision (project_trust), which comes before any project code is even on
        # the import path.
        self.project_trusted = False
        self.settings.set_project_trusted(False)
        records = discovery.scan()
        blocked = self._blocked(options, records)
        self.pm.apply_blocking(blocked, self._allowlist())
        self.pm.load_entry_points(records, self.make_extension_api)
        user_packages = _start_packages(self, options)  # the user's packages vote too, as in pi 1.6
        for path in [*self._user_extension_paths(options), *user_packages]:
            self.pm.load_extension_file(path, self.make_extension_api)
        trust.settle(
            self, interactive=options.interactive, command=options.command, approve=options.approve,
            mode=options.mode,
        )  # fmt: skip
        project_packages: list[Path] = []
        if self.project_trusted:
            records = self._load_project_plugins(records)
            blocked.update(self._project_blocked())
            project_packages = [p for p in _start_packages(self, options) if p not in user_packages]
        for path in [*project_packages, *self._project_extension_paths(options)]:
            self.pm.load_extension_file(path, self.make_extension_api)
        for name, factory in options.inline_extensions:
            self.pm.load_inline_extension(name, factory, self.make_extension_api)
        self.pm.validate()
        self.pm.report_unknown_names(
            {**blocked, **{name: "PIKO_PLUGINS" for name in self._allowlist() or ()}}
        )
        self.notices.extend(self._project_disabled_notices(records))
        self.pm.hook.piko_configure.call_historic(kwargs={"config": self})
        self._boot_options = options
        self._package_extensions = [*user_packages, *project_packages]
        self.booted = True
        return self

    def _load_project_plugins(self, records: list[Any]) -> list[Any]:
        """A trusted project's part of the start-up: its ``.pi/python`` packages go first on the
        import path and their plugins load. Returns every entry point record now known."""
        from piko.app import trust

        site = trust.activate_project_site(self.cwd)
        if site is None:
            return records
        own = discovery.scan(paths=[str(site)])
        for record in own:  # the project's version of a distribution the user has too wins
            self._unload_entry_point(record.name, record)
        known = {r.name for r in records if r.name not in {o.name for o in own}}
        fresh = [r for r in discovery.scan() if r.name not in known]
        for name, reason in _policy_blocked(self, fresh).items():
            self.pm.blocked_reasons[name] = reason
            self.pm.set_blocked(name)
        self.pm.load_entry_points(fresh, self.make_extension_api)
        return [*records, *fresh]

    def _unload_entry_point(self, name: str, replacement: Any) -> None:
        """Take out a loaded entry-point plugin that ``replacement`` (another distribution's
        entry point of that name) is to replace, its modules included."""
        info = self.pm.infos.get(name)
        if info is None or info.origin != "distribution" or info.value is None:
            return
        if (info.dist_name, info.dist_version) == (replacement.dist_name, replacement.dist_version):
            return
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin)
        del self.pm.infos[name]
        package = info.value.split(":", 1)[0].strip().split(".", 1)[0]
        for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[module]

    def _project_blocked(self) -> dict[str, str]:
        """Block what a trusted project's ``disabledPlugins`` names (unloading what already
        loaded); the names and who asked, for the report of unknown names."""
        from piko.platform.manager import ESSENTIAL_PLUGINS
        from piko.platform.manager import EssentialPluginError

        asked: dict[str, str] = {}
        for name in _names(self.settings.project_data.get("disabledPlugins")):
            if self.pm.is_blocked(name) or self.policy.requires_plugin(name):
                continue  # a required plugin stays (the managed policy wins)
            if name in ESSENTIAL_PLUGINS:
                raise EssentialPluginError(
                    f"plugin '{name}' is essential and cannot be blocked (asked by {PROJECT_DISABLED})"
                )
            asked[name] = PROJECT_DISABLED
            self.pm.blocked_reasons[name] = PROJECT_DISABLED
            self.pm.set_blocked(name)  # unregisters a plugin that already loaded
            info = self.pm.infos.get(name)
            if info is not None:
                info.blocked, info.blocked_by, info.hooks = True, PROJECT_DISABLED, []
        return asked

    def reload_plugins(self) -> list[str]:
        """Re-import extension files from disk and load plugins installed since start-up (``/reload``).

        Entry-point plugins already loaded stay as they are (a module cannot be safely imported
        twice); extension files are unregistered and imported again. Returns the names loaded.
        """
        options = getattr(self, "_boot_options", None) or BootOptions()
        for name, info in list(self.pm.infos.items()):
            if info.origin != "file":
                continue
            plugin = self.pm.get_plugin(name)
            if plugin is not None:
                self.pm.unregister(plugin)
            del self.pm.infos[name]
        known = set(self.pm.infos)
        self.pm.load_entry_points(
            [r for r in discovery.scan() if r.name not in known], self.make_extension_api
        )
        for path in self._extension_paths(options, getattr(self, "_package_extensions", None)):
            self.pm.load_extension_file(path, self.make_extension_api)
        self.pm.validate()
        if "model_registry" in self.__dict__:
            self.model_registry.reload()
        return [name for name in self.pm.infos if name not in known or self.pm.infos[name].origin == "file"]

    def _blocked(self, options: BootOptions, records: list[Any] | None = None) -> dict[str, str]:
        """Plugin name -> who asked to block it. ``disabledPlugins`` of both settings files add up
        (a project cannot re-enable what the user disabled); the project's counts only when the
        project is trusted."""
        blocked: dict[str, str] = {}
        for name in _names(self.settings.global_data.get("disabledPlugins")):
            blocked[name] = USER_DISABLED
        if self.project_trusted:
            for name in _names(self.settings.project_data.get("disabledPlugins")):
                blocked.setdefault(name, PROJECT_DISABLED)
        for name in _env_list("PIKO_DISABLE_PLUGINS"):
            blocked[name] = "PIKO_DISABLE_PLUGINS"
        for name in options.disable_plugins:
            for part in name.split(","):
                if part.strip():
                    blocked[part.strip()] = "--disable-plugin"
        for name in [n for n in blocked if self.policy.requires_plugin(n)]:
            del blocked[name]  # a required plugin: no settings file or flag switches it off
        blocked.update(_policy_blocked(self, records or []))
        for message in self.policy.errors:
            self.pm.diagnose(
                f"policy file {message}: third-party plugins, package sources and project code "
                "are disabled until it is fixed"
            )
        return blocked

    def _project_disabled_notices(self, records: list[Any]) -> list[str]:
        """One line for each plugin of the user (not built in, not the project's own) that a
        trusted project's ``disabledPlugins`` kept from loading."""
        locations = {r.name: r.location for r in records}
        own = project_dir(self.cwd)
        notices: list[str] = []
        for info in self.pm.infos.values():
            if info.blocked_by != PROJECT_DISABLED or info.origin in ("built-in", "internal"):
                continue
            where = info.path or locations.get(info.name)
            if where and _inside(Path(where), own) and not _inside(Path(where), self.agent_dir):
                continue  # the project's own extension or package
            notices.append(
                f"plugin '{info.name}' ({info.source}) is disabled by the project settings "
                f"{self.settings.project_path} (disabledPlugins)"
            )
        return notices

    def _allowlist(self) -> set[str] | None:
        allowed = _env_list("PIKO_PLUGINS")
        return set(allowed) if allowed else None

    def _extension_paths(self, options: BootOptions, package_paths: list[Path] | None = None) -> list[Path]:
        """Every extension file to load, in loading order: the user's, packages', the project's."""
        return [
            *self._user_extension_paths(options),
            *(package_paths or []),
            *self._project_extension_paths(options),
        ]

    def _user_extension_paths(self, options: BootOptions) -> list[Path]:
        """``-e`` paths, the global settings' ``extensions`` list and ``~/.pi/agent/extensions/``."""
        paths: list[Path] = [Path(expand_user(p)).absolute() for p in options.extensions]
        if not options.no_extensions:
            configured = self.settings.global_data.get("extensions")
            for item in configured if isinstance(configured, list) else []:
                paths.append(_resolve_from(self.agent_dir, str(item)))
            paths.extend(_extension_files(self.agent_dir / "extensions"))
        return self._policy_checked(paths)

    def _project_extension_paths(self, options: BootOptions) -> list[Path]:
        """A trusted project's ``extensions`` list and ``.pi/extensions/`` (otherwise none:
        ``trust.settle()`` said what was left out)."""
        paths: list[Path] = []
        if not options.no_extensions and self.project_trusted:
            project_configured = self.settings.project_data.get("extensions")
            for item in project_configured if isinstance(project_configured, list) else []:
                paths.append(_resolve_from(project_dir(self.cwd), str(item)))
            paths.extend(_extension_files(project_dir(self.cwd) / "extensions"))
        return self._policy_checked(paths)

    def _policy_checked(self, paths: list[Path]) -> list[Path]:
        for path in paths:  # the policy decides about extension files by their plugin name
            name = path.stem if path.suffix == ".py" else path.name
            if self.policy.blocks_plugin(name, builtin=False) and name not in self.pm.blocked_reasons:
                self.pm.blocked_reasons[name] = "policy"
                self.pm.set_blocked(name)
        return paths

    def make_extension_api(self, name: str, source: str) -> ExtensionAPI:
        """The ``pi`` object handed to one extension's ``activate`` factory."""
        api = ExtensionAPI(name, source, self)
        self.extension_apis.append(api)
        return api

    def remove_file_fallbacks(self) -> None:
        """The session ended: no extension's file write or delete fallback is consulted any more."""
        for api in self.extension_apis:
            api.remove_file_fallbacks()

    # -- services --------------------------------------------------------------------------------

    @functools.cached_property
    def model_registry(self) -> Any:
        from piko.models.registry import ModelRegistry

        return ModelRegistry(self)

    @functools.cached_property
    def extension_timers(self) -> Any:
        """The managed timers of ``ctx.set_timeout``/``set_interval`` (cleared at session shutdown)."""
        from piko.extensions.timers import ManagedTimers

        return ManagedTimers(self.dispatcher)

    def clear_extension_timers(self) -> None:
        """Cancel every timer extensions started."""
        if "extension_timers" in self.__dict__:
            self.extension_timers.clear_all()

    @functools.cached_property
    def dispatcher(self) -> Any:
        from piko.platform.dispatch import Dispatcher

        def budget_ms(event: str) -> float:
            key = {"tool_call": "toolCallTimeoutMs", "session_shutdown": "shutdownTimeoutMs"}.get(
                event, "timeoutMs"
            )
            return float(self.settings.get(f"extensionHandlers.{key}", 30000))

        return Dispatcher(self.pm, budget_ms=budget_ms, sources=self.plugin_source, tracer=self.tracer)

    def plugin_source(self, plugin_name: str) -> str:
        """What ``extension_error`` calls a plugin: its file for extensions, else its name."""
        info = self.pm.infos.get(plugin_name)
        if info is not None and info.path:
            return info.path
        return plugin_name

    def context(self, host: Any = None, ui: Any = None, mode: str = "print") -> Any:
        """A ``ctx`` for handlers; without a host, session methods raise a clear error."""
        from piko.extensions.context import ExtensionContext

        return ExtensionContext(host, app=self, ui=ui, mode=mode)

    async def create_agent_session(
        self,
        *,
        ui: Any = None,
        mode: str | None = None,
        session_manager: Any = None,
        freeze_startup: bool = True,
    ) -> Any:
        """Build the agent session the options describe and bind it as the extensions' runtime
        (with ``session_manager`` when the mode opened it already; see
        :func:`piko.engine.setup.create_agent_session` for the others)."""
        from piko.engine.setup import create_agent_session

        mode = mode or str(self.options.get("mode") or "print")
        return await create_agent_session(
            self, ui=ui, mode=mode, session_manager=session_manager, freeze_startup=freeze_startup,
        )  # fmt: skip

    # -- diagnostics -----------------------------------------------------------------------------

    def diagnostics(self) -> list[str]:
        """Every problem found so far: settings, plugins, registrations."""
        out = list(self.settings.diagnostics) + list(self.pm.diagnostics) + list(self.registries.diagnostics)
        if "model_registry" in self.__dict__:
            out.extend(self.model_registry.diagnostics)
        return out

    def report(self, stream: TextIO | None = None, *, notices_only: bool = False) -> None:
        """Print diagnostics and notices to stderr (each once); ``notices_only`` for a command
        that lists the diagnostics itself (``pi plugins``)."""
        from piko.lib.redaction import redact

        stream = stream or sys.stderr
        reported: set[str] = getattr(self, "_reported", set())
        for line in [*([] if notices_only else self.diagnostics()), *self.notices]:
            if line not in reported:
                reported.add(line)
                stream.write(f"Warning: {redact(line)}\n")
        self._reported = reported


def _names(value: Any) -> list[str]:
    """The plugin names of a ``disabledPlugins`` value (anything but a list names none)."""
    return [str(name) for name in value] if isinstance(value, list) else []


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _resolve_from(base: Path, value: str) -> Path:
    path = Path(expand_user(value))
    return path if path.is_absolute() else (base / path)


def _extension_files(folder: Path) -> list[Path]:
    """``*.py`` files and package folders (with ``__init__.py``) directly in ``folder``, sorted."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            found.append(entry)
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            found.append(entry)
    return found


def _policy_blocked(app: App, records: list[Any]) -> dict[str, str]:
    """Entry-point plugins the policy blocks (essential ones never are)."""
    from piko.platform.manager import BUILTIN_DIST
    from piko.platform.manager import ESSENTIAL_PLUGINS

    blocked: dict[str, str] = {}
    for record in records:
        builtin = record.dist_name.replace("_", "-") == BUILTIN_DIST
        if record.name not in ESSENTIAL_PLUGINS and app.policy.blocks_plugin(record.name, builtin=builtin):
            blocked[record.name] = "policy"
    return blocked


def apply_http_proxy(value: Any) -> None:
    """The ``httpProxy`` setting (the user's file only, as pi) as ``HTTP_PROXY``/``HTTPS_PROXY``
    for the HTTP clients piko makes, unless those variables are already set."""
    proxy = value.strip() if isinstance(value, str) else ""
    if proxy:
        os.environ.setdefault("HTTP_PROXY", proxy)
        os.environ.setdefault("HTTPS_PROXY", proxy)


def packages_configured(app: Any) -> bool:
    """Whether settings list any package (a project's list counts once the project is trusted)."""
    return bool(
        app.settings.global_data.get("packages")
        or (app.project_trusted and app.settings.project_data.get("packages"))
    )


def _start_packages(app: App, options: BootOptions) -> list[Path]:
    """Let package sources install what settings list but is missing, and name package extension files.

    Each registered package source may offer ``startup(app, offline=..., command=...)`` returning a mapping
    with ``installed`` (something new is on the import path), ``extensions`` (extension files of
    its packages) and ``notices``. Plugins installed just now are discovered and loaded here.
    """
    if not packages_configured(app):
        return []
    offline = options.offline or paths_offline()
    installed = False
    paths: list[Path] = []
    for definition in app.registries.package_sources:
        try:
            startup = getattr(definition.resolved("handler"), "startup", None)
            result = startup(app, offline=offline, command=options.command) if callable(startup) else None
        except Exception as exc:  # a broken package source must not stop piko
            name = type(exc).__name__
            app.pm.diagnose(f"package source '{definition.scheme}' failed at start-up: {name}: {exc}")
            continue
        if not result:
            continue
        installed = installed or bool(result.get("installed"))
        paths.extend(Path(p) for p in result.get("extensions") or [])
        app.notices.extend(n for n in result.get("notices") or [] if n not in app.notices)
    if installed:
        from piko.app import trust

        if app.project_trusted:
            trust.activate_project_site(app.cwd)
        fresh = [r for r in discovery.scan() if r.name not in app.pm.infos]
        for name, reason in _policy_blocked(app, fresh).items():
            app.pm.blocked_reasons[name] = reason
            app.pm.set_blocked(name)
        app.pm.load_entry_points(fresh, app.make_extension_api)
    return paths
