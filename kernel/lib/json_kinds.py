"""Whether a decoded JSON value is of a named kind, as pi's settings and ``models.json`` schemas name them.

The kinds: ``boolean``, ``number`` (an int or float, never a bool), ``string``, ``string[]``,
``object``, ``array``, ``null``, and any of them joined by ``|`` (``"string|null"``).
"""

from __future__ import annotations

from typing import Any

_CHECKS: dict[str, Any] = {
    "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "string[]": lambda v: isinstance(v, list) and all(isinstance(item, str) for item in v),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}

KINDS = frozenset(_CHECKS)
"""The single kinds :func:`is_kind` knows."""


def is_kind(kind: str, value: Any) -> bool:
    """Whether ``value`` is of ``kind`` (one of :data:`KINDS`, or several joined by ``|``).

    Raises ``KeyError`` for a kind it does not know, so a typo in a schema fails loudly."""
    return any(_CHECKS[part](value) for part in kind.split("|"))
