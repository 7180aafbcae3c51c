"""The compiled-schema cache of tool argument validation stays bounded when tools come and go.

An SDK program makes many sessions in one process, each with tools of its own (new schema
objects); the cache kept every schema it ever saw, so memory grew with every session.
"""

from __future__ import annotations

from piko.engine import tool_validation


def test_the_validator_cache_is_bounded_and_still_validates() -> None:
    for n in range(tool_validation.VALIDATOR_CACHE_SIZE * 3):
        schema = {"type": "object", "properties": {f"p{n}": {"type": "integer"}}, "required": [f"p{n}"]}
        assert tool_validation.validate_tool_arguments("t", schema, {f"p{n}": "7"}) == {f"p{n}": 7}
    assert len(tool_validation._validators) <= tool_validation.VALIDATOR_CACHE_SIZE


def test_a_schema_in_use_is_compiled_once() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    first = tool_validation._validator(schema)
    for n in range(10):
        tool_validation._validator({"type": "object", "properties": {f"y{n}": {}}})
    assert tool_validation._validator(schema) is first
