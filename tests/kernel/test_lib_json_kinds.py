"""piko.lib.json_kinds: the JSON kinds the settings and models.json checks name."""

from __future__ import annotations

import pytest

from piko.lib.json_kinds import is_kind


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("boolean", [True, False], [0, 1, "true", None]),
        ("number", [0, 1.5, -3], [True, "1", None]),
        ("string", ["", "x"], [1, None, ["x"]]),
        ("string[]", [[], ["a", "b"]], [["a", 1], "a", None]),
        ("object", [{}, {"a": 1}], [[], None]),
        ("array", [[], [1, "a"]], [{}, "a"]),
        ("string|null", ["x", None], [1, False]),
    ],
)
def test_each_kind(kind: str, good: list[object], bad: list[object]) -> None:
    assert all(is_kind(kind, value) for value in good)
    assert not any(is_kind(kind, value) for value in bad)


def test_an_unknown_kind_fails_loudly() -> None:
    with pytest.raises(KeyError):
        is_kind("strnig", "x")
