"""Record classes: construction, defaults, frozen and positional forms, replace, comparison."""

from __future__ import annotations

import pytest

from piko.data.messages import TextContent
from piko.data.messages import Usage
from piko.lib.records import FrozenRecordError
from piko.lib.records import Record
from piko.lib.records import as_dict
from piko.lib.records import field
from piko.lib.records import is_record
from piko.lib.records import record_fields
from piko.lib.records import replace


class Options(Record):
    name: str
    count: int = 0
    tags: list[str] = field(factory=list)


class Point(Record, kw_only=False, frozen=True):
    x: int
    y: int = 0


class Node(Record, eq=False):
    label: str


def test_keyword_construction_defaults_and_factories() -> None:
    first, second = Options(name="a"), Options(name="b", count=2)
    assert (first.name, first.count, first.tags) == ("a", 0, [])
    assert second.count == 2
    first.tags.append("x")
    assert Options(name="c").tags == []  # each instance gets its own list
    assert [f.name for f in record_fields(Options)] == ["name", "count", "tags"]


def test_bad_arguments_raise_type_errors_naming_the_problem() -> None:
    with pytest.raises(TypeError, match="name"):
        Options()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        Options(name="a", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Options("a")  # type: ignore[misc]  # keyword-only by default


def test_positional_frozen_records_are_hashable_and_read_only() -> None:
    point = Point(1, 2)
    assert point == Point(x=1, y=2)
    assert hash(point) == hash(Point(1, 2))
    assert Point(3).y == 0
    with pytest.raises(FrozenRecordError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(TypeError, match="x"):
        Point()  # type: ignore[call-arg]


def test_eq_false_compares_identity() -> None:
    a, b = Node(label="n"), Node(label="n")
    assert a != b and a == a
    assert len({a, b}) == 2


def test_replace_copies_and_rejects_unknown_fields() -> None:
    original = Options(name="a", count=1)
    changed = replace(original, count=5)
    assert (original.count, changed.count, changed.name) == (1, 5, "a")
    assert as_dict(changed) == {"name": "a", "count": 5, "tags": []}
    with pytest.raises(TypeError, match="nope"):
        replace(original, nope=1)
    assert replace(Point(1, 2), y=7) == Point(1, 7)


def test_subclasses_add_fields_and_custom_init_still_works() -> None:
    class Extended(Options):
        extra: bool = False

    class Custom(Options):
        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)  # type: ignore[arg-type]
            self.seen = True

    assert Extended(name="e", extra=True).extra is True
    assert Options(name="plain").__class__ is Options  # the parent keeps its own __init__
    custom = Custom(name="c")
    assert custom.seen and custom.count == 0
    assert repr(Options(name="r")) == "Options(name='r', count=0, tags=[])"


def test_attrs_instances_of_the_data_model_are_records_too() -> None:
    """``replace``, ``as_dict`` and ``record_fields`` take the data model's attrs classes as well."""
    block = TextContent(text="a", text_signature="sig")
    changed = replace(block, text="b")
    assert (block.text, changed.text, changed.text_signature) == ("a", "b", "sig")
    assert type(changed) is TextContent
    with pytest.raises(TypeError, match="nope"):
        replace(block, nope=1)
    assert as_dict(changed) == {"text": "b", "text_signature": "sig", "extra": {}}
    assert [f.name for f in record_fields(Usage)][:2] == ["input", "output"]
    assert is_record(block) and is_record(Options(name="a"))
    assert not is_record({"text": "a"}) and not is_record(TextContent)
    with pytest.raises(TypeError, match="dict"):
        replace({"text": "a"}, text="b")  # type: ignore[type-var]
