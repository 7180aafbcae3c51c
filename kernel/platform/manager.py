"""The plugin manager: loads entry-point plugins and extension files, blocks, validates, records.

Everything that extends piko becomes one pluggy plugin registered here, under a name:

* entry points of the ``piko`` group (built-ins are entry points of the ``piko`` distribution
  itself, third-party plugins those of other distributions);
* extension files (``-e PATH``, ``~/.pi/agent/extensions/``, a trusted project's
  ``.pi/extensions/``), named after the file.

A plugin that fails to import, raises in its factory, implements an unknown hook or registers
something twice gets a one-line diagnostic naming it and the cause; the others load.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import types
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pluggy

from piko.lib.records import Record
from piko.lib.records import field
from piko.platform import hookspecs
from piko.platform.discovery import EntryPointRecord
from piko.platform.markers import PROJECT_NAME

_IMPL_MARKER = PROJECT_NAME + "_impl"

# Built-ins that cannot be blocked: without them piko cannot run at all.
ESSENTIAL_PLUGINS = frozenset({"core", "modes.print"})

BUILTIN_DIST = "piko"


class PluginLoadError(Exception):
    """A plugin could not be loaded; the message names the plugin and the cause."""


class EssentialPluginError(Exception):
    """Someone asked to block a plugin that piko cannot run without."""


class PluginInfo(Record, kw_only=False):
    """What ``pi plugins`` shows about one plugin."""

    name: str
    origin: str  # "built-in" | "distribution" | "file" | "inline" | "internal"
    dist_name: str | None = None
    dist_version: str | None = None
    path: str | None = None
    value: str | None = None
    blocked: bool = False
    blocked_by: str | None = None
    error: str | None = None
    label: str | None = None
    hooks: list[str] = field(factory=list)

    @property
    def kind(self) -> str:
        """The plugin's kind by piko's entry-point naming (``tools.read`` is a ``tools`` plugin)."""
        return self.name.split(".", 1)[0] if "." in self.name else ""

    @property
    def builtin(self) -> bool:
        """Shipped with piko (an entry point of the ``piko`` distribution)."""
        return self.origin == "built-in"

    @property
    def source(self) -> str:
        """Where the plugin came from, in one phrase."""
        if self.origin == "built-in":
            return "built-in"
        if self.origin == "distribution":
            return f"{self.dist_name} {self.dist_version}".strip()
        if self.origin == "file":
            return self.path or "file"
        return self.origin

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "origin": self.origin,
            "source": self.source,
            "distribution": self.dist_name,
            "version": self.dist_version,
            "path": self.path,
            "hooks": self.hooks,
            "blocked": self.blocked,
            "blockedBy": self.blocked_by,
            "error": self.error,
            "label": self.label,
        }


class PikoPluginManager(pluggy.PluginManager):
    """pluggy's manager with piko's specs, a change counter for dispatch caches, and records."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.generation = 0
        self.infos: dict[str, PluginInfo] = {}
        self.diagnostics: list[str] = []
        self.blocked_reasons: dict[str, str] = {}

    # -- bookkeeping -------------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> str | None:
        result = super().register(plugin, name)
        self.generation += 1
        return result

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        result = super().unregister(plugin, name)
        self.generation += 1
        return result

    def set_blocked(self, name: str) -> None:
        super().set_blocked(name)
        self.generation += 1

    def diagnose(self, message: str) -> None:
        """Record a one-line diagnostic (shown on stderr by the CLI and in ``pi plugins``)."""
        self.diagnostics.append(message)

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        """pluggy's lookup, after two quick ways to say "not a hook".

        Dunder names are never hooks. In a plugin module, an object that is not a function is not
        one either, and a plain function's options are its ``piko_impl`` marker: pluggy's own
        lookup (``inspect.getattr_static`` per name) made registering the built-in plugins cost 3 ms.
        """
        if name.startswith("__"):
            return None
        if isinstance(plugin, types.ModuleType):
            value = plugin.__dict__.get(name)
            if isinstance(value, types.FunctionType):
                opts = value.__dict__.get(_IMPL_MARKER)  # what pluggy would find, found directly
                return opts if isinstance(opts, dict) else None
            if not isinstance(value, staticmethod | classmethod | types.MethodType):
                return None
        return super().parse_hookimpl_opts(plugin, name)

    def hook_map(self) -> dict[int, list[str]]:
        """``id(plugin)`` -> sorted names of the hooks it implements, for all plugins in one pass.

        (pluggy's ``get_hookcallers`` walks every hook for each plugin: quadratic with 100 plugins.)
        """
        found: dict[int, set[str]] = {}
        for caller in list(vars(self.hook).values()):
            for impl in caller.get_hookimpls():
                found.setdefault(id(impl.plugin), set()).add(caller.name)
        return {key: sorted(names) for key, names in found.items()}

    def hooks_of(self, plugin: object) -> list[str]:
        """Names of the hooks a registered plugin implements."""
        return self.hook_map().get(id(plugin), [])

    # -- blocking ------------------------------------------------------------------------------

    def apply_blocking(self, blocked: dict[str, str], allow: set[str] | None) -> None:
        """Block ``blocked`` (name -> where the request came from) and, with an allowlist, all else.

        Raises :class:`EssentialPluginError` when an essential plugin is asked for.
        """
        for name, by in blocked.items():
            if name in ESSENTIAL_PLUGINS:
                raise EssentialPluginError(
                    f"plugin '{name}' is essential and cannot be blocked (asked by {by})"
                )
            self.blocked_reasons[name] = by
            self.set_blocked(name)
        self._allowlist = allow

    def is_allowed(self, name: str) -> bool:
        """False for a plugin left out by ``PIKO_PLUGINS`` (essential ones are always allowed)."""
        allow = getattr(self, "_allowlist", None)
        if allow is None or name in ESSENTIAL_PLUGINS:
            return True
        return name in allow

    # -- loading -------------------------------------------------------------------------------

    def register_internal(self, plugin: object, name: str) -> None:
        """Register one of the kernel's own plugin objects."""
        self.register(plugin, name)
        self.infos[name] = PluginInfo(name=name, origin="internal", hooks=self.hooks_of(plugin))

    def load_entry_points(self, records: Iterable[EntryPointRecord], api_factory: Any) -> None:
        """Import and register every entry point that is not blocked.

        ``api_factory(name, source)`` builds the ``ExtensionAPI`` handed to an ``activate``
        factory found on the entry point.
        """
        seen: dict[str, EntryPointRecord] = {}
        loaded: list[tuple[PluginInfo, object]] = []
        for record in load_order(records):
            origin = "built-in" if _is_builtin(record) else "distribution"
            if record.name in seen:
                first = seen[record.name]
                if (first.dist_name, first.value) != (record.dist_name, record.value):
                    self.diagnose(
                        f"plugin '{record.name}' from {record.dist_name} {record.dist_version} ignored: "
                        f"the name is taken by {first.dist_name} {first.dist_version}"
                    )
                continue
            seen[record.name] = record
            info = PluginInfo(
                name=record.name,
                origin=origin,
                dist_name=record.dist_name,
                dist_version=record.dist_version,
                value=record.value,
            )
            self.infos[record.name] = info
            if self._skip(info):
                continue
            try:
                target = self._import_entry_point(record)
                plugin = self._adopt(record.name, target, api_factory, source=record.name)
                self.register(plugin, record.name)
            except Exception as exc:  # a broken plugin must not stop the others
                info.error = _describe(exc)
                self.diagnose(f"plugin '{record.name}' failed to load: {info.error}")
                continue
            loaded.append((info, plugin))
        hooks = self.hook_map()
        for info, plugin in loaded:
            info.hooks = hooks.get(id(plugin), [])

    def load_extension_file(self, path: Path, api_factory: Any) -> str | None:
        """Load an extension file (a ``.py`` file or a package folder) and register it."""
        path = path.resolve()
        name = path.stem if path.suffix == ".py" else path.name
        if name in self.infos and self.infos[name].path != str(path):
            self.diagnose(
                f"extension '{path}' ignored: the name '{name}' is taken by {self.infos[name].source}"
            )
            return None
        if name in self.infos:
            return name  # the same file given twice
        info = PluginInfo(name=name, origin="file", path=str(path))
        return self._load_extension(
            info, lambda: _import_file(path, name), api_factory, str(path), f"extension '{name}' ({path})"
        )

    def load_inline_extension(self, name: str, factory: Any, api_factory: Any) -> str | None:
        """Run an ``activate(pi)`` factory given as code (not a file) and register what it made.

        A taken name, a blocked name or a factory that raises is a diagnostic, as for files.
        """
        if name in self.infos:
            self.diagnose(
                f"inline extension '{name}' ignored: the name is taken by {self.infos[name].source}"
            )
            return None
        info = PluginInfo(name=name, origin="inline")
        return self._load_extension(
            info, lambda: factory, api_factory, f"<inline:{name}>", f"inline extension '{name}'"
        )

    def _load_extension(
        self, info: PluginInfo, target: Callable[[], Any], api_factory: Any, source: str, what: str
    ) -> str | None:
        """Record ``info``; unless blocked, adopt what ``target()`` gives and register it. A
        failure is one diagnostic naming ``what``, and the plugin is left out."""
        self.infos[info.name] = info
        if self._skip(info):
            return None
        try:
            plugin = self._adopt(info.name, target(), api_factory, source=source)
            self.register(plugin, info.name)
        except Exception as exc:
            info.error = _describe(exc)
            self.diagnose(f"{what} failed to load: {info.error}")
            return None
        info.hooks = self.hooks_of(plugin)
        return info.name

    def _skip(self, info: PluginInfo) -> bool:
        if self.is_blocked(info.name):
            info.blocked = True
            info.blocked_by = self.blocked_reasons.get(info.name, "blocked")
            return True
        if not self.is_allowed(info.name):
            info.blocked = True
            info.blocked_by = "PIKO_PLUGINS allowlist"
            return True
        return False

    def _import_entry_point(self, record: EntryPointRecord) -> Any:
        module = importlib.import_module(record.module)
        target: Any = module
        if record.attr:
            for part in record.attr.split("."):
                target = getattr(target, part)
        return target

    def _adopt(self, name: str, target: Any, api_factory: Any, source: str) -> object:
        """Turn a module or object into the one plugin object to register.

        A target with an ``activate(pi)`` factory is run with a fresh ``ExtensionAPI``; what the
        factory registered is compiled into hook implementations on the same plugin object as
        the target's own ``@hookimpl`` functions.
        """
        self._check_unmarked(name, target)
        activate = target if inspect.isfunction(target) else getattr(target, "activate", None)
        if not callable(activate):
            return target
        api = api_factory(name, source)
        result = activate(api)
        if hasattr(result, "__await__"):
            import asyncio

            asyncio.run(_await(result))
        info = self.infos.get(name)
        if info is not None and api.label:
            info.label = api.label
        return api.compile(extra=None if activate is target else target)

    def _check_unmarked(self, name: str, target: Any) -> None:
        """A ``piko_*`` function of a plugin module without ``@hookimpl`` is never called: say so
        (pluggy would ignore it without a word)."""
        if not isinstance(target, types.ModuleType):
            return
        for attr, value in vars(target).items():
            if (
                attr.startswith("piko_")
                and isinstance(value, types.FunctionType)
                and value.__module__ == target.__name__
                and _IMPL_MARKER not in value.__dict__
            ):
                self.diagnose(f"plugin '{name}': {attr} is not marked with @hookimpl, so piko never calls it")

    def report_unknown_names(self, asked: dict[str, str]) -> None:
        """One line for each plugin name a block list or allowlist gives that no plugin has."""
        for plugin, by in asked.items():
            if plugin not in self.infos and plugin not in ESSENTIAL_PLUGINS and by != "policy":
                self.diagnose(f"{by} names no plugin '{plugin}' (see `pi plugins` for the names)")

    def validate(self) -> None:
        """Unregister plugins implementing hooks that no spec knows (a misspelled hook name)."""
        unknown: dict[int, set[str]] = {}
        for caller in list(vars(self.hook).values()):
            if caller.spec is None:
                for impl in caller.get_hookimpls():
                    if not impl.optionalhook:
                        unknown.setdefault(id(impl.plugin), set()).add(caller.name)
        if not unknown:
            return
        for name, plugin in list(self.list_name_plugin()):
            if plugin is not None and id(plugin) in unknown:
                hooks = ", ".join(sorted(unknown[id(plugin)]))
                self.unregister(plugin)
                info = self.infos.get(name)
                message = f"unknown hook {hooks}"
                if info is not None:
                    info.error = message
                    info.hooks = []
                self.diagnose(f"plugin '{name}' not loaded: {message} (is it misspelled?)")


def _is_builtin(record: EntryPointRecord) -> bool:
    return record.dist_name.replace("_", "-") == BUILTIN_DIST


def load_order(records: Iterable[EntryPointRecord]) -> list[EntryPointRecord]:
    """Entry points in the order piko loads them, whatever folders they were found in: the
    essential plugins, the other built-ins (in the order piko declares them), then other
    distributions' plugins sorted by plugin name. (Extension files load after all of these, in
    the order their paths are given.) What loads first owns a name: a later plugin registering
    it is refused unless it says ``override=True``."""

    def rank(indexed: tuple[int, EntryPointRecord]) -> tuple[int, str, int]:
        index, record = indexed
        if _is_builtin(record):
            return (0 if record.name in ESSENTIAL_PLUGINS else 1, "", index)
        return (2, record.name, index)

    return [record for _index, record in sorted(enumerate(records), key=rank)]


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _import_file(path: Path, name: str) -> Any:
    """Import a ``.py`` file or a package folder under a private module name."""
    import importlib.util

    module_name = f"piko_extension_{''.join(c if c.isalnum() else '_' for c in name)}"
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            raise PluginLoadError(f"{path} is a folder without __init__.py")
        spec = importlib.util.spec_from_file_location(
            module_name, init, submodule_search_locations=[str(path)]
        )
    else:
        spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise PluginLoadError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


_KERNEL_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PLUGGY_DIR = os.path.dirname(os.path.abspath(pluggy.__file__)) + os.sep
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def _is_plugin_frame(filename: str) -> bool:
    """Whether a traceback frame is in plugin code (not piko's kernel, pluggy or the stdlib)."""
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
        return False
    path = os.path.abspath(filename)
    if path.startswith((_KERNEL_DIR, _PLUGGY_DIR)):
        return False
    return not (path.startswith(_STDLIB_DIR) and "-packages" + os.sep not in path)


def _describe(exc: BaseException) -> str:
    """``Type: message`` on one line, plus the innermost frame of the plugin's own code."""
    message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if _is_plugin_frame(f.filename)]
    if own and not isinstance(exc, PluginLoadError):
        last = own[-1]
        text += f" ({Path(last.filename).name}:{last.lineno})"
    return text
