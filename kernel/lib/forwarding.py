"""Read-only attributes that answer the same-named attribute of an object the instance holds (delegation, one line each)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any
from typing import Generic
from typing import TypeVar
from typing import overload

T = TypeVar("T")


class Forwarded(Generic[T]):
    """A read-only attribute read from the object at ``via`` (an attribute path such as
    ``"_engine"`` or ``"agent.state"``), under the name it is declared with::

        class View:
            session_id: Forwarded[str] = Forwarded("_manager", "The session's id.")

    ``View().session_id`` is ``View()._manager.session_id``, read each time; ``doc`` is its
    docstring (what the API reference shows, as for a property).
    """

    def __init__(self, via: str, doc: str | None = None) -> None:
        self.via = via
        self.__doc__ = doc
        self.name = ""
        self._holder: Callable[[Any], Any] = operator.attrgetter(via)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Forwarded[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Forwarded[T] | T:
        if instance is None:
            return self
        value: T = getattr(self._holder(instance), self.name)
        return value

    def __set__(self, instance: object, value: Any) -> None:
        raise AttributeError(f"{type(instance).__name__}.{self.name} is read-only")
