"""msgspec's typed decoding of the message lines pi writes most, straight into the data model.

A session's user, assistant and tool-result message lines are decoded here by msgspec into
``Struct`` mirrors of the wire classes (messages tagged by ``role``, blocks by ``type``,
camelCase names), in C, then built into the attrs classes of :mod:`piko.data.messages`. The
mirrors are made from the attrs classes' own fields, types and defaults when this module is
imported, so a field added to the data model is decoded here too.
``benchmarks/bench_decoders.py`` measures the 100,000 message lines of a never-compacted
session: 0.97 s CPU through ``orjson.loads`` and cattrs (:mod:`piko.data.wire`), 0.70 s this
way (msgspec alone into its Structs: 0.40 s; ``orjson.loads`` alone, no objects made: 0.51 s).
Building the data model through hand-written constructors instead of the generic
:func:`_built` measured 0.60 s against 0.75 s; the generic one is kept, so that no field of the
data model can be forgotten in a conversion.

The mirrors accept a subset of what the cattrs path does: a key they do not declare (kept in
``extra`` there), a block of another type, a value of another JSON type or a role they do not
know is refused (``forbid_unknown_fields`` and strict types), and :func:`decode_message_line`
returns ``None`` for the caller to take the cattrs path. For every line msgspec accepts, the
object is equal to the one the cattrs path makes (``tests/session/test_fast_decode.py`` checks
this against every session fixture, field by field of the mirrors against the attrs classes).

msgspec costs about 5 ms to import (it brings ``decimal`` and ``typing_extensions``), so this
module is imported only where many messages are decoded at once
(:func:`piko.sessions.reading.decode_messages`); a short session never imports it.
"""

from __future__ import annotations

import functools
import operator
import types
import typing
from typing import Any

import attrs
import msgspec

from piko.data import messages as model

__all__ = ["MIRRORS", "decode_message_line"]

# the classes decoded here (a block's wire tag is its TYPE, a message's its ROLE)
_BLOCKS = (model.TextContent, model.ThinkingContent, model.ImageContent, model.ToolCall)
_ROLES = (model.UserMessage, model.AssistantMessage, model.ToolResultMessage)

MIRRORS: dict[type, type] = {}
"""Each data-model class decoded here and its ``Struct`` mirror, made from the class's fields."""
_MODELS: dict[type, type] = {}  # mirror -> data-model class
_NESTED: dict[type, tuple[str, ...]] = {}  # mirror -> its fields that hold mirrors (content, usage, cost)


def _translated(hint: Any) -> Any:
    """``hint`` with each data-model class in it replaced by its mirror."""
    if isinstance(hint, type) and hint in MIRRORS:
        return MIRRORS[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return functools.reduce(operator.or_, [_translated(a) for a in args])
    if origin is list:
        return list[_translated(args[0])]  # type: ignore[misc]
    return hint


def _holds_mirrors(hint: Any) -> bool:
    return (isinstance(hint, type) and hint in MIRRORS) or any(
        _holds_mirrors(a) for a in typing.get_args(hint)
    )


def _mirror(cls: type, tag_field: str | None = None, tag: str | None = None) -> type:
    """A ``Struct`` with ``cls``'s fields (``extra`` left out), types and defaults, camelCase on the
    wire, refusing keys it does not declare."""
    hints = typing.get_type_hints(cls)
    fields: list[tuple[str, Any, Any]] = []
    nested: list[str] = []
    for f in attrs.fields(cls):
        if f.name == "extra":
            continue
        default = f.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            factory = default.factory  # type: ignore[attr-defined]
            default = msgspec.field(default_factory=MIRRORS.get(factory, factory))
        fields.append((f.name, _translated(hints[f.name]), default))
        if _holds_mirrors(hints[f.name]):
            nested.append(f.name)
    options: dict[str, Any] = {"rename": "camel", "forbid_unknown_fields": True}
    if tag_field is not None:
        options.update(tag_field=tag_field, tag=tag)
    mirror = msgspec.defstruct(f"_{cls.__name__}", fields, **options)
    MIRRORS[cls], _MODELS[mirror], _NESTED[mirror] = mirror, cls, tuple(nested)
    return mirror


for _block in _BLOCKS:
    _mirror(_block, "type", _block.TYPE)
_mirror(model.Cost)
_mirror(model.Usage)
_messages = [_mirror(cls, "role", cls.ROLE) for cls in _ROLES]
# a message entry's line: only its message is read here (the tree fields come from the scan)
_Entry = msgspec.defstruct("_Entry", [("message", functools.reduce(operator.or_, _messages))])
_decode = msgspec.json.Decoder(_Entry).decode
_asdict = msgspec.structs.asdict


def _built(struct: Any) -> Any:
    """The data-model object of a decoded mirror, its nested mirrors built first."""
    kind = type(struct)
    values = _asdict(struct)
    for name in _NESTED[kind]:
        value = values[name]
        if type(value) is list:
            values[name] = [_built(b) for b in value]
        elif type(value) in _MODELS:
            values[name] = _built(value)
    return _MODELS[kind](**values)


def decode_message_line(line: bytes) -> Any | None:
    """The data-model message of a message entry's line, or ``None`` when the line is not one
    the mirrors take whole (then :mod:`piko.data.wire`'s path decides, as for any line)."""
    try:
        entry: Any = _decode(line)
        return _built(entry.message)
    except Exception:  # whatever msgspec does not take whole goes the cattrs way
        return None
