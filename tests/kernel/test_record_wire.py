"""``record_to_wire``: a typed record's camelCase JSON data, as the modes send it."""

from __future__ import annotations

from typing import Any

from piko.data.messages import Model
from piko.data.wire import record_to_wire
from piko.data.wire import to_wire
from piko.lib.records import Record
from piko.lib.records import field


class Inner(Record):
    cache_read: int = 0


class Outer(Record):
    session_file: str | None = None
    model: Model | None = None
    inner: Inner = field(factory=Inner)
    items: list[Any] = field(factory=list)
    hidden: str = field(default="secret", wire=False)


def test_fields_are_camel_cased_in_order_with_none_kept() -> None:
    assert list(record_to_wire(Outer())) == ["sessionFile", "model", "inner", "items"]
    assert record_to_wire(Outer())["sessionFile"] is None


def test_nested_records_lists_and_data_model_objects_are_converted() -> None:
    model = Model(id="m-1", provider="p", context_window=1000)
    data = record_to_wire(
        Outer(model=model, inner=Inner(cache_read=3), items=[Inner(cache_read=1), {"a_b": 1}])
    )
    assert data["model"] == to_wire(model) and data["model"]["contextWindow"] == 1000
    assert data["inner"] == {"cacheRead": 3}
    assert data["items"] == [{"cacheRead": 1}, {"a_b": 1}]  # plain dicts keep their keys
