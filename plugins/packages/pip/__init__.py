"""Plugin ``packages.pip``: the ``pip:`` package source (Python distributions from any index pip is configured for, or a wheel/sdist file)."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl


@hookimpl
def piko_register_package_sources(register: Any) -> None:
    register("pip", "piko.plugins.packages.pip.source:SOURCE")
