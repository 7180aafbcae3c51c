"""The package manager: the ``packages`` lists of settings, install/remove/update/list, resources.

Sources are recorded as pi records them: ``~/.pi/agent/settings.json`` (``user`` scope) or
``.pi/settings.json`` (``project`` scope, ``-l``), each entry a source string or an object
``{"source": ..., "skills": [...], ...}`` that filters what the package loads. A package listed
in both scopes is one package (same identity) and the project's entry wins. Project entries
count only in a trusted project; the policy may block sources.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from piko.lib.records import Record
from piko.lib.records import field
from piko.plugins.packages.base import PackageContext
from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.resources_scan import JS_SUFFIXES
from piko.plugins.packages.resources_scan import KINDS
from piko.plugins.packages.resources_scan import package_resources
from piko.plugins.packages.run import progress
from piko.plugins.packages.sources import SCHEMES
from piko.plugins.packages.sources import PackageRef
from piko.plugins.packages.sources import SourceError
from piko.plugins.packages.sources import scheme_of
from piko.plugins.packages.sources import settings_form

SCOPES = ("user", "project")
# subcommands that manage packages themselves: nothing is installed behind their back at start-up
PACKAGE_COMMANDS = frozenset({"install", "remove", "uninstall", "update", "list", "config"})


class Configured(Record, kw_only=False):
    """One entry of a settings ``packages`` list."""

    ref: PackageRef
    scope: str
    entry: Any  # the settings value: a string or an object with "source"
    handler: Any

    @property
    def source(self) -> str:
        return self.ref.source

    @property
    def filter(self) -> dict[str, Any] | None:
        return self.entry if isinstance(self.entry, dict) else None


class Resource(Record, kw_only=False):
    """One extension, skill, prompt template or theme of a package, enabled or not."""

    kind: str
    path: Path
    enabled: bool
    source: str
    scope: str
    scheme: str
    base: Path  # what the entry's +path/-path patterns are relative to


class StartupResult(Record, kw_only=False):
    """What start-up did, per scheme (see ``PackageSource.startup``)."""

    installed: set[str] = field(factory=set)
    extensions: dict[str, list[Path]] = field(factory=dict)
    notices: dict[str, list[str]] = field(factory=dict)
    # schemes whose source has no startup() of its own: the first source asked answers for them
    orphans: set[str] = field(factory=set)

    def for_scheme(self, scheme: str) -> dict[str, Any]:
        schemes = [scheme, *sorted(self.orphans)]
        self.orphans.clear()
        return {
            "installed": any(s in self.installed for s in schemes),
            "extensions": [p for s in schemes for p in self.extensions.get(s, [])],
            "notices": [n for s in schemes for n in self.notices.get(s, [])],
        }


_MANAGERS: weakref.WeakKeyDictionary[Any, PackageManager] = weakref.WeakKeyDictionary()


def manager_for(app: Any) -> PackageManager:
    """The one manager of an ``App``."""
    manager = _MANAGERS.get(app)
    if manager is None:
        manager = PackageManager(app)
        _MANAGERS[app] = manager
    return manager


def _entry_source(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("source"), str):
        return str(entry["source"])
    return None


class PackageManager:
    """Package operations for one ``App`` (its cwd, agent dir, settings, trust and policy)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.problems: list[str] = []
        self._handlers: dict[str, Any] | None = None
        self._startup: dict[bool, StartupResult] = {}  # by whether the project was trusted then
        self._said: set[str] = set()
        self._resources: list[Resource] | None = None

    # -- sources -------------------------------------------------------------------------------

    def handlers(self) -> dict[str, Any]:
        """Registered package sources by scheme (``pip``, ``git``, ``path``, ``npm``, ...)."""
        if self._handlers is None:
            handlers: dict[str, Any] = {}
            for definition in self.app.registries.package_sources:
                try:
                    handlers[definition.scheme] = definition.resolved("handler")
                except Exception as exc:
                    self.problems.append(f"package source '{definition.scheme}' failed to load: {exc}")
            self._handlers = handlers
        return self._handlers

    def parse(self, source: str, base: Path) -> tuple[PackageRef, Any]:
        """Parse ``source`` (relative paths against ``base``); raises :class:`PackageError`."""
        handlers = self.handlers()
        try:
            scheme = scheme_of(source, tuple(dict.fromkeys([*SCHEMES, *handlers])))
        except SourceError as exc:
            raise PackageError(str(exc)) from None
        handler = handlers.get(scheme)
        if handler is None:
            blocked = self.app.pm.infos.get(f"packages.{scheme}")
            why = f" (plugin packages.{scheme} is blocked)" if blocked is not None and blocked.blocked else ""
            raise PackageError(f"No package source is registered for '{scheme}:'{why}")
        try:
            return handler.parse(source, base), handler
        except SourceError as exc:
            raise PackageError(str(exc)) from None

    def context(self, scope: str, *, quiet: bool = False) -> PackageContext:
        return PackageContext(self.app, scope, quiet=quiet)

    def allowed(self, ref: PackageRef) -> bool:
        policy = getattr(self.app, "policy", None)
        return policy is None or policy.allows_source(ref.identity, ref.source.strip())

    def _policy_error(self, ref: PackageRef) -> PackageError:
        policy = getattr(self.app, "policy", None)
        where = policy.source if policy is not None else "policy"
        return PackageError(f"{ref.source} is blocked by policy ({where})")

    # -- settings ------------------------------------------------------------------------------

    def settings_packages(self, scope: str) -> list[Any]:
        data = self.app.settings.project_data if scope == "project" else self.app.settings.global_data
        packages = data.get("packages")
        return list(packages) if isinstance(packages, list) else []

    def write_packages(self, scope: str, packages: list[Any]) -> None:
        if scope == "project":
            self.app.settings.set_project("packages", packages)
        else:
            self.app.settings.set_global("packages", packages)
        self._resources = None

    def configured(self, scope: str | None = None, *, include_untrusted: bool = False) -> list[Configured]:
        """Entries of the settings lists (a project's only when it is trusted, unless asked)."""
        out: list[Configured] = []
        for current in (scope,) if scope else SCOPES:
            if current == "project" and not (self.app.project_trusted or include_untrusted):
                continue
            ctx = self.context(current)
            for entry in self.settings_packages(current):
                source = _entry_source(entry)
                if source is None:
                    self._problem(f"Ignoring a {current} package entry without a source: {entry!r}")
                    continue
                try:
                    ref, handler = self.parse(source, ctx.base_dir)
                except PackageError as exc:
                    self._problem(f"Ignoring {current} package {source}: {exc}")
                    continue
                out.append(Configured(ref, current, entry, handler))
        return out

    def _problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def effective(self) -> list[Configured]:
        """The packages in force: project entries first, one per identity (the project's wins)."""
        chosen: dict[str, Configured] = {}
        for item in [*self.configured("project"), *self.configured("user")]:
            chosen.setdefault(item.ref.identity, item)
        return list(chosen.values())

    # -- commands ------------------------------------------------------------------------------

    def install(self, source: str, *, local: bool = False) -> PackageRef:
        """``pi install <source> [-l]``: install, then record the source in settings."""
        scope = "project" if local else "user"
        ctx = self.context(scope)
        ref, handler = self.parse(source, Path(self.app.cwd))
        if not self.allowed(ref):
            raise self._policy_error(ref)
        progress(f"Installing {source}...")
        handler.install(ref, ctx)
        stored = settings_form(ref, ctx.base_dir)
        if ref.scheme == "pip" and not stored.lower().startswith("pip:"):
            stored = f"pip:{stored}"
        packages = self.settings_packages(scope)
        for i, entry in enumerate(packages):
            existing = next(
                (c for c in self._parse_entries(scope, [entry]) if c.ref.identity == ref.identity), None
            )
            if existing is not None:
                packages[i] = {**entry, "source": stored} if isinstance(entry, dict) else stored
                break
        else:
            packages.append(stored)
        self.write_packages(scope, packages)
        return ref

    def _parse_entries(self, scope: str, entries: list[Any]) -> list[Configured]:
        ctx = self.context(scope)
        out = []
        for entry in entries:
            source = _entry_source(entry)
            if source is None:
                continue
            try:
                ref, handler = self.parse(source, ctx.base_dir)
            except PackageError:
                continue
            out.append(Configured(ref, scope, entry, handler))
        return out

    def no_match_message(self, source: str) -> str:
        """pi's wording, with a suggestion when the source names a configured package loosely."""
        wanted = source.strip()
        for item in self.configured(include_untrusted=True):
            ref = item.ref
            loose = {ref.name or "", ref.spec, f"{ref.host}/{ref.repo_path}" if ref.host else ""}
            if wanted in loose - {""}:
                return f"No matching package found for {source}. Did you mean {ref.source}?"
        return f"No matching package found for {source}"

    def remove(self, source: str, *, local: bool = False) -> None:
        """``pi remove <source> [-l]``: uninstall, then drop the source from settings."""
        scope = "project" if local else "user"
        ref, _handler = self.parse(source, Path(self.app.cwd))
        entries = self.settings_packages(scope)
        matching = [c for c in self._parse_entries(scope, entries) if c.ref.identity == ref.identity]
        if not matching:
            raise PackageError(self.no_match_message(source))
        progress(f"Removing {source}...")
        item = matching[0]
        item.handler.remove(item.ref, self.context(scope))
        kept = [e for e in entries if e not in [c.entry for c in matching]]
        self.write_packages(scope, kept)

    def update(self, source: str | None = None, *, offline: bool = False) -> list[str]:
        """``pi update [source]``: update every package that is not pinned; returns what was updated."""
        items = self.configured()
        if source is not None:
            ref, _handler = self.parse(source, Path(self.app.cwd))
            items = [c for c in items if c.ref.identity == ref.identity]
            if not items:
                raise PackageError(self.no_match_message(source))
        updated: list[str] = []
        if offline:
            progress("Offline: no package was updated")
            return updated
        for item in items:
            if item.ref.pinned:
                if source is not None:
                    progress(f"{item.source} is pinned; not updated")
                continue
            if not self.allowed(item.ref):
                progress(f"{item.source} is blocked by policy; not updated")
                continue
            progress(f"Updating {item.source}...")
            item.handler.update(item.ref, self.context(item.scope))
            updated.append(item.source)
        self._resources = None
        return updated

    def listing(self) -> list[dict[str, Any]]:
        """``pi list``: every configured package of both scopes, installed or not."""
        rows: list[dict[str, Any]] = []
        for item in self.configured(include_untrusted=True):
            ctx = self.context(item.scope)
            installed_path = item.handler.installed_path(item.ref, ctx)
            try:
                details = item.handler.details(item.ref, ctx)
            except Exception:  # listing must not fail on one odd package
                details = {}
            rows.append(
                {
                    "source": item.source,
                    "scope": item.scope,
                    "identity": item.ref.identity,
                    "pinned": item.ref.pinned,
                    "filtered": item.filter is not None,
                    "installed": bool(item.handler.is_installed(item.ref, ctx)),
                    "installedPath": str(installed_path) if installed_path is not None else None,
                    "loaded": item.scope == "user" or bool(self.app.project_trusted),
                    "blockedByPolicy": not self.allowed(item.ref),
                    **{k: v for k, v in details.items() if v not in (None, "", [])},
                }
            )
        return rows

    # -- resources -----------------------------------------------------------------------------

    def resources(self, *, refresh: bool = False) -> list[Resource]:
        """Every resource of the packages in force (disabled ones included, marked)."""
        if self._resources is not None and not refresh:
            return self._resources
        out: list[Resource] = []
        seen: set[tuple[str, Path]] = set()
        for item in self.effective():
            if not self.allowed(item.ref):
                continue
            ctx = self.context(item.scope)
            try:
                root = item.handler.package_root(item.ref, ctx)
                extra = item.handler.declared_resources(item.ref, ctx)
                base = root or item.handler.installed_path(item.ref, ctx)
            except Exception as exc:
                self._problem(f"Package {item.source}: {exc}")
                continue
            if root is None and not extra:
                continue
            found = package_resources(
                root or Path(base or "."), item.filter, extra, base=base, scan_root=root is not None
            )
            for kind in KINDS:
                for path, enabled in found[kind]:
                    key = (kind, Path(path).resolve())
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(
                        Resource(
                            kind,
                            path,
                            enabled,
                            item.source,
                            item.scope,
                            item.ref.scheme,
                            Path(base or path.parent),
                        )
                    )
        self._resources = out
        return out

    def resource_paths(self, *, refresh: bool = False) -> dict[str, list[str]]:
        """The ``resources_discover`` answer: enabled skills, prompt templates and themes."""
        keys = {"skills": "skill_paths", "prompts": "prompt_paths", "themes": "theme_paths"}
        out: dict[str, list[str]] = {key: [] for key in keys.values()}
        for resource in self.resources(refresh=refresh):
            if resource.enabled and resource.kind in keys:
                out[keys[resource.kind]].append(str(resource.path))
        return out

    # -- start-up ------------------------------------------------------------------------------

    def startup(self, *, offline: bool = False, command: str | None = None) -> StartupResult:
        """Install missing packages (not for package commands or offline), name extension files.

        Done once before the trust decision (the user's packages, whose extensions may vote in
        ``project_trust``) and once more if the project is then trusted (its packages too)."""
        trusted = bool(getattr(self.app, "project_trusted", False))
        if trusted in self._startup:
            return self._startup[trusted]
        result = StartupResult()
        result.orphans = {s for s, h in self.handlers().items() if not callable(getattr(h, "startup", None))}
        self._startup[trusted] = result

        def notice(scheme: str, message: str) -> None:
            result.notices.setdefault(scheme, []).append(message)

        install_missing = command not in PACKAGE_COMMANDS
        for item in self.effective():
            scheme = item.ref.scheme
            if not self.allowed(item.ref):
                policy = getattr(self.app, "policy", None)
                message = f"package {item.source} blocked by policy ({policy.source if policy else 'policy'})"
                self._diagnose_once(message)
                continue
            ctx = self.context(item.scope, quiet=True)
            try:
                if install_missing and not item.handler.is_installed(item.ref, ctx):
                    if offline:
                        notice(
                            scheme, f"Package {item.source} is not installed (offline: not installing it now)"
                        )
                        continue
                    progress(f"Installing missing package {item.source}...")
                    item.handler.install(item.ref, ctx)
                    result.installed.add(scheme)
            except PackageError as exc:
                notice(scheme, f"Could not install package {item.source}: {exc}")
            except Exception as exc:  # a broken source must not stop piko
                notice(scheme, f"Could not install package {item.source}: {type(exc).__name__}: {exc}")
        unsupported: dict[str, list[str]] = {}
        for resource in self.resources(refresh=True):
            if resource.kind != "extensions" or not resource.enabled:
                continue
            if resource.path.suffix in JS_SUFFIXES:
                unsupported.setdefault(resource.source, []).append(resource.path.name)
                result.notices.setdefault(resource.scheme, [])
                continue
            result.extensions.setdefault(resource.scheme, []).append(resource.path)
        for source, names in unsupported.items():
            scheme = next(r.scheme for r in self.resources() if r.source == source)
            notice(
                scheme,
                f"Package {source}: TypeScript/JavaScript extensions are not supported by piko and were skipped "
                f"({', '.join(names)})",
            )
        for problem in self.problems:
            self._diagnose_once(problem)
        return result

    def _diagnose_once(self, message: str) -> None:
        """A start-up diagnostic, said once however many start-up passes find it."""
        if message not in self._said:
            self._said.add(message)
            self.app.pm.diagnose(message)
