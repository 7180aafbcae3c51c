"""``pip:<requirement>``: Python distributions from any index pip is configured for, or a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko.plugins.packages.base import PackageContext
from piko.plugins.packages.base import PackageSource
from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.pyenv import dist_details
from piko.plugins.packages.pyenv import dist_resources
from piko.plugins.packages.sources import PackageRef
from piko.plugins.packages.sources import parse_pip

PROTECTED = frozenset({"piko", "pip", "uv", "setuptools", "pluggy"})


class PipSource(PackageSource):
    """Installs into piko's environment (user) or the project's ``.pi/python`` (project)."""

    scheme = "pip"

    def parse(self, source: str, base: Path) -> PackageRef:
        return parse_pip(source, base)

    def install(self, ref: PackageRef, ctx: PackageContext) -> None:
        if ref.local_path is not None and not ref.local_path.exists():
            raise PackageError(f"Path does not exist: {ref.local_path}")
        ctx.python.install([ref.requirement or ref.spec])

    def update(self, ref: PackageRef, ctx: PackageContext) -> None:
        ctx.python.install([ref.requirement or ref.spec], upgrade=True)

    def remove(self, ref: PackageRef, ctx: PackageContext) -> None:
        dist = ctx.python.find(ref)
        if dist is None:
            return
        if dist.name in PROTECTED:
            raise PackageError(f"Refusing to uninstall {dist.name}: piko needs it")
        ctx.python.uninstall([dist.name])

    def is_installed(self, ref: PackageRef, ctx: PackageContext) -> bool:
        if ctx.python.find(ref) is not None:
            return True
        # a project may use what piko's own environment already has
        return ctx.scope == "project" and PackageContext(ctx.app, "user").python.find(ref) is not None

    def installed_path(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        dist = ctx.python.find(ref)
        return dist.location if dist is not None else None

    def package_root(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        path = ref.local_path
        return path if path is not None and path.is_dir() else None

    def declared_resources(self, ref: PackageRef, ctx: PackageContext) -> dict[str, list[Path]]:
        dist = ctx.python.find(ref)
        return dist_resources(dist) if dist is not None else {}

    def details(self, ref: PackageRef, ctx: PackageContext) -> dict[str, Any]:
        dist = ctx.python.find(ref)
        return dist_details(dist) if dist is not None else {}


SOURCE = PipSource()
