"""Plugin ``packages.path``: the ``path:`` package source (local folders and extension files, used where they are)."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl


@hookimpl
def piko_register_package_sources(register: Any) -> None:
    register("path", "piko.plugins.packages.path.source:SOURCE")
