"""Reading pi's ``models.json`` (custom providers and models): comments, schema and config checks.

The rules are pi's (``docs/models.md``): ``//`` comments and trailing commas are allowed; the
file is checked against pi's schema, then against pi's extra rules (a provider without models
must change something; a new provider with models needs ``baseUrl``, ``apiKey`` and an ``api``);
any problem rejects the whole file with one message naming it, and built-in models stay.

Why the schema check is written here rather than handed to ``jsonschema`` (which checks tool
arguments, where it is imported on the first call): the file is read on every start that has
one, and importing ``jsonschema`` costs 54 to 60 ms on the development machine (``-X importtime``,
2026-12-02), about a third of a whole ``pi -p`` round trip; the rules it needs (types, required
keys, a minimum length, enums, records) are the 40 lines of :func:`schema_errors`, which also word each
problem as pi does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piko.lib.json_kinds import is_kind

# -- pi's schema, as data: ("object", {field: (schema, required)}) | "string" | ... ------------

Schema = Any
_STR = ("string", 1)  # minLength 1
_OPT_NUM = "number"
_THINKING_MAP = (
    "object",
    {level: ("string|null", False) for level in ("off", "minimal", "low", "medium", "high", "xhigh", "max")},
)
_INPUT = ("array", ("enum", ("text", "image")))
_HEADERS = ("record", "string")
_COMPAT: Schema = ("object", {})  # pi accepts any of three compat shapes, all fields optional
_COST_FULL = ("object", {k: ("number", True) for k in ("input", "output", "cacheRead", "cacheWrite")})
_COST_PART = ("object", {k: ("number", False) for k in ("input", "output", "cacheRead", "cacheWrite")})
_MODEL = (
    "object",
    {
        "id": (_STR, True),
        "name": (_STR, False),
        "api": (_STR, False),
        "baseUrl": (_STR, False),
        "reasoning": ("boolean", False),
        "thinkingLevelMap": (_THINKING_MAP, False),
        "input": (_INPUT, False),
        "cost": (_COST_FULL, False),
        "contextWindow": (_OPT_NUM, False),
        "maxTokens": (_OPT_NUM, False),
        "headers": (_HEADERS, False),
        "compat": (_COMPAT, False),
    },
)
# a built-in model's override: a model's fields but those naming it, and any part of the cost
_OVERRIDE = (
    "object",
    {
        field: (_COST_PART, False) if field == "cost" else rule
        for field, rule in _MODEL[1].items()
        if field not in ("id", "api", "baseUrl")
    },
)
_PROVIDER = (
    "object",
    {
        "name": (_STR, False),
        "baseUrl": (_STR, False),
        "apiKey": (_STR, False),
        # piko: the key from a command, cached (plugins/providers/credential_helper.py)
        "apiKeyCommand": ("any", False),
        "api": (_STR, False),
        "headers": (_HEADERS, False),
        "compat": (_COMPAT, False),
        "authHeader": ("boolean", False),
        "models": (("array", _MODEL), False),
        "modelOverrides": (("record", _OVERRIDE), False),
    },
)
MODELS_CONFIG_SCHEMA: Schema = ("object", {"providers": (("record", _PROVIDER), True)})


def _type_ok(kind: str, value: Any) -> bool:
    return kind == "any" or is_kind(kind, value)


def schema_errors(value: Any, schema: Schema = MODELS_CONFIG_SCHEMA, path: str = "") -> list[str]:
    """Problems of ``value`` against ``schema``, as ``path: message`` lines (pi's wording)."""
    where = path or "root"
    if isinstance(schema, str):
        return [] if _type_ok(schema, value) else [f"{where}: must be {schema.replace('|', ' or ')}"]
    kind, arg = schema
    if kind == "string":
        if not isinstance(value, str):
            return [f"{where}: must be string"]
        return [f"{where}: must NOT have fewer than {arg} characters"] if len(value) < arg else []
    if kind == "enum":
        return [] if value in arg else [f"{where}: must be equal to one of {', '.join(map(json.dumps, arg))}"]
    if kind == "array":
        if not isinstance(value, list):
            return [f"{where}: must be array"]
        return [e for i, item in enumerate(value) for e in schema_errors(item, arg, _join(path, str(i)))]
    if not isinstance(value, dict):
        return [f"{where}: must be object"]
    if kind == "record":
        return [e for k, item in value.items() for e in schema_errors(item, arg, _join(path, k))]
    errors: list[str] = []
    for name, (field_schema, required) in arg.items():
        if name not in value:
            if required:
                errors.append(f"{_join(path, name)}: must have required properties {name}")
            continue
        errors.extend(schema_errors(value[name], field_schema, _join(path, name)))
    return errors


def unknown_keys(value: Any, schema: Schema = MODELS_CONFIG_SCHEMA, path: str = "") -> list[str]:
    """The keys of ``value`` that ``schema`` does not know, as dotted paths. pi ignores them
    silently; piko says so once (a misspelt ``contextwindow`` would otherwise go unnoticed)."""
    if isinstance(schema, str) or not isinstance(value, dict | list):
        return []
    kind, arg = schema
    if kind == "array" and isinstance(value, list):
        return [k for i, item in enumerate(value) for k in unknown_keys(item, arg, _join(path, str(i)))]
    if kind == "record" and isinstance(value, dict):
        return [k for name, item in value.items() for k in unknown_keys(item, arg, _join(path, name))]
    if kind != "object" or not isinstance(value, dict) or not arg:  # compat takes anything
        return []
    found = [_join(path, name) for name in value if name not in arg]
    for name, (field_schema, _required) in arg.items():
        if name in value:
            found.extend(unknown_keys(value[name], field_schema, _join(path, name)))
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# -- reading -----------------------------------------------------------------------------------

_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*')
_TRAILING_COMMA_OR_STRING = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])')


def strip_json_comments(text: str) -> str:
    """Remove ``//`` comments and trailing commas, leaving string literals untouched (as pi)."""
    text = _COMMENT_OR_STRING.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)
    return _TRAILING_COMMA_OR_STRING.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)


class ModelsConfigError(Exception):
    """``models.json`` cannot be used; the message is the one shown to the user."""


def read_models_config(path: Path) -> dict[str, Any] | None:
    """The checked content of ``path`` (``None`` when the file does not exist).

    Raises :class:`ModelsConfigError` with pi's message (parse error, schema errors, or a rule
    that is broken), ending with the file's path.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelsConfigError(f"Failed to load models.json: {exc}\n\nFile: {path}") from exc
    try:
        data = json.loads(strip_json_comments(text))
    except json.JSONDecodeError as exc:
        message = f"{exc.msg} in JSON at position {exc.pos} (line {exc.lineno} column {exc.colno})"
        raise ModelsConfigError(f"Failed to parse models.json: {message}\n\nFile: {path}") from exc
    errors = schema_errors(data)
    if errors:
        lines = "\n".join(f"  - {e}" for e in errors)
        raise ModelsConfigError(f"Invalid models.json schema:\n{lines}\n\nFile: {path}")
    return data  # type: ignore[no-any-return]


def check_rules(config: dict[str, Any], is_builtin: Callable[[str], bool]) -> None:
    """pi's checks beyond the schema; raises ``ValueError`` with pi's message."""
    for name, provider in config["providers"].items():
        builtin = is_builtin(name)
        models = provider.get("models") or []
        if not models:
            if not (
                provider.get("baseUrl")
                or provider.get("headers")
                or provider.get("compat")
                or provider.get("modelOverrides")
            ):
                raise ValueError(
                    f'Provider {name}: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".'
                )
        elif not builtin:
            if not provider.get("baseUrl"):
                raise ValueError(f'Provider {name}: "baseUrl" is required when defining custom models.')
            if not provider.get("apiKey") and not provider.get("apiKeyCommand"):
                raise ValueError(f'Provider {name}: "apiKey" is required when defining custom models.')
        for model in models:
            if not builtin and not provider.get("api") and not model.get("api"):
                raise ValueError(
                    f'Provider {name}, model {model["id"]}: no "api" specified. Set at provider or model level.'
                )
            if model.get("contextWindow") is not None and model["contextWindow"] <= 0:
                raise ValueError(f"Provider {name}, model {model['id']}: invalid contextWindow")
            if model.get("maxTokens") is not None and model["maxTokens"] <= 0:
                raise ValueError(f"Provider {name}, model {model['id']}: invalid maxTokens")
