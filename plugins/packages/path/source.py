"""``path:<dir>`` (or a bare ``./dir``, ``/dir``): a package used where it is, never copied.

A folder that is a Python project is installed with pip in editable mode (the folder stays the
code); any folder is searched for resources; a single ``.py`` file is one extension.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko.plugins.packages.base import PackageContext
from piko.plugins.packages.base import PackageSource
from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.pyenv import dist_details
from piko.plugins.packages.pyenv import dist_resources
from piko.plugins.packages.pyenv import is_python_project
from piko.plugins.packages.resources_scan import JS_SUFFIXES
from piko.plugins.packages.sources import PackageRef
from piko.plugins.packages.sources import parse_path


class PathSource(PackageSource):
    scheme = "path"

    def parse(self, source: str, base: Path) -> PackageRef:
        return parse_path(source, base)

    def _path(self, ref: PackageRef) -> Path:
        assert ref.local_path is not None
        return ref.local_path

    def install(self, ref: PackageRef, ctx: PackageContext) -> None:
        path = self._path(ref)
        if not path.exists():
            raise PackageError(f"Path does not exist: {path}")
        if path.is_file():
            if path.suffix in JS_SUFFIXES:
                raise PackageError(
                    f"{path} is a TypeScript/JavaScript extension: piko runs Python extensions only"
                )
            if path.suffix != ".py":
                raise PackageError(f"{path} is neither a folder nor a Python extension file")
            return
        if is_python_project(path):
            ctx.python.install(["-e", str(path)])

    def update(self, ref: PackageRef, ctx: PackageContext) -> None:
        self.install(ref, ctx)

    def remove(self, ref: PackageRef, ctx: PackageContext) -> None:
        dist = ctx.python.find(ref, self._path(ref))
        if dist is not None:
            ctx.python.uninstall([dist.name])

    def is_installed(self, ref: PackageRef, ctx: PackageContext) -> bool:
        path = self._path(ref)
        if not path.exists():
            return False
        return not (path.is_dir() and is_python_project(path)) or ctx.python.find(ref, path) is not None

    def installed_path(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        path = self._path(ref)
        return path if path.exists() else None

    def package_root(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        path = self._path(ref)
        return path if path.is_dir() else None

    def declared_resources(self, ref: PackageRef, ctx: PackageContext) -> dict[str, list[Path]]:
        path = self._path(ref)
        if path.is_file():
            return {"extensions": [path]}
        dist = ctx.python.find(ref, path)
        return dist_resources(dist) if dist is not None else {}

    def details(self, ref: PackageRef, ctx: PackageContext) -> dict[str, Any]:
        dist = ctx.python.find(ref, self._path(ref))
        return dist_details(dist) if dist is not None else {}


SOURCE = PathSource()
