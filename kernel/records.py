"""Light record classes for events: declared like attrs classes, built without generating code.

Event classes are many (one per event) and all defined when the kernel loads; attrs builds each
with generated methods (about 0.3 ms a class), which start-up pays in full. A :class:`Record`
subclass reads its annotations once, keeps them in ``FIELDS``, and shares one ``__init__``,
``__repr__`` and ``__eq__``. Keyword-only construction, defaults and factories work as with
``attrs.define(kw_only=True)``; :func:`field` marks factories and fields kept off the wire.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar

_NOTHING: Any = object()


class FieldSpec:
    """One field: its default or factory, and whether it is written on the wire."""

    __slots__ = ("default", "factory", "name", "wire")

    def __init__(self, default: Any = _NOTHING, factory: Callable[[], Any] | None = None, wire: bool = True) -> None:
        self.name = ""
        self.default = default
        self.factory = factory
        self.wire = wire


def field(*, default: Any = _NOTHING, factory: Callable[[], Any] | None = None, wire: bool = True) -> Any:
    """A field with a factory (``field(factory=list)``) or kept off the wire (``wire=False``)."""
    return FieldSpec(default, factory, wire)


class Record:
    """Base of event records: fields come from the class annotations, in order."""

    FIELDS: ClassVar[tuple[FieldSpec, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
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

    def __init__(self, **kwargs: Any) -> None:
        for spec in self.FIELDS:
            name = spec.name
            if name in kwargs:
                value = kwargs.pop(name)
            elif spec.factory is not None:
                value = spec.factory()
            elif spec.default is _NOTHING:
                raise TypeError(f"{type(self).__name__}() missing keyword argument '{name}'")
            else:
                value = spec.default
            self.__dict__[name] = value
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments {sorted(kwargs)}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, like attrs' default


def record_fields(cls_or_obj: Any) -> tuple[FieldSpec, ...]:
    """The fields of a record class or instance."""
    return tuple(getattr(cls_or_obj, "FIELDS", ()))
