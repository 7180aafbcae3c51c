"""Typed handles on the settings (omp's settings registry): ``lookup(id)``, ``all()``.

A handle reads and changes one setting in a scope, a :class:`~piko.config.settings.Settings` (an
extension passes ``pi.pi.settings``): ``get`` (the effective value), ``override`` (the runtime
layer: never saved, above the files and the command line, below a managed policy; a value of the
wrong type raises ``ValueError``), ``clear_override``, ``is_configured`` (set by anything but the
defaults), ``provenance`` (``"env"``, ``"policy"``, ``"runtime"``, ``"overlay"`` (a flag or an
RPC command), ``"project"``, ``"global"`` or ``"default"``) and ``listen(scope, cb)`` (``cb(value)``
when the effective value changes; returns the function that stops it). camelCase names work too.
The ids are the keys of ``docs/settings.md``; ``lookup`` gives ``None`` for any other.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from piko.config.settings import Settings
from piko.lib.json_kinds import is_kind

_MISSING = object()

# id -> (type, allowed values or None, environment variable that outranks the files or None)
_DEFINITIONS: dict[str, tuple[str, tuple[Any, ...] | None, str | None]] = {
    "defaultProvider": ("string", None, None),
    "defaultModel": ("string", None, None),
    "defaultThinkingLevel": ("string", ("off", "minimal", "low", "medium", "high", "xhigh", "max"), None),
    "enabledModels": ("string[]", None, None),
    "thinkingBudgets": ("object", None, None),
    "hideThinkingBlock": ("boolean", None, None),
    "retry.enabled": ("boolean", None, None),
    "retry.maxRetries": ("number", None, None),
    "retry.baseDelayMs": ("number", None, None),
    "retry.provider.timeoutMs": ("number", None, None),
    "retry.provider.maxRetries": ("number", None, None),
    "retry.provider.maxRetryDelayMs": ("number", None, None),
    "compaction.enabled": ("boolean", None, None),
    "compaction.reserveTokens": ("number", None, None),
    "compaction.keepRecentTokens": ("number", None, None),
    "branchSummary.reserveTokens": ("number", None, None),
    "branchSummary.skipPrompt": ("boolean", None, None),
    "steeringMode": ("string", ("all", "one-at-a-time"), None),
    "followUpMode": ("string", ("all", "one-at-a-time"), None),
    "defaultTools": ("string[]", None, None),
    "sessionDir": ("string", None, "PI_CODING_AGENT_SESSION_DIR"),
    "httpProxy": ("string", None, None),
    "shellPath": ("string", None, None),
    "shellCommandPrefix": ("string", None, None),
    "npmCommand": ("string[]", None, None),
    "images.autoResize": ("boolean", None, None),
    "images.blockImages": ("boolean", None, None),
    "skills": ("string[]", None, None),
    "prompts": ("string[]", None, None),
    "themes": ("string[]", None, None),
    "extensions": ("string[]", None, None),
    "packages": ("array", None, None),
    "enableSkillCommands": ("boolean", None, None),
    "theme": ("string", None, None),
    "quietStartup": ('boolean or "header"', None, None),
    "doubleEscapeAction": ("string", ("tree", "fork", "none"), None),
    "treeFilterMode": ("string", ("default", "no-tools", "user-only", "labeled-only", "all"), None),
    "autocompleteMaxVisible": ("number", None, None),
    "editorPaddingX": ("number", None, None),
    "showHardwareCursor": ("boolean", None, None),
    "terminal.showImages": ("boolean", None, None),
    "terminal.imageWidthCells": ("number", None, None),
    "terminal.clearOnShrink": ("boolean", None, None),
    "warnings.anthropicExtraUsage": ("boolean", None, None),
    "defaultProjectTrust": ("string", ("ask", "always", "never"), None),
    "disabledPlugins": ("string[]", None, None),
    "extensionHandlers.timeoutMs": ("number", None, None),
    "extensionHandlers.toolCallTimeoutMs": ("number", None, None),
    "extensionHandlers.shutdownTimeoutMs": ("number", None, None),
    "cacheRetention": ("string", ("none", "short", "long"), "PI_CACHE_RETENTION"),
}


def _valid(kind: str, value: Any) -> bool:
    if kind == 'boolean or "header"':  # quietStartup
        return isinstance(value, bool) or value == "header"
    return is_kind(kind, value)


def _json(value: Any) -> str:
    import json

    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _article(kind: str) -> str:
    return "an" if kind[:1] in "aeiou" else "a"


class Setting:
    """One setting's handle (see the module docstring)."""

    def __init__(self, id: str, kind: str, choices: tuple[Any, ...] | None, env: str | None) -> None:
        self.id = id
        self.type = kind
        self.choices = choices
        self.env = env

    def __repr__(self) -> str:
        return f"Setting({self.id!r}, {self.type})"

    def validate(self, value: Any) -> Any:
        """``value`` if this setting takes it; ``ValueError`` in omp's words otherwise."""
        if not _valid(self.type, value) or (self.choices is not None and value not in self.choices):
            expected = (
                "one of " + ", ".join(_json(c) for c in self.choices)
                if self.choices is not None and _valid(self.type, value)
                else f"{_article(self.type)} {self.type}"
            )
            raise ValueError(f"Invalid value for {self.id}: {_json(value)} (expected {expected})")
        return value

    def get(self, scope: Settings) -> Any:
        """The effective value (an environment binding first); ``None`` when nothing sets it."""
        if self.env and os.environ.get(self.env):
            return os.environ[self.env]
        return _settings(scope).get(self.id)

    def override(self, scope: Settings, value: Any) -> None:
        """Set the runtime value (never saved); listeners hear of the change."""
        _settings(scope).set_runtime(self.id, self.validate(value))

    def clear_override(self, scope: Settings) -> None:
        """Drop the runtime value: the saved or default one applies again."""
        _settings(scope).clear_runtime(self.id)

    def provenance(self, scope: Settings) -> str:
        """Which layer the effective value comes from."""
        if self.env and os.environ.get(self.env):
            return "env"
        return _settings(scope).layer_of(self.id)

    def is_configured(self, scope: Settings) -> bool:
        """Whether anything but the defaults sets it."""
        return self.provenance(scope) != "default"

    def listen(self, scope: Settings, callback: Callable[[Any], Any]) -> Callable[[], None]:
        """Call ``callback(value)`` each time the effective value changes; returns the stop."""
        settings = _settings(scope)
        last = [self.get(settings)]

        def changed() -> None:
            value = self.get(settings)
            if value != last[0]:
                last[0] = value
                callback(value)

        return settings.add_listener(changed)

    clearOverride = clear_override  # omp's names, for extensions written from its docs
    isConfigured = is_configured


def _settings(scope: Any) -> Settings:
    settings = scope if isinstance(scope, Settings) else getattr(scope, "settings", None)
    if not isinstance(settings, Settings):
        raise TypeError(f"a settings scope is needed (pi.pi.settings), not {type(scope).__name__}")
    return settings


_HANDLES = {key: Setting(key, *definition) for key, definition in _DEFINITIONS.items()}


def lookup(id: str) -> Setting | None:
    """The handle of setting ``id`` (a dotted key of ``docs/settings.md``), or ``None``."""
    return _HANDLES.get(id)


def all() -> list[Setting]:
    """Every setting's handle (omp's name; the builtin ``all`` is ``builtins.all`` here)."""
    return list(_HANDLES.values())


__all__ = ["Setting", "all", "lookup"]
