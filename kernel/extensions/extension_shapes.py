"""pi's registration objects (``register_tool({...})``, ``register_command(name, {...})``) read as definitions.

A pi extension passes one object of options; piko's own keyword form stays valid. Keys may be
camelCase (as a pi extension writes them) or snake_case. What piko keeps as metadata without
acting on it (:data:`TOOL_METADATA`) is accepted silently; a key piko does not know at all is
named in **one** warning per registration and ignored, never a failed load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from piko.lib.text import snake

# ToolDefinition fields a pi/omp ``registerTool`` object may carry (snake_case).
TOOL_FIELDS = frozenset(
    {
        "name", "label", "description", "parameters", "execute", "prepare_arguments",
        "prompt_snippet", "prompt_guidelines", "render_call", "render_result", "default_active",
        "override", "plugin", "order", "annotations",
    }
)  # fmt: skip
# Fields of omp's ToolDefinition that piko keeps (``ToolDefinition.metadata``); only ``strict`` is
# acted on (OpenAI's strict mode): approval tiers, discovery modes, MCP provenance and TSP views
# belong to runtimes piko has not.
TOOL_METADATA = frozenset(
    {
        "approval", "load_mode", "deferrable", "reads_skill_uris", "strict", "mcp_server_name",
        "mcp_tool_name", "legacy_name", "source_path", "shell_env", "describe_call",
        "describe_result", "execution_mode", "render_shell",
    }
)  # fmt: skip
COMMAND_FIELDS = frozenset({"description", "handler", "get_argument_completions"})
SHORTCUT_FIELDS = frozenset({"description", "handler"})
FLAG_FIELDS = frozenset({"description", "type", "default"})


class Options(dict[str, Any]):
    """snake_case options; ``spelled`` maps each key back to how the extension wrote it."""

    spelled: dict[str, str]


def options_of(value: Any, kwargs: dict[str, Any] | None = None) -> Options:
    """One dict of snake_case options from a pi options object (dict or attribute object) and keywords."""
    options = Options()
    options.spelled = {}
    if isinstance(value, dict):
        items = list(value.items())
    elif value is not None and hasattr(value, "__dict__") and not callable(value):
        items = [(k, v) for k, v in vars(value).items() if not k.startswith("_")]
    else:
        items = []
    for key, item in [*items, *(kwargs or {}).items()]:
        options[snake(str(key))] = item
        options.spelled[snake(str(key))] = str(key)
    return options


def split_known(
    options: dict[str, Any], known: frozenset[str], quiet: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(known fields, kept metadata, unknown keys)`` of ``options``."""
    fields = {k: v for k, v in options.items() if k in known}
    metadata = {k: v for k, v in options.items() if k in quiet}
    spelled = getattr(options, "spelled", {})
    unknown = sorted(spelled.get(k, k) for k in options if k not in known and k not in quiet)
    return fields, metadata, unknown


def parameters_schema(parameters: Any) -> dict[str, Any]:
    """A tool's JSON Schema from a dict, a pydantic model class or an object with ``json_schema()``."""
    if parameters is None:
        return {"type": "object", "properties": {}}
    if isinstance(parameters, dict):
        return parameters
    for attr in ("model_json_schema", "json_schema", "to_json_schema"):
        method = getattr(parameters, attr, None)
        if callable(method):
            schema = method()
            if isinstance(schema, dict):
                return schema
    raise TypeError(
        f"parameters is a {type(parameters).__name__}; expected a JSON Schema dict "
        "(or a pydantic model class)"
    )


def tool_fields(options: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    """ToolDefinition keyword arguments from a pi ``registerTool`` object."""
    fields, metadata, unknown = split_known(
        options, TOOL_FIELDS, TOOL_METADATA | {"hidden", "default_inactive", "on_session"}
    )
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_tool needs a name (a non-empty string); got {name!r}")
    if unknown:
        warn(f"tool '{name}': unknown field(s) {', '.join(unknown)}; ignored")
    if "parameters" in fields:
        fields["parameters"] = parameters_schema(fields["parameters"])
    inactive = bool(metadata.pop("hidden", False)) or bool(metadata.pop("default_inactive", False))
    if "default_active" not in fields:
        fields["default_active"] = not inactive  # extension tools are active unless they say otherwise
    elif inactive:
        fields["default_active"] = False
    metadata.pop("on_session", None)  # the extension API subscribes it to the session events
    fields["metadata"] = metadata
    return fields


def simple_fields(
    kind: str, name: str, options: dict[str, Any], known: frozenset[str], warn: Callable[[str], None]
) -> dict[str, Any]:
    """The known fields of a command/shortcut/flag options object; unknown keys are one warning."""
    fields, _metadata, unknown = split_known(options, known)
    if unknown:
        warn(f"{kind} '{name}': unknown field(s) {', '.join(unknown)}; ignored")
    return fields
