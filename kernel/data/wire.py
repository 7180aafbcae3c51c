"""JSON wire form of the data model: camelCase keys exactly as pi writes them, lossless both ways.

``to_wire(obj)`` turns a message, block, usage or model into plain JSON data; ``message_from_wire``,
``block_from_wire`` and ``model_from_wire`` read it back. Unknown keys land in the object's
``extra`` and are written out again after the known ones; optional fields that are ``None`` are
omitted, as pi omits undefined fields. Reading goes through one cattrs converter with cattrs'
generated per-class functions, so a 100,000-entry session structures quickly.

Writing is hand-generated (one ``unstructure`` per class, compiled from its fields) rather than
cattrs' ``make_dict_unstructure_fn``: pi's format needs the ``type``/``role`` tag first, unknown
keys from ``extra`` after the known ones, ``None`` fields left out and integral floats written as
JavaScript writes them (``0`` not ``0.0``), which cattrs' functions would need a second pass for.
Even without those, cattrs' functions are slower: ``benchmarks/bench_wire.py`` writes 20,000
assistant messages in 36 ms here against cattrs' 45 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import Cost
from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.data.messages import Model
from piko.data.messages import ModelCost
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResult
from piko.data.messages import ToolResultMessage
from piko.data.messages import UnknownMessage
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.lib.records import Record
from piko.lib.text import camel

__all__ = [
    "block_from_wire",
    "blocks_from_wire",
    "camel",
    "get_converter",
    "jsonable",
    "message_from_wire",
    "messages_from_wire",
    "model_from_wire",
    "record_to_wire",
    "to_wire",
]

_converter: Any = None


def get_converter() -> Any:
    """The shared ``cattrs.Converter``, made on first use (cattrs costs start-up time)."""
    global _converter
    if _converter is None:
        import cattrs

        converter = cattrs.Converter()
        # the data-model classes convert through the generated functions above
        converter.register_unstructure_hook_func(
            lambda cls: _registration(cls) is not None, lambda obj: _unstructurers[type(obj)](obj)
        )
        converter.register_structure_hook_func(
            lambda cls: _registration(cls) is not None, lambda data, cls: _structurers[cls](data)
        )
        _converter = converter
    return _converter


def __getattr__(name: str) -> Any:
    if name == "converter":
        return get_converter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _number(value: Any) -> Any:
    """Write integral floats as integers, as JavaScript does (0.0 -> 0)."""
    if type(value) is float and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


_BLOCK_TYPES: dict[str, type] = {
    "text": TextContent,
    "thinking": ThinkingContent,
    "image": ImageContent,
    "toolCall": ToolCall,
}
_MESSAGE_ROLES: dict[str, type] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "bashExecution": BashExecutionMessage,
    "custom": CustomMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
}

# Fields written even when they hold their default value of None.
_ALWAYS_WRITTEN: dict[type, set[str]] = {BashExecutionMessage: {"exit_code"}}
# Fields never written: a tool result's error flag travels beside it (``isError``), not inside.
_NEVER_WRITTEN: dict[type, set[str]] = {ToolResult: {"is_error"}}


class _LazyTable(dict):  # type: ignore[type-arg]
    """Converters per class, generated the first time a class is converted (cheap start-up)."""

    def __init__(self, build: Callable[[type, str | None, str | None], Callable[..., Any]]) -> None:
        super().__init__()
        self.build = build

    def __missing__(self, cls: type) -> Any:
        spec = _registration(cls)
        if spec is None:
            raise KeyError(cls)
        for dependency in _DEPENDENCIES.get(cls, ()):
            self[dependency]
        function = self.build(cls, *spec)
        dict.__setitem__(self, cls, function)
        return function

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


def _content_from_wire(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [block_from_wire(b) for b in value]
    return value


def _content_to_wire(value: Any) -> Any:
    if isinstance(value, list):
        return [to_wire(b) for b in value]
    return value


def _identity(value: Any, _type: Any = None) -> Any:
    return value


def _compile_unstructure(cls: type, fields: list[Any], tag_key: str | None, tag_value: str | None) -> Any:
    """Generate ``unstructure(obj) -> dict`` that writes keys in field order, as pi does."""
    lines = ["def unstructure(obj):"]
    lines.append(f"    out = {{{tag_key!r}: {tag_value!r}}}" if tag_key else "    out = {}")
    namespace: dict[str, Any] = {
        "_content_to_wire": _content_to_wire,
        "_number": _number,
        "_unstructurers": _unstructurers,
    }
    always = _ALWAYS_WRITTEN.get(cls, set())
    never = _NEVER_WRITTEN.get(cls, set())
    for f in fields:
        if f.name in never:
            continue
        key = camel(f.name)
        type_name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if f.name == "content":
            expr = "_content_to_wire(v)"
        elif type_name in ("float",):
            expr = "_number(v)"
        elif type_name in _NESTED_NAMES:
            expr = f"_unstructurers[{type_name}](v)"
            namespace[type_name] = _NESTED_NAMES[type_name]
        else:
            expr = "v"
        lines.append(f"    v = obj.{f.name}")
        if f.default is None and f.name not in always:
            lines.append(f"    if v is not None: out[{key!r}] = {expr}")
        else:
            lines.append(f"    out[{key!r}] = {expr}")
    if any(f.name == "extra" for f in attrs.fields(cls)):
        lines.append("    if obj.extra:")
        lines.append("        for k, x in obj.extra.items():")
        lines.append("            if k not in out: out[k] = x")
    lines.append("    return out")
    exec("\n".join(lines), namespace)
    return namespace["unstructure"]


def _build_unstructure(
    cls: type, tag_key: str | None, tag_value: str | None
) -> Callable[[Any], dict[str, Any]]:
    fields = [f for f in attrs.fields(cls) if f.name != "extra"]
    return _compile_unstructure(cls, fields, tag_key, tag_value)  # type: ignore[no-any-return]


def _build_structure(
    cls: type, tag_key: str | None, tag_value: str | None
) -> Callable[[dict[str, Any]], Any]:
    """Reading needs cattrs, imported here: writing (``to_wire``) never pays for it."""
    from cattrs.gen import make_dict_structure_fn
    from cattrs.gen import override

    fields = [f for f in attrs.fields(cls) if f.name != "extra"]
    known = {camel(f.name) for f in fields}
    if tag_key:
        known.add(tag_key)
    overrides: dict[str, Any] = {"extra": override(omit=True)}
    for f in fields:
        if f.name == "content":
            overrides[f.name] = override(rename="content", struct_hook=lambda v, _t: _content_from_wire(v))
        elif f.name in (
            "details",
            "structured_content",
            "arguments",
            "headers",
            "compat",
            "thinking_level_map",
            "input",
        ):
            overrides[f.name] = override(rename=camel(f.name), struct_hook=_identity)
        else:
            overrides[f.name] = override(rename=camel(f.name))
    base_st: Any = make_dict_structure_fn(cls, get_converter(), **overrides)
    keeps_extra = any(f.name == "extra" for f in attrs.fields(cls))

    def structure(data: dict[str, Any]) -> Any:
        obj = base_st(data, cls)
        if keeps_extra and (len(data) > len(known) or not known.issuperset(data)):
            obj.extra = {k: v for k, v in data.items() if k not in known}
        return obj

    return structure


_unstructurers: dict[type, Callable[[Any], dict[str, Any]]] = _LazyTable(_build_unstructure)
_structurers: dict[type, Callable[[dict[str, Any]], Any]] = _LazyTable(_build_structure)


_NESTED_NAMES: dict[str, type] = {"Cost": Cost, "Usage": Usage, "ModelCost": ModelCost}

# What to generate for each class (its tag key and value), and which classes it nests.
_REGISTRATION: dict[type, tuple[str | None, str | None]] = {
    **{cls: (None, None) for cls in (Cost, Usage, ModelCost, Model, ToolResult)},
    **{cls: ("type", tag) for tag, cls in _BLOCK_TYPES.items()},
    **{cls: ("role", tag) for tag, cls in _MESSAGE_ROLES.items()},
}


def _registration(cls: type) -> tuple[str | None, str | None] | None:
    """How ``cls`` is written: as registered above, or, for a subclass of a class registered
    there, as that class (a block still streaming, :mod:`piko.data.stream_blocks`, is written as
    the block it will settle into); ``None`` for a class of another kind."""
    spec = _REGISTRATION.get(cls)
    if spec is None and isinstance(cls, type):
        base = next((b for b in cls.__mro__[1:] if b in _REGISTRATION), None)
        if base is not None:
            spec = _REGISTRATION[cls] = _REGISTRATION[base]
    return spec


_DEPENDENCIES: dict[type, tuple[type, ...]] = {
    Usage: (Cost,),
    AssistantMessage: (Usage,),
    Model: (ModelCost,),
}


def to_wire(obj: Any) -> Any:
    """Plain JSON data for a data-model object (lists and dicts are converted element-wise)."""
    fn = _unstructurers.get(type(obj))
    if fn is not None:
        return fn(obj)
    own = getattr(obj, "to_wire", None)
    if callable(own):
        return own()
    if isinstance(obj, UnknownMessage):
        return {"role": obj.role, **obj.extra}
    if isinstance(obj, list):
        return [to_wire(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_wire(v) for k, v in obj.items()}
    if attrs.has(type(obj)):
        return get_converter().unstructure(obj)
    return obj


def jsonable(value: Any) -> Any:
    """``value`` with what JSON cannot hold made plain, as ``JSON.stringify`` never fails: data-model
    objects by their wire form, tuples and sets as lists, bytes as UTF-8 text, keys as strings,
    anything else as its string."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        wired = to_wire(value)
    except Exception:  # an object whose own to_wire fails: its text
        return str(value)
    return str(value) if wired is value else jsonable(wired)


def record_to_wire(record: Record) -> dict[str, Any]:
    """The camelCase JSON data of a typed record: every field in declaration order, ``None``
    included (a caller leaves out what its wire shape omits); nested records, lists and
    data-model objects converted."""
    return {camel(f.name): _record_value(getattr(record, f.name)) for f in type(record).FIELDS if f.wire}


def _record_value(value: Any) -> Any:
    if isinstance(value, Record):
        return record_to_wire(value)
    if isinstance(value, list):
        return [_record_value(v) for v in value]
    return to_wire(value)


def block_from_wire(data: Any) -> Any:
    """A content block from its JSON form; an unknown block type stays a dict."""
    if not isinstance(data, dict):
        return data
    cls = _BLOCK_TYPES.get(data.get("type", ""))
    if cls is None:
        return data
    return _structurers[cls](data)


def blocks_from_wire(data: list[Any]) -> list[Any]:
    """Content blocks from their JSON form."""
    return [block_from_wire(b) for b in data]


def message_from_wire(data: dict[str, Any]) -> Any:
    """An agent message from its JSON form; an unknown role becomes an ``UnknownMessage``."""
    role = data.get("role", "")
    cls = _MESSAGE_ROLES.get(role)
    if cls is None:
        return UnknownMessage(role=role, extra={k: v for k, v in data.items() if k != "role"})
    return _structurers[cls](data)


def messages_from_wire(data: list[dict[str, Any]]) -> list[Any]:
    """Agent messages from their JSON form."""
    return [message_from_wire(m) for m in data]


def model_from_wire(data: dict[str, Any]) -> Model:
    """A model from its JSON form (models.json / catalog / RPC)."""
    return _structurers[Model](data)  # type: ignore[no-any-return]


def from_wire(cls: type, data: dict[str, Any]) -> Any:
    """Any registered data-model class from its JSON form."""
    return _structurers[cls](data)


def error_result(text: str) -> ToolResult:
    """A tool result carrying an error text (pi sends ``details: {}`` with it)."""
    return ToolResult(content=[TextContent(text=text)], details={}, is_error=True)


def normalize_tool_result(value: Any) -> ToolResult:
    """Accept ``ToolResult``, a dict (``content``/``details``/``structuredContent``/``isError``) or a plain string."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult(content=[])
    if isinstance(value, str):
        return ToolResult(content=[TextContent(text=value)])
    if isinstance(value, dict):
        content = value.get("content") or []
        if isinstance(content, str):
            content = [TextContent(text=content)]
        else:
            content = blocks_from_wire(list(content))
        is_error = value.get("is_error", value.get("isError", False))
        structured = value.get("structured_content", value.get("structuredContent"))
        return ToolResult(
            content=content,
            details=value.get("details"),
            structured_content=structured,
            is_error=bool(is_error),
        )
    raise TypeError(f"a tool returned {type(value).__name__}; expected ToolResult, dict or str")
