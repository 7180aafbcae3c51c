"""Which plugin registered which provider, tool, mode or command, remembered across runs.

A blocked plugin is never imported, so when a user asks for ``--provider acme-gateway`` piko
cannot know from this run that the name belongs to the blocked ``acme.gateway`` plugin. So each
run that fills a registry remembers who registered what (a small JSON file in piko's cache
directory, written at exit only when it learned something new), and :func:`explain` turns an
unknown name into "provider acme-gateway comes from plugin acme.gateway, blocked by
--disable-plugin" instead of "Unknown provider".
"""

from __future__ import annotations

from typing import Any

from piko.config.paths import cache_dir
from piko.lib import jsonio

FILE = "registrations.json"
GROUPS = ("providers", "tools", "modes", "commands")


class Provenance:
    """Who registered each name of each group: this run's registrations, and earlier runs'."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, str]] = {}  # group -> name -> plugin (this run)
        self._known: dict[str, dict[str, str]] | None = None

    def remember(self, group: str, name: str, plugin: str) -> None:
        if group in GROUPS and plugin:
            self.seen.setdefault(group, {})[name] = plugin

    def known(self) -> dict[str, dict[str, str]]:
        """What earlier runs recorded (read on first use)."""
        if self._known is None:
            try:
                data = jsonio.read_json_file(cache_dir() / FILE)
            except (OSError, ValueError):
                data = {}
            self._known = {
                group: {str(k): str(v) for k, v in names.items()}
                for group, names in (data.items() if isinstance(data, dict) else [])
                if group in GROUPS and isinstance(names, dict)
            }
        return self._known

    def owner(self, group: str, name: str) -> str | None:
        return self.seen.get(group, {}).get(name) or self.known().get(group, {}).get(name)

    def save(self) -> None:
        """Merge this run's registrations into the file (only when they add something)."""
        if not self.seen:
            return
        known = self.known()
        merged = {group: dict(known.get(group, {})) for group in GROUPS}
        for group, names in self.seen.items():
            merged[group].update(names)
        if merged == {group: known.get(group, {}) for group in GROUPS}:
            return
        try:
            path = cache_dir() / FILE
            path.parent.mkdir(parents=True, exist_ok=True)
            jsonio.write_atomic(path, jsonio.dumps(merged))
        except OSError:  # a cache: never worth failing a run for
            return
        self._known = merged


def explain(app: Any, group: str, name: str) -> str | None:
    """Why ``name`` is not available in ``group`` when a blocked or broken plugin provides it."""
    plugin = app.provenance.owner(group, name)
    info = app.pm.infos.get(plugin) if plugin else None
    kind = group.rstrip("s")
    if info is None:
        return None
    if info.blocked:
        return f"{kind} {name} comes from plugin {plugin}, blocked by {info.blocked_by}"
    if info.error:
        return f"{kind} {name} comes from plugin {plugin}, which failed: {info.error}"
    return None
