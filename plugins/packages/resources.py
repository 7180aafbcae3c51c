"""Plugin ``packages.resources``: skills, prompt templates and themes of installed packages."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl


@hookimpl
def piko_resources_discover(event: Any, ctx: Any) -> Any:
    app = getattr(ctx, "app", None)
    if app is None:
        return None
    from piko.app.application import packages_configured

    if not packages_configured(app):
        return None  # the package manager is not even imported
    from piko.plugins.packages.manager import manager_for

    return manager_for(app).resource_paths(refresh=getattr(event, "reason", "startup") == "reload")
