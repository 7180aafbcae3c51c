"""Settings layers: built-in defaults < ``~/.pi/agent/settings.json`` < ``.pi/settings.json`` < overrides.

Overrides are flags and RPC commands, then extensions' runtime values (:mod:`piko.config.registry`),
then a managed policy's forced values; none of them is saved.

Nested objects merge key by key (``{"retry": {"maxRetries": 5}}`` in a project keeps the global
``retry.baseDelayMs``). Keys are pi's camelCase names; ``get("retry.maxRetries")`` reads a
dotted path. A file that does not parse is reported once and treated as empty, and is never
overwritten by piko. :meth:`Settings.in_memory` holds one dict instead of both files (the SDK's
``settings=``): nothing is read from disk and changes stay in memory. In a project that is not
trusted, the project file is ignored but for ``sessionDir`` (read before trust is settled, as pi
does); ``project_data`` still holds it as written, for the commands that show or edit it.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piko.config.paths import agent_dir as default_agent_dir
from piko.config.paths import project_dir
from piko.lib import jsonio
from piko.lib.tool_names import merge_default_tools

DEFAULTS: dict[str, Any] = {
    "hideThinkingBlock": False,
    "showHardwareCursor": False,
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "quietStartup": False,
    "collapseChangelog": False,
    "doubleEscapeAction": "tree",
    "editorPaddingX": 0,
    "autocompleteMaxVisible": 5,
    "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    "branchSummary": {"reserveTokens": 16384},
    "retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000, "provider": {"maxRetryDelayMs": 60000}},
    "images": {"autoResize": True, "blockImages": False},
    "terminal": {"showImages": True, "clearOnShrink": False},
    "thinkingBudgets": {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384},
    "enableSkillCommands": True,
    "extensionHandlers": {"timeoutMs": 30000, "toolCallTimeoutMs": 30000, "shutdownTimeoutMs": 2000},
}

# The project settings an untrusted project keeps (pi reads it before trust is settled).
UNTRUSTED_PROJECT_KEYS = ("sessionDir",)
# Project settings that make piko run code (like every project setting, honoured only in a trusted project).
CODE_RUNNING_PROJECT_KEYS = ("shellPath", "shellCommandPrefix", "packages", "extensions")
# Project settings that choose which plugins load (the user's own among them); the same.
PLUGIN_SELECTING_PROJECT_KEYS = ("disabledPlugins",)
TRUSTED_ONLY_PROJECT_KEYS = CODE_RUNNING_PROJECT_KEYS + PLUGIN_SELECTING_PROJECT_KEYS


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Older key names read as pi reads them (the file itself changes only when piko writes it).

    ``queueMode`` is ``steeringMode``; ``websockets: bool`` is ``transport``; the old
    ``skills: {enableSkillCommands, customDirectories}`` object is ``enableSkillCommands`` and
    a ``skills`` list; ``retry.maxDelayMs`` is ``retry.provider.maxRetryDelayMs``.
    """
    if "queueMode" in data and "steeringMode" not in data:
        data["steeringMode"] = data.pop("queueMode")
    if "transport" not in data and isinstance(data.get("websockets"), bool):
        data["transport"] = "websocket" if data.pop("websockets") else "sse"
    skills = data.get("skills")
    if isinstance(skills, dict):
        if "enableSkillCommands" in skills and "enableSkillCommands" not in data:
            data["enableSkillCommands"] = skills["enableSkillCommands"]
        folders = skills.get("customDirectories")
        if isinstance(folders, list) and folders:
            data["skills"] = folders
        else:
            del data["skills"]
    retry = data.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        old = retry.pop("maxDelayMs")
        current = retry.get("provider")
        provider: dict[str, Any] = current if isinstance(current, dict) else {}
        if isinstance(old, int | float) and provider.get("maxRetryDelayMs") is None:
            retry["provider"] = {**provider, "maxRetryDelayMs": old}
    return data


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """A new dict: ``top`` over ``base``, merging nested dicts key by key."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class Settings:
    """The merged view of all settings layers, with writes to the global or project file."""

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        agent_dir: str | os.PathLike[str] | None = None,
        *,
        project_trusted: bool = True,
        memory: dict[str, Any] | None = None,
    ) -> None:
        """``memory``: hold this dict instead of both files (see :meth:`in_memory`)."""
        self.cwd = Path(cwd or os.getcwd())
        self.agent_dir = Path(agent_dir) if agent_dir else default_agent_dir()
        self.project_trusted = project_trusted
        self.diagnostics: list[str] = []
        self.global_path = self.agent_dir / "settings.json"
        self.project_path = project_dir(self.cwd) / "settings.json"
        self._overrides: dict[str, Any] = {}
        self._runtime: dict[str, Any] = {}  # extensions' setting overrides (piko.config.registry)
        self._forced: dict[str, Any] = {}
        self._listeners: list[Callable[[], None]] = []
        self.forced_by: str | None = None
        self._memory = migrate_settings(copy.deepcopy(memory)) if memory is not None else None
        self.reload()

    @classmethod
    def in_memory(
        cls,
        data: dict[str, Any] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        agent_dir: str | os.PathLike[str] | None = None,
    ) -> Settings:
        """Settings from ``data`` alone (over the defaults): no file is read or written; what piko
        saves (the last model, a changed mode) changes ``data``'s copy in memory."""
        if data is not None and not isinstance(data, dict):
            raise TypeError(f"settings must be a dict, not {type(data).__name__}")
        return cls(cwd, agent_dir, memory=data or {})

    @property
    def is_in_memory(self) -> bool:
        """Whether these settings live in memory only (:meth:`in_memory`)."""
        return self._memory is not None

    # -- reading ---------------------------------------------------------------------------

    def reload(self) -> None:
        """Read both files again (settings in memory stay as they are)."""
        if self._memory is not None:
            self.global_data = self._memory
            self.project_data = {}
            self._rebuild()
            return
        self.global_data = self._read(self.global_path)
        self.project_data = self._read(self.project_path)
        self._rebuild()

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            data = jsonio.read_json_file(path)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self.diagnostics.append(f"Could not read settings from {path}: {exc}")
            return {}
        if not isinstance(data, dict):
            self.diagnostics.append(f"Ignoring {path}: settings must be a JSON object")
            return {}
        return migrate_settings(data)

    def _rebuild(self) -> None:
        project = self.project_data
        if not self.project_trusted:
            project = {k: v for k, v in project.items() if k in UNTRUSTED_PROJECT_KEYS}
        merged = deep_merge(DEFAULTS, self.global_data)
        merged = deep_merge(merged, project)
        merged = deep_merge(merged, self._overrides)
        merged = deep_merge(merged, self._runtime)
        merged = deep_merge(merged, self._forced)
        tools = None  # a layer of only +name/-name entries changes the one below (pi 1.6)
        for layer in (self.global_data, project, self._overrides, self._runtime, self._forced):
            tools = merge_default_tools(tools, layer.get("defaultTools"))
        if tools is not None:
            merged["defaultTools"] = tools
        self.merged = merged
        for listener in list(getattr(self, "_listeners", ())):
            try:
                listener()
            except Exception as exc:  # a listener's failure is its own; the change stands
                self.diagnostics.append(f"settings listener failed: {exc}")

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after every change of the merged settings; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def layer_of(self, key: str) -> str:
        """The layer the effective value of ``key`` comes from: ``"policy"``, ``"runtime"``,
        ``"overlay"`` (flags, RPC), ``"project"``, ``"global"`` or ``"default"``."""
        project = self.project_data
        if not self.project_trusted:
            project = {k: v for k, v in project.items() if k in UNTRUSTED_PROJECT_KEYS}
        layers = (
            ("policy", self._forced),
            ("runtime", self._runtime),
            ("overlay", self._overrides),
            ("project", project),
            ("global", self.global_data),
        )
        for name, layer in layers:
            if _at_path(layer, key) is not _ABSENT:
                return name
        return "default"

    def set_runtime(self, key: str, value: Any) -> None:
        """An extension's value for ``key``: above the files and flags, never saved."""
        _set_path(self._runtime, key, value)
        self._rebuild()

    def clear_runtime(self, key: str) -> None:
        """Remove the runtime value of ``key``."""
        parts = key.split(".")
        node: Any = self._runtime
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and parts[-1] in node:
            del node[parts[-1]]
            self._rebuild()

    def set_project_trusted(self, trusted: bool) -> None:
        """Honour (or ignore) the project's settings."""
        self.project_trusted = trusted
        self._rebuild()

    def get(self, key: str, default: Any = None) -> Any:
        """The effective value of a dotted key (``"compaction.reserveTokens"``)."""
        value = _at_path(self.merged, key)
        return default if value is _ABSENT else value

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def override(self, key: str, value: Any) -> None:
        """Set a runtime value (CLI flag, RPC command) above every file; never persisted."""
        _set_path(self._overrides, key, value)
        self._rebuild()

    def force(self, values: dict[str, Any], source: str) -> None:
        """Values a managed policy sets (``source`` names its file): above every file, flag and
        runtime change, so no user or project setting can change them."""
        self._forced = deep_merge(self._forced, values)
        self.forced_by = source
        self._rebuild()

    def is_forced(self, key: str) -> bool:
        """Whether a managed policy sets ``key`` (a dotted key, or a parent of one it sets)."""
        return _at_path(self._forced, key) is not _ABSENT

    # -- writing ---------------------------------------------------------------------------

    def set_global(self, key: str, value: Any) -> None:
        """Change a key in ``~/.pi/agent/settings.json`` (other keys are kept as they are)."""
        self._write(self.global_path, self.global_data, key, value)

    def set_project(self, key: str, value: Any) -> None:
        """Change a key in ``.pi/settings.json``."""
        self._write(self.project_path, self.project_data, key, value)

    def _write(self, path: Path, data: dict[str, Any], key: str, value: Any) -> None:
        if self._memory is not None:  # one dict stands for both files
            _set_path(self._memory, key, value)
            self._rebuild()
            return
        if any(d.startswith(f"Could not read settings from {path}") for d in self.diagnostics):
            raise OSError(f"{path} could not be read; fix it before piko changes it")
        updated = copy.deepcopy(data)
        _set_path(updated, key, value)
        jsonio.write_atomic(path, jsonio.dumps_pretty(updated) + "\n")
        data.clear()
        data.update(updated)
        self._rebuild()


_ABSENT = object()


def _at_path(node: Any, key: str) -> Any:
    """The value at a dotted key in nested dicts, or ``_ABSENT``."""
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _set_path(target: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = target
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
