"""The application object: settings, plugins, registries and the dispatcher of one piko process.

``App.boot`` loads plugins in a fixed order: blocking is decided first (``--disable-plugin``,
``PIKO_DISABLE_PLUGINS``, settings ``disabledPlugins``, the ``PIKO_PLUGINS`` allowlist), then
entry points are discovered and loaded, then extension files (``-e``, the global
``extensions/`` folder, and a trusted project's ``.pi/extensions/``), then misspelled hooks
are weeded out and ``piko_configure`` runs. Modes receive the ``App`` and build sessions on it.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from attrs import define, field

from piko import discovery
from piko.event_bus import EventBus
from piko.extension_api import ExtensionAPI
from piko.paths import agent_dir as default_agent_dir
from piko.paths import expand_user, project_dir
from piko.plugin_manager import PikoPluginManager
from piko.registries import Registries
from piko.settings import Settings
from piko.tracing import Tracer
from piko.trust import TrustStore


@define(kw_only=True)
class BootOptions:
    """What must be known before plugins load (pre-parsed from the command line)."""

    disable_plugins: list[str] = field(factory=list)
    extensions: list[str] = field(factory=list)
    no_extensions: bool = False


def _env_list(name: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, "").split(",") if part.strip()]


class App:
    """One piko process: everything a mode needs to build and run sessions."""

    def __init__(self, cwd: str | os.PathLike[str] | None = None, agent_dir: str | os.PathLike[str] | None = None) -> None:
        self.cwd = Path(cwd) if cwd is not None else Path(os.getcwd())
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.trust = TrustStore(self.agent_dir)
        self.project_trusted = self.trust.is_trusted(self.cwd)
        self.settings = Settings(self.cwd, self.agent_dir, project_trusted=self.project_trusted)
        self.pm = PikoPluginManager()
        self.tracer = Tracer.from_environment()
        if self.tracer is not None:
            self.tracer.attach(self.pm)
        self.registries = Registries(self.pm)
        self.event_bus = EventBus()
        self.options: dict[str, Any] = {}
        self.flag_values: dict[str, Any] = {}
        self.runtime: Any = None  # the running agent session, once a mode created one
        self.notices: list[str] = []
        self.booted = False

    # -- boot ----------------------------------------------------------------------------------

    def boot(self, options: BootOptions | None = None) -> App:
        """Load every plugin and extension that is not blocked (see the module docstring)."""
        options = options or BootOptions()
        from piko import core_plugin

        self.pm.register_internal(core_plugin, "core")
        self.pm.hook.piko_addhooks.call_historic(kwargs={"pluginmanager": self.pm})
        self.pm.apply_blocking(self._blocked(options), self._allowlist())
        self.pm.load_entry_points(discovery.scan(), self.make_extension_api)
        for path in self._extension_paths(options):
            self.pm.load_extension_file(path, self.make_extension_api)
        self.pm.validate()
        self.pm.hook.piko_configure.call_historic(kwargs={"config": self})
        self.booted = True
        return self

    def _blocked(self, options: BootOptions) -> dict[str, str]:
        blocked: dict[str, str] = {}
        setting = self.settings.get("disabledPlugins") or []
        for name in setting if isinstance(setting, list) else []:
            blocked[str(name)] = "settings disabledPlugins"
        for name in _env_list("PIKO_DISABLE_PLUGINS"):
            blocked[name] = "PIKO_DISABLE_PLUGINS"
        for name in options.disable_plugins:
            for part in name.split(","):
                if part.strip():
                    blocked[part.strip()] = "--disable-plugin"
        return blocked

    def _allowlist(self) -> set[str] | None:
        allowed = _env_list("PIKO_PLUGINS")
        return set(allowed) if allowed else None

    def _extension_paths(self, options: BootOptions) -> list[Path]:
        paths: list[Path] = [Path(expand_user(p)).absolute() for p in options.extensions]
        if options.no_extensions:
            return paths
        configured = self.settings.global_data.get("extensions")
        for item in configured if isinstance(configured, list) else []:
            paths.append(_resolve_from(self.agent_dir, str(item)))
        paths.extend(_extension_files(self.agent_dir / "extensions"))
        project_extensions = _extension_files(project_dir(self.cwd) / "extensions")
        project_configured = self.settings.project_data.get("extensions")
        project_listed = [
            _resolve_from(project_dir(self.cwd), str(item))
            for item in (project_configured if isinstance(project_configured, list) else [])
        ]
        if self.project_trusted:
            paths.extend(project_listed)
            paths.extend(project_extensions)
        elif project_extensions or project_listed:
            self.notices.append(
                f"Project extensions in {project_dir(self.cwd)} were not loaded: this project is not trusted "
                f"(run `pi trust` in {self.cwd} to allow them)"
            )
        return paths

    def make_extension_api(self, name: str, source: str) -> ExtensionAPI:
        """The ``pi`` object handed to one extension's ``activate`` factory."""
        return ExtensionAPI(name, source, self)

    # -- services --------------------------------------------------------------------------------

    @functools.cached_property
    def model_registry(self) -> Any:
        from piko.model_registry import ModelRegistry

        return ModelRegistry(self)

    @functools.cached_property
    def dispatcher(self) -> Any:
        from piko.dispatch import Dispatcher

        def budget_ms(event: str) -> float:
            key = {"tool_call": "toolCallTimeoutMs", "session_shutdown": "shutdownTimeoutMs"}.get(event, "timeoutMs")
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
        from piko.context import ExtensionContext

        return ExtensionContext(host, app=self, ui=ui, mode=mode)

    # -- diagnostics -----------------------------------------------------------------------------

    def diagnostics(self) -> list[str]:
        """Every problem found so far: settings, plugins, registrations."""
        out = list(self.settings.diagnostics) + list(self.pm.diagnostics) + list(self.registries.diagnostics)
        if "model_registry" in self.__dict__:
            out.extend(self.model_registry.diagnostics)
        return out

    def report(self, stream: TextIO | None = None) -> None:
        """Print diagnostics and notices to stderr (each once)."""
        stream = stream or sys.stderr
        reported = getattr(self, "_reported", set())
        for line in [*self.diagnostics(), *self.notices]:
            if line not in reported:
                reported.add(line)
                stream.write(f"Warning: {line}\n")
        self._reported = reported


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
