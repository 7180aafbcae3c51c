"""``npm:<package>[@version]``: pi packages from the npm registry, for their skills, prompts and themes.

Installed as pi installs them (``npm install -g``, or under ``.pi/npm/`` for a project), so pi
and piko share them. Their TypeScript/JavaScript extensions are reported as unsupported. The
``npmCommand`` setting (``["mise", "exec", "node@20", "--", "npm"]``) picks the npm to run.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from piko.config.paths import cache_dir
from piko.lib import jsonio
from piko.plugins.packages.base import PackageContext
from piko.plugins.packages.base import PackageSource
from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.run import run
from piko.plugins.packages.sources import PackageRef
from piko.plugins.packages.sources import parse_npm
from piko.plugins.packages.sources import split_npm_spec

_GLOBAL_ROOTS: dict[str, Path] = {}


class NpmSource(PackageSource):
    scheme = "npm"

    def parse(self, source: str, base: Path) -> PackageRef:
        return parse_npm(source, base)

    def npm_command(self, ctx: PackageContext) -> list[str]:
        configured = ctx.settings_value("npmCommand")
        if isinstance(configured, list) and configured and all(isinstance(p, str) for p in configured):
            return list(configured)
        if configured:
            raise PackageError("Invalid npmCommand: it must be a list of strings, the command first")
        return ["npm"]

    def _npm(self, args: list[str], ctx: PackageContext, capture: bool = False) -> str:
        return run([*self.npm_command(ctx), *args], quiet=ctx.quiet, capture=capture)

    def global_root(self, ctx: PackageContext) -> Path:
        """``npm root -g`` (remembered per npm command and environment)."""
        command = self.npm_command(ctx)
        key_text = "\0".join([*command, os.environ.get("PATH", ""), *(
            f"{k}={v}" for k, v in sorted(os.environ.items()) if k.lower() in ("npm_config_prefix", "prefix")
        )])  # fmt: skip
        key = hashlib.sha1(key_text.encode()).hexdigest()[:16]
        if key in _GLOBAL_ROOTS:
            return _GLOBAL_ROOTS[key]
        cache_file = cache_dir() / "npm-global-root.json"
        try:
            cached = jsonio.read_json_file(cache_file)
        except (OSError, ValueError):
            cached = {}
        root_text = cached.get(key) if isinstance(cached, dict) else None
        if not root_text or not Path(root_text).is_dir():
            root_text = self._npm(["root", "-g"], ctx, capture=True).strip()
            if not root_text:
                raise PackageError("npm root -g printed nothing")
            cached = cached if isinstance(cached, dict) else {}
            cached[key] = root_text
            try:
                jsonio.write_atomic(cache_file, jsonio.dumps(cached))
            except OSError:
                pass
        _GLOBAL_ROOTS[key] = Path(root_text)
        return Path(root_text)

    def project_root(self, ctx: PackageContext) -> Path:
        return ctx.cwd / ".pi" / "npm"

    def install_path(self, ref: PackageRef, ctx: PackageContext) -> Path:
        assert ref.name is not None
        if ctx.scope == "project":
            return self.project_root(ctx) / "node_modules" / ref.name
        return self.global_root(ctx) / ref.name

    def _ensure_project(self, ctx: PackageContext) -> Path:
        root = self.project_root(ctx)
        ctx.ensure_gitignore(root)
        manifest = root / "package.json"
        if not manifest.exists():
            manifest.write_text(
                jsonio.dumps_pretty({"name": "pi-extensions", "private": True}), encoding="utf-8"
            )
        return root

    def _install_specs(self, specs: list[str], ctx: PackageContext) -> None:
        if ctx.scope == "project":
            root = self._ensure_project(ctx)
            self._npm(["install", *specs, "--prefix", str(root)], ctx)
        else:
            self._npm(["install", "-g", *specs], ctx)

    def install(self, ref: PackageRef, ctx: PackageContext) -> None:
        self._install_specs([ref.spec], ctx)

    def update(self, ref: PackageRef, ctx: PackageContext) -> None:
        self._install_specs([f"{ref.name}@latest"], ctx)

    def remove(self, ref: PackageRef, ctx: PackageContext) -> None:
        assert ref.name is not None
        if ctx.scope == "project":
            root = self.project_root(ctx)
            if root.exists():
                self._npm(["uninstall", ref.name, "--prefix", str(root)], ctx)
        else:
            self._npm(["uninstall", "-g", ref.name], ctx)

    def installed_version(self, path: Path) -> str | None:
        try:
            data = jsonio.read_json_file(path / "package.json")
        except (OSError, ValueError):
            return None
        version = data.get("version") if isinstance(data, dict) else None
        return str(version) if version else None

    def is_installed(self, ref: PackageRef, ctx: PackageContext) -> bool:
        path = self.install_path(ref, ctx)
        if not path.is_dir():
            return False
        _name, pinned = split_npm_spec(ref.spec)
        return not pinned or not pinned[0].isdigit() or self.installed_version(path) == pinned

    def installed_path(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        path = self.install_path(ref, ctx)
        return path if path.is_dir() else None

    def package_root(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        return self.installed_path(ref, ctx)

    def details(self, ref: PackageRef, ctx: PackageContext) -> dict[str, Any]:
        path = self.installed_path(ref, ctx)
        version = self.installed_version(path) if path is not None else None
        return {"version": version} if version else {}


SOURCE = NpmSource()
