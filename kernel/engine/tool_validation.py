"""Validating a model's tool arguments against the tool's JSON schema (jsonschema, imported lazily).

Like pi, arguments are first coerced where the schema's type makes the intent plain ("5" for a
number, "true" for a boolean, a number for a string), then validated. A failure raises
:class:`ToolValidationError` whose message lists each problem and the arguments received; the
agent turns it into an error result for the model instead of running the tool.
"""

from __future__ import annotations

import copy
import json
from typing import Any

VALIDATOR_CACHE_SIZE = 256
"""Compiled schemas kept (most recently used first out last): tools of ended sessions fall out."""
_validators: dict[int, tuple[Any, Any]] = {}


class ToolValidationError(ValueError):
    """The arguments do not match the tool's schema."""


def _types(schema: dict[str, Any]) -> list[str]:
    value = schema.get("type")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for t in value if isinstance(t, str)]
    return []


def _matches(value: Any, kind: str) -> bool:
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return False


def _coerce_primitive(value: Any, kind: str) -> Any:
    if kind in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, str) and value.strip():
            try:
                number = float(value)
            except ValueError:
                return value
            if kind == "integer" and not number.is_integer():
                return value
            return int(number) if number.is_integer() else number
        return value
    if kind == "boolean":
        if value is None:
            return False
        if value in ("true", 1) and not isinstance(value, bool):
            return True
        if value in ("false", 0) and not isinstance(value, bool):
            return False
        return value
    if kind == "string":
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        return value
    if kind == "null" and value in ("", 0, False):
        return None
    return value


def coerce(value: Any, schema: Any) -> Any:
    """Coerce ``value`` towards ``schema``'s types (objects and arrays recursively)."""
    if not isinstance(schema, dict):
        return value
    for nested in schema.get("allOf") or []:
        value = coerce(value, nested)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                candidate = coerce(copy.deepcopy(value), option)
                if _validator(option)[0].is_valid(candidate):
                    value = candidate
                    break
    kinds = _types(schema)
    if kinds and not any(_matches(value, k) for k in kinds):
        for kind in kinds:
            candidate = _coerce_primitive(value, kind)
            if candidate is not value:
                value = candidate
                break
    if "object" in kinds and isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if key in value:
                value[key] = coerce(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in list(value):
                if key not in properties:
                    value[key] = coerce(value[key], extra)
    if "array" in kinds and isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            value[:] = [coerce(v, items) for v in value]
        elif isinstance(items, list):
            for i, sub in enumerate(items[: len(value)]):
                value[i] = coerce(value[i], sub)
    return value


def _validator(schema: dict[str, Any]) -> tuple[Any, Any]:
    """The compiled validator of ``schema`` (kept with it, so its id stays its own while cached)."""
    key = id(schema)
    cached = _validators.pop(key, None)
    if cached is not None and cached[1] is schema:
        _validators[key] = cached  # most recently used last
        return cached
    from jsonschema.validators import validator_for

    cls = validator_for(schema)
    entry = (cls(schema), schema)
    _validators[key] = entry
    while len(_validators) > VALIDATOR_CACHE_SIZE:
        del _validators[next(iter(_validators))]
    return entry


def _path(error: Any) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return f"{path}.{missing}" if path else missing or "root"
    return path or "root"


def validate_tool_arguments(
    tool_name: str, schema: dict[str, Any], arguments: dict[str, Any]
) -> dict[str, Any]:
    """The coerced arguments, or :class:`ToolValidationError` with pi's message format."""
    args = copy.deepcopy(arguments)
    if isinstance(schema, dict) and schema:
        coerced = coerce(args, schema)
        validator = _validator(schema)[0]
        errors = sorted(validator.iter_errors(coerced), key=lambda e: list(e.absolute_path))
        if not errors:
            return coerced if isinstance(coerced, dict) else args
        lines = "\n".join(f"  - {_path(e)}: {e.message}" for e in errors) or "Unknown validation error"
        raise ToolValidationError(
            f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n'
            f"{json.dumps(arguments, indent=2, ensure_ascii=False)}"
        )
    return args
