"""Provider-scoped environment variables: an ``auth.json`` credential's ``env`` map, which wins over
the process environment for that provider only (pi 1.6's ``env`` of a stored credential)."""

from __future__ import annotations

import os
from collections.abc import Mapping

_scoped: dict[str, dict[str, str]] = {}


def set_provider_env(provider: str, values: Mapping[str, object] | None) -> None:
    """Use ``values`` (string values only) as ``provider``'s variables from now on (None: none)."""
    clean = {str(k): str(v) for k, v in (values or {}).items() if isinstance(v, str | int | float)}
    if clean:
        _scoped[provider] = clean
    else:
        _scoped.pop(provider, None)


def provider_env(provider: str | None) -> dict[str, str]:
    """``provider``'s own variables (empty when it has none)."""
    return dict(_scoped.get(provider or "", {}))


def provider_getenv(provider: str | None, name: str) -> str | None:
    """``name`` as ``provider`` sees it: its own variable first, then the process environment."""
    value = _scoped.get(provider or "", {}).get(name)
    return value if value else os.environ.get(name)


def forget_provider_envs() -> None:
    """Drop every provider's variables (a new run, or a test that booted another App)."""
    _scoped.clear()
