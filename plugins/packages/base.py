"""What a package source (``pip``, ``git``, ``path``, ``npm``, or a plugin's own) implements.

A source is registered with ``piko_register_package_sources``: ``register(scheme, handler)``.
The package manager parses sources with ``handler.parse`` and calls ``install``, ``remove``,
``update``, ``is_installed``, ``package_root`` and ``declared_resources`` with a
:class:`PackageContext` for the scope (``user`` or ``project``). ``startup(app, offline=...)``
is what the kernel calls while piko starts: it installs what settings list but is missing and
names the extension files of this source's packages.
"""

from __future__ import annotations

import shutil
from abc import ABC
from abc import abstractmethod
from pathlib import Path
from typing import Any

from piko.plugins.packages.pyenv import PythonEnv
from piko.plugins.packages.sources import PackageRef


class PackageContext:
    """Where one scope keeps its packages, and how loud installing is."""

    def __init__(self, app: Any, scope: str, *, quiet: bool = False) -> None:
        self.app = app
        self.scope = scope
        self.quiet = quiet
        self.cwd = Path(app.cwd)
        self.agent_dir = Path(app.agent_dir)

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in this scope's settings are resolved against."""
        return self.cwd / ".pi" if self.scope == "project" else self.agent_dir

    @property
    def python(self) -> PythonEnv:
        return PythonEnv(self.scope, self.cwd, quiet=self.quiet)

    def settings_value(self, key: str) -> Any:
        """A setting of this scope's file (the merged value for the user scope)."""
        if self.scope == "project":
            return self.app.settings.project_data.get(key, self.app.settings.global_data.get(key))
        return self.app.settings.global_data.get(key)

    def ensure_gitignore(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n!.gitignore\n", encoding="utf-8")


class PackageSource(ABC):
    """Base class of the built-in sources; a plugin's source may implement the same methods.

    A subclass must give ``parse``, ``install`` and ``remove``: one that lacks any of them cannot
    be made (a ``TypeError`` names what is missing), so it fails as its object is created, not
    part-way through an install or a removal.
    """

    scheme = ""

    @abstractmethod
    def parse(self, source: str, base: Path) -> PackageRef:
        """The reference ``source`` (as the user typed it) names; ``base`` resolves relative paths."""

    @abstractmethod
    def install(self, ref: PackageRef, ctx: PackageContext) -> None:
        """Install the package into ``ctx``'s scope."""

    @abstractmethod
    def remove(self, ref: PackageRef, ctx: PackageContext) -> None:
        """Remove the package from ``ctx``'s scope."""

    def update(self, ref: PackageRef, ctx: PackageContext) -> None:
        self.install(ref, ctx)

    def is_installed(self, ref: PackageRef, ctx: PackageContext) -> bool:
        return self.installed_path(ref, ctx) is not None

    def installed_path(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        """Where the package is (shown by ``pi list``); None when it is not installed."""
        return None

    def package_root(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        """The folder whose manifest and conventional folders hold the package's resources."""
        return None

    def declared_resources(self, ref: PackageRef, ctx: PackageContext) -> dict[str, list[Path]]:
        """Resource folders the installed package declares outside its root (entry points)."""
        return {}

    def details(self, ref: PackageRef, ctx: PackageContext) -> dict[str, Any]:
        """Extra facts for ``pi list`` (distribution, version, plugins)."""
        return {}

    def startup(
        self, app: Any, offline: bool = False, command: str | None = None, **_: Any
    ) -> dict[str, Any]:
        """Install what is missing and name extension files (this scheme's share of the work)."""
        from piko.plugins.packages.manager import manager_for

        return manager_for(app).startup(offline=offline, command=command).for_scheme(self.scheme)


def remove_tree(path: Path, stop_at: Path | None = None) -> None:
    """Delete ``path`` and then its parents up to ``stop_at`` while they are empty."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if stop_at is None:
        return
    parent = path.parent
    while parent != stop_at and stop_at in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent
