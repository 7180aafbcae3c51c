"""Light record classes: declared like attrs classes, with no code generated until first use.

The kernel defines many small classes (events, registry definitions, resources, options) that
all load at start-up; attrs builds each with generated methods (about 0.35 ms a class), which
start-up pays in full. A :class:`Record` subclass reads its annotations once and keeps them in
``FIELDS``; its ``__init__`` is generated the first time an instance is made, so a class that is
never instantiated costs almost nothing and one that is made often runs as fast as attrs'.

Construction is keyword-only by default (``class Options(Record)``); ``kw_only=False`` allows
positional arguments in field order, ``frozen=True`` makes instances read-only and hashable, and
``eq=False`` keeps identity comparison. :func:`field` gives factories and keeps fields off the
wire; :func:`replace` is ``attrs.evolve`` for records. Type checkers see the generated
``__init__`` through :func:`typing.dataclass_transform`.

The data model's messages and blocks are attrs classes (cattrs converts them); :func:`replace`,
:func:`as_dict`, :func:`record_fields` and :func:`is_record` take their instances as well, so no
caller needs to tell the two kinds apart.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any
from typing import ClassVar
from typing import TypeVar
from typing import dataclass_transform

_NOTHING: Any = object()

T = TypeVar("T")


class FrozenRecordError(AttributeError):
    """Raised when a field of a frozen record is assigned."""


class FieldSpec:
    """One field: its default or factory, and whether it is written on the wire."""

    __slots__ = ("default", "factory", "name", "wire")

    def __init__(
        self, default: Any = _NOTHING, factory: Callable[[], Any] | None = None, wire: bool = True
    ) -> None:
        self.name = ""
        self.default = default
        self.factory = factory
        self.wire = wire


def field(*, default: Any = _NOTHING, factory: Callable[[], Any] | None = None, wire: bool = True) -> Any:
    """A field with a factory (``field(factory=list)``) or kept off the wire (``wire=False``)."""
    return FieldSpec(default, factory, wire)


def _compile_init(cls: type[Record]) -> Callable[..., None]:
    """Generate ``__init__`` for ``cls``: one assignment per field, defaults bound by name."""
    namespace: dict[str, Any] = {"_NOTHING": _NOTHING, "_missing": _missing}
    positional = not cls._KW_ONLY
    params: list[str] = []
    checks: list[str] = []
    assignments: list[str] = []
    for index, spec in enumerate(cls.FIELDS):
        name = spec.name
        if spec.factory is not None:
            namespace[f"_f{index}"] = spec.factory
            params.append(f"{name}=_NOTHING")
            assignments.append(f"    _d[{name!r}] = _f{index}() if {name} is _NOTHING else {name}")
            continue
        if spec.default is not _NOTHING:
            namespace[f"_v{index}"] = spec.default
            params.append(f"{name}=_v{index}")
        elif positional:
            # in a def a required parameter may not follow defaulted ones: keep field order by
            # defaulting it to a marker and checking it in the body
            params.append(f"{name}=_NOTHING")
            checks.append(f"    if {name} is _NOTHING: _missing(_self_, {name!r})")
        else:
            params.append(name)
        assignments.append(f"    _d[{name!r}] = {name}")
    if not positional and params:
        params.insert(0, "*")
    body = [*checks, "    _d = _self_.__dict__", *assignments]
    source = f"def __init__(_self_, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(compile(source, f"<record {cls.__qualname__}.__init__>", "exec"), namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _missing(obj: Any, name: str) -> None:
    raise TypeError(f"{type(obj).__name__}() missing argument '{name}'")


def _first_init(self: Record, *args: Any, **kwargs: Any) -> None:
    """Each record class starts with this ``__init__``: it compiles the real one and calls it."""
    cls = type(self)
    if cls.__dict__.get("__init__") is _first_init:
        init = _compile_init(cls)
        cls.__init__ = init  # type: ignore[method-assign]
    else:  # a subclass with its own __init__ called super().__init__(): compile and keep per class
        init = cls.__dict__.get("_record_init") or _compile_init(cls)
        type.__setattr__(cls, "_record_init", init)
    init(self, *args, **kwargs)


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenRecordError(f"{type(self).__name__}.{name} cannot be assigned: the record is frozen")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenRecordError(f"{type(self).__name__}.{name} cannot be deleted: the record is frozen")


def _frozen_hash(self: Any) -> int:
    return hash((type(self), *(getattr(self, f.name) for f in self.FIELDS)))


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
class Record:
    """Base of record classes: fields come from the class annotations, in order."""

    FIELDS: ClassVar[tuple[FieldSpec, ...]] = ()
    _KW_ONLY: ClassVar[bool] = True

    def __init_subclass__(
        cls, *, kw_only: bool | None = None, frozen: bool = False, eq: bool = True, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        fields = {f.name: f for f in cls.FIELDS}
        for name, annotation in inspect.get_annotations(cls).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = cls.__dict__.get(name, _NOTHING)
            spec = value if isinstance(value, FieldSpec) else FieldSpec(default=value)
            spec.name = name
            if isinstance(value, FieldSpec):
                delattr(cls, name)  # instances always set it; the class keeps no placeholder
            fields[name] = spec
        cls.FIELDS = tuple(fields.values())
        if kw_only is not None:
            cls._KW_ONLY = kw_only
        if "__init__" not in cls.__dict__:
            cls.__init__ = _first_init  # type: ignore[method-assign,assignment]
        if frozen:
            cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign]
            cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign]
            if eq:
                cls.__hash__ = _frozen_hash  # type: ignore[method-assign,assignment]
        if not eq:
            cls.__eq__ = object.__eq__  # type: ignore[method-assign]
            cls.__hash__ = object.__hash__  # type: ignore[method-assign,assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, like attrs' default


def _attrs_fields(cls: type) -> tuple[Any, ...] | None:
    """The fields of an attrs class (the data model's messages and blocks), else ``None``."""
    fields = getattr(cls, "__attrs_attrs__", None)
    return None if fields is None else tuple(fields)


def record_fields(cls_or_obj: Any) -> tuple[Any, ...]:
    """The fields of a record or attrs class or instance (each has ``name`` and ``default``)."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    fields = getattr(cls, "FIELDS", None)
    if fields is None:
        fields = _attrs_fields(cls) or ()
    return tuple(fields)


def is_record(obj: Any) -> bool:
    """Whether ``obj`` is a record instance: a :class:`Record` or an instance of an attrs class."""
    return isinstance(obj, Record) or (not isinstance(obj, type) and _attrs_fields(type(obj)) is not None)


def replace(obj: T, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes`` applied: a :class:`Record`, or an attrs instance."""
    if not isinstance(obj, Record):
        if not is_record(obj):
            raise TypeError(f"replace() takes a record, not {type(obj).__name__}")
        import attrs

        missing = sorted(set(changes) - {f.name for f in record_fields(obj)})
        if missing:
            raise TypeError(f"{type(obj).__name__} has no fields {missing}")
        return attrs.evolve(obj, **changes)  # type: ignore[misc,no-any-return,unused-ignore]
    values = {f.name: obj.__dict__[f.name] for f in obj.FIELDS}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no fields {sorted(unknown)}")
    values.update(changes)
    new = object.__new__(type(obj))
    new.__dict__.update(values)
    return new


def as_dict(obj: Any) -> dict[str, Any]:
    """The fields of a record or attrs instance as a dict (shallow, like ``attrs.asdict(recurse=False)``)."""
    if isinstance(obj, Record):
        return {f.name: obj.__dict__[f.name] for f in obj.FIELDS}
    return {f.name: getattr(obj, f.name) for f in record_fields(obj)}
