"""``@piko.tool``: a typed Python function (sync or async) as a tool, its JSON schema read from the hints.

The parameters' type hints become the tool's JSON schema (``str``, ``int``, ``float``, ``bool``,
``list[...]``, ``dict[str, ...]``, ``X | None``, ``Literal[...]``, ``Enum`` subclasses, and
nested ``TypedDict`` classes); a parameter with a default is optional. The docstring's first
paragraph is the description and its ``Args:`` section (or ``:param name:`` lines) documents
each parameter. Four parameter names are not arguments of the model but filled in by piko when
the function declares them: ``ctx`` (the handler context), ``signal`` (the abort signal),
``on_update`` (partial results) and ``tool_call_id``. The arguments are validated against the
schema before the call (by the agent loop, as for every tool). The function may return a
``str``, a content block or a list of them, a :class:`~piko.data.messages.ToolResult`, or any
JSON value (sent as its JSON text). A hint that cannot become a schema raises
:class:`ToolSchemaError` when the decorator runs, not when the model calls the tool.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any
from typing import TypedDict
from typing import Unpack
from typing import overload

from piko.platform.registries import ToolDefinition

INJECTED = ("ctx", "signal", "on_update", "tool_call_id")
"""Parameter names piko fills in itself; they are not part of the schema."""


class ToolSchemaError(TypeError):
    """A function's signature cannot become a tool's JSON schema; the message names the parameter."""


class ToolOptions(TypedDict, total=False):
    """The options of :func:`tool` and :func:`function_tool`; each is optional."""

    name: str | None  # the tool's name (default: the function's)
    label: str | None  # its name as the interactive mode shows it (default: the name)
    description: str | None  # what the model reads of it (default: the docstring's first paragraph)
    default_active: bool  # active without being asked for (default: True)
    prompt_snippet: str | None  # its line in the system prompt's list of tools
    prompt_guidelines: list[str] | None  # guidelines the system prompt adds while it is active


@overload
def tool(function: Callable[..., Any], /) -> ToolDefinition: ...


@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], ToolDefinition]: ...


def tool(
    function: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
) -> ToolDefinition | Callable[[Callable[..., Any]], ToolDefinition]:
    """Turn ``function`` into a :class:`~piko.platform.registries.ToolDefinition` (see the module docstring).

    Use it bare (``@tool``) or with options (``@tool(name="lookup")``, see :class:`ToolOptions`).
    The definition is what ``pi.register_tool`` and ``register`` take, and what ``custom_tools``
    of ``piko.create_agent_session`` accepts; calling it is not possible, its ``execute`` runs
    the function.
    """

    def build(target: Callable[..., Any]) -> ToolDefinition:
        return function_tool(target, **options)

    if function is not None:
        return build(function)
    return build


def function_tool(function: Callable[..., Any], **options: Unpack[ToolOptions]) -> ToolDefinition:
    """The tool definition of ``function``; raises :class:`ToolSchemaError` when its hints do not fit."""
    unknown = sorted(set(options) - set(ToolOptions.__annotations__))
    if unknown:
        raise TypeError(f"tool() got unexpected keyword arguments: {', '.join(map(repr, unknown))}")
    if not callable(function):
        raise ToolSchemaError(f"a tool must be a function, not {type(function).__name__}")
    tool_name: str = options.get("name") or str(getattr(function, "__name__", ""))
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool_name or ""):
        raise ToolSchemaError(
            f"tool name {tool_name!r} is not valid: use 1-64 letters, digits, '_' or '-' (give name=...)"
        )
    summary, parameter_docs = parse_docstring(inspect.getdoc(function) or "")
    schema, converters, injected = parameters_schema(function, parameter_docs)
    description = options.get("description")
    text = description if description is not None else summary
    if not text:
        raise ToolSchemaError(
            f"tool '{tool_name}' needs a description: give it a docstring or description=..."
        )
    execute = _executor(function, converters, injected)
    return ToolDefinition(
        name=tool_name,
        label=options.get("label") or tool_name,
        description=text,
        parameters=schema,
        execute=execute,
        default_active=options.get("default_active", True),
        prompt_snippet=options.get("prompt_snippet"),
        prompt_guidelines=list(options.get("prompt_guidelines") or []),
    )


# ---------------------------------------------------------------------------
# The schema
# ---------------------------------------------------------------------------


def parameters_schema(
    function: Callable[..., Any], docs: dict[str, str] | None = None
) -> tuple[dict[str, Any], dict[str, Callable[[Any], Any]], list[str]]:
    """``(JSON schema of the arguments, converters by parameter, injected parameter names)``."""
    label = getattr(function, "__qualname__", repr(function))
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolSchemaError(f"{label}: cannot read the signature: {exc}") from exc
    try:
        hints = typing.get_type_hints(function, include_extras=False)
    except Exception as exc:  # a hint naming something that does not exist
        raise ToolSchemaError(f"{label}: cannot resolve the type hints: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    injected: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.name in INJECTED:
            injected.append(parameter.name)
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolSchemaError(f"{label}: *{parameter.name} cannot be a tool argument; name each argument")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise ToolSchemaError(
                f"{label}: parameter '{parameter.name}' is positional-only; tools take names"
            )
        if parameter.name not in hints:
            raise ToolSchemaError(f"{label}: parameter '{parameter.name}' has no type hint")
        where = f"{label}: parameter '{parameter.name}'"
        schema, convert = type_schema(hints[parameter.name], where)
        if docs and docs.get(parameter.name):
            schema = {**schema, "description": docs[parameter.name]}
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        elif _json_value(parameter.default):
            schema = {**schema, "default": parameter.default}
        properties[parameter.name] = schema
        if convert is not None:
            converters[parameter.name] = convert
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out, converters, injected


def type_schema(hint: Any, where: str) -> tuple[dict[str, Any], Callable[[Any], Any] | None]:
    """The JSON schema of one type hint, and how to turn the validated value into that type (or None)."""
    if hint is Any:
        return {}, None
    if hint is str:
        return {"type": "string"}, None
    if hint is bool:
        return {"type": "boolean"}, None
    if hint is int:
        return {"type": "integer"}, None
    if hint is float:
        return {"type": "number"}, None
    if hint is type(None):
        return {"type": "null"}, None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        if not all(_json_value(v) for v in values):
            raise ToolSchemaError(f"{where}: the values of enum {hint.__name__} are not JSON values")
        enum_type = hint
        return {"enum": values}, lambda value: enum_type(value)
    if typing.is_typeddict(hint):
        return _typeddict_schema(hint, where)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Literal:
        if not all(_json_value(v) for v in args):
            raise ToolSchemaError(f"{where}: Literal values must be JSON values")
        return {"enum": list(args)}, None
    if origin in (typing.Union, types.UnionType):
        options = [type_schema(arg, where) for arg in args]
        schemas = [schema for schema, _ in options]
        if all(convert is None for _, convert in options):
            return {"anyOf": schemas}, None
        converting = [
            convert for arg, (_, convert) in zip(args, options, strict=True) if arg is not type(None)
        ]
        if len(converting) == 1 and converting[0] is not None:
            only = converting[0]
            return {"anyOf": schemas}, lambda value: None if value is None else only(value)
        raise ToolSchemaError(f"{where}: a union of enums or typed dicts is not supported; use one type")
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple, set, frozenset):
        if origin is tuple and args and args[-1] is not Ellipsis:
            raise ToolSchemaError(f"{where}: fixed-length tuples are not supported; use list[...]")
        item_hint = args[0] if args else Any
        item_schema, item_convert = type_schema(item_hint, where)
        schema: dict[str, Any] = {"type": "array", "items": item_schema}
        if (origin or hint) in (set, frozenset):
            schema["uniqueItems"] = True
        container = origin or hint
        if item_convert is None and container is list:
            return schema, None
        convert_item = item_convert or (lambda value: value)
        return schema, lambda value: container(convert_item(v) for v in value)
    if origin is dict or hint is dict:
        if args and args[0] is not str:
            raise ToolSchemaError(f"{where}: dict keys must be str (JSON object keys are strings)")
        value_schema, value_convert = type_schema(args[1] if args else Any, where)
        schema = (
            {"type": "object", "additionalProperties": value_schema} if value_schema else {"type": "object"}
        )
        if value_convert is None:
            return schema, None
        return schema, lambda value: {k: value_convert(v) for k, v in value.items()}
    shown = getattr(hint, "__name__", None) or repr(hint)
    raise ToolSchemaError(
        f"{where}: type {shown} cannot become a JSON schema "
        "(use str, int, float, bool, list, dict, Literal, an Enum, a TypedDict, or X | None)"
    )


def _typeddict_schema(hint: Any, where: str) -> tuple[dict[str, Any], Callable[[Any], Any] | None]:
    hints = typing.get_type_hints(hint)
    required_keys = set(getattr(hint, "__required_keys__", hints))
    properties: dict[str, Any] = {}
    converters: dict[str, Callable[[Any], Any]] = {}
    for key, value_hint in hints.items():
        schema, convert = type_schema(value_hint, f"{where} ({hint.__name__}.{key})")
        properties[key] = schema
        if convert is not None:
            converters[key] = convert
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    needed = [key for key in hints if key in required_keys]
    if needed:
        out["required"] = needed
    if not converters:
        return out, None
    return out, lambda value: {k: converters[k](v) if k in converters else v for k, v in value.items()}


def _json_value(value: Any) -> bool:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_value(v) for k, v in value.items())
    return False


# ---------------------------------------------------------------------------
# The docstring
# ---------------------------------------------------------------------------

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?):\s*$"
)
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:\s]+\s+)?(\w+):\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(description, parameter docs)`` from a Google-style (``Args:``) or Sphinx-style (``:param x:``)
    docstring; the description is everything before the first section."""
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        heading = _SECTION.match(stripped)
        sphinx = _SPHINX_PARAM.match(stripped)
        if heading:
            section, current = heading.group(1), None
            continue
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if stripped.startswith(":"):
            section, current = "sphinx-other", None
            continue
        if section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params"):
            match = re.match(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            if match and not line.startswith("        "):
                current = match.group(1)
                params[current] = match.group(2).strip()
            elif current and stripped:
                params[current] = f"{params[current]} {stripped}".strip()
        elif section == "sphinx" and current and stripped:
            params[current] = f"{params[current]} {stripped}".strip()
    return "\n".join(description).strip(), params


# ---------------------------------------------------------------------------
# Calling the function
# ---------------------------------------------------------------------------


def _executor(
    function: Callable[..., Any], converters: dict[str, Callable[[Any], Any]], injected: list[str]
) -> Callable[..., Any]:
    """An ``execute(tool_call_id, params, signal, on_update, ctx)`` calling ``function`` by name."""

    def arguments(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> dict[str, Any]:
        given = dict(params)
        for key, convert in converters.items():
            if key in given:
                given[key] = convert(given[key])
        extra = {"ctx": ctx, "signal": signal, "on_update": on_update, "tool_call_id": tool_call_id}
        given.update({name: extra[name] for name in injected})
        return given

    if inspect.iscoroutinefunction(function):

        async def execute_async(
            tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
        ) -> Any:
            return tool_result(await function(**arguments(tool_call_id, params, signal, on_update, ctx)))

        return execute_async

    def execute(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> Any:
        value = function(**arguments(tool_call_id, params, signal, on_update, ctx))
        return value if inspect.isawaitable(value) else tool_result(value)

    return execute


def tool_result(value: Any) -> Any:
    """What a function tool returned, as ``execute`` may answer: a result, or text for the model."""
    from piko.data.messages import ImageContent
    from piko.data.messages import TextContent
    from piko.data.messages import ToolResult

    if value is None or isinstance(value, (str, ToolResult)):
        return value
    if isinstance(value, (TextContent, ImageContent)):
        return ToolResult(content=[value])
    if isinstance(value, list) and value and all(isinstance(v, (TextContent, ImageContent)) for v in value):
        return ToolResult(content=list(value))
    from piko.lib import jsonio

    return jsonio.dumps(value)
