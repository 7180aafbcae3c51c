"""Plugin ``packages.git``: the ``git:`` package source (git repositories, cloned under ~/.pi/agent/git/ (or .pi/git/))."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl


@hookimpl
def piko_register_package_sources(register: Any) -> None:
    register("git", "piko.plugins.packages.git.source:SOURCE")
