"""Plugin ``packages.npm``: the ``npm:`` package source (pi packages from the npm registry, for their skills, prompt templates and themes)."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl


@hookimpl
def piko_register_package_sources(register: Any) -> None:
    register("npm", "piko.plugins.packages.npm.source:SOURCE")
