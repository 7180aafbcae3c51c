"""``git:<url>[#ref]``: a repository cloned under ``~/.pi/agent/git/<host>/<path>`` (or ``.pi/git/``).

A clone that is a Python project is installed with pip (editable, so the clone is the code);
any clone is searched for resources (``[tool.piko]``, ``package.json``'s ``pi`` key, or the
conventional folders). A ref pins the package: ``pi update`` leaves it alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from piko.plugins.packages.base import PackageContext
from piko.plugins.packages.base import PackageSource
from piko.plugins.packages.base import remove_tree
from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.pyenv import dist_details
from piko.plugins.packages.pyenv import dist_resources
from piko.plugins.packages.pyenv import is_python_project
from piko.plugins.packages.run import run
from piko.plugins.packages.sources import PackageRef
from piko.plugins.packages.sources import parse_git


def _git_env(ctx: PackageContext) -> dict[str, str]:
    env = dict(os.environ)
    if ctx.quiet:
        env.setdefault("GIT_TERMINAL_PROMPT", "0")
    return env


class GitSource(PackageSource):
    scheme = "git"

    def parse(self, source: str, base: Path) -> PackageRef:
        return parse_git(source, base)

    def git_root(self, ctx: PackageContext) -> Path:
        return ctx.cwd / ".pi" / "git" if ctx.scope == "project" else ctx.agent_dir / "git"

    def clone_dir(self, ref: PackageRef, ctx: PackageContext) -> Path:
        return self.git_root(ctx) / ref.host / ref.repo_path

    def _git(
        self, args: list[str], ctx: PackageContext, cwd: Path | None = None, capture: bool = False
    ) -> str:
        return run(["git", *args], cwd=cwd, env=_git_env(ctx), quiet=ctx.quiet, capture=capture)

    def install(self, ref: PackageRef, ctx: PackageContext) -> None:
        target = self.clone_dir(ref, ctx)
        if not target.exists():
            ctx.ensure_gitignore(self.git_root(ctx))
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._git(["clone", *(["--quiet"] if ctx.quiet else []), str(ref.repo), str(target)], ctx)
                if ref.ref:
                    self._git(["checkout", "--quiet", ref.ref], ctx, cwd=target)
            except PackageError:
                remove_tree(target, stop_at=self.git_root(ctx))
                raise
        if is_python_project(target):
            ctx.python.install(["-e", str(target)])

    def update(self, ref: PackageRef, ctx: PackageContext) -> None:
        target = self.clone_dir(ref, ctx)
        if not target.exists():
            self.install(ref, ctx)
            return
        try:
            upstream = self._git(
                ["rev-parse", "--abbrev-ref", "@{upstream}"], ctx, cwd=target, capture=True
            ).strip()
        except PackageError:
            upstream = ""
        if upstream.startswith("origin/"):
            branch = upstream.removeprefix("origin/")
            self._git(
                [
                    "fetch",
                    "--prune",
                    "--no-tags",
                    "origin",
                    f"+refs/heads/{branch}:refs/remotes/origin/{branch}",
                ],
                ctx,
                cwd=target,
            )
            wanted = "@{upstream}"
        else:
            self._git(
                ["fetch", "--prune", "--no-tags", "origin", "+HEAD:refs/remotes/origin/HEAD"], ctx, cwd=target
            )
            wanted = "origin/HEAD"
        head = self._git(["rev-parse", "HEAD"], ctx, cwd=target, capture=True).strip()
        new = self._git(["rev-parse", wanted], ctx, cwd=target, capture=True).strip()
        if head != new:
            self._git(["reset", "--quiet", "--hard", wanted], ctx, cwd=target)
            self._git(["clean", "-fdxq"], ctx, cwd=target)
        if is_python_project(target) and (head != new or not self.is_installed(ref, ctx)):
            ctx.python.install(["-e", str(target)])

    def remove(self, ref: PackageRef, ctx: PackageContext) -> None:
        target = self.clone_dir(ref, ctx)
        dist = ctx.python.find(ref, target)
        if dist is not None:
            ctx.python.uninstall([dist.name])
        if target.exists():
            remove_tree(target, stop_at=self.git_root(ctx))

    def is_installed(self, ref: PackageRef, ctx: PackageContext) -> bool:
        target = self.clone_dir(ref, ctx)
        if not target.is_dir():
            return False
        return not is_python_project(target) or ctx.python.find(ref, target) is not None

    def installed_path(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        target = self.clone_dir(ref, ctx)
        return target if target.is_dir() else None

    def package_root(self, ref: PackageRef, ctx: PackageContext) -> Path | None:
        return self.installed_path(ref, ctx)

    def declared_resources(self, ref: PackageRef, ctx: PackageContext) -> dict[str, list[Path]]:
        dist = ctx.python.find(ref, self.clone_dir(ref, ctx))
        return dist_resources(dist) if dist is not None else {}

    def details(self, ref: PackageRef, ctx: PackageContext) -> dict[str, Any]:
        target = self.clone_dir(ref, ctx)
        out: dict[str, Any] = {}
        if target.is_dir():
            try:
                out["commit"] = self._git(
                    ["rev-parse", "--short", "HEAD"], ctx, cwd=target, capture=True
                ).strip()
            except PackageError:
                pass
        dist = ctx.python.find(ref, target)
        if dist is not None:
            out.update(dist_details(dist))
        return out


SOURCE = GitSource()
