"""piko.lib.text: UTF-16 lengths, line endings, JavaScript whitespace and key case as pi's code sees them."""

from __future__ import annotations

import pytest

from piko.lib.text import JS_WHITESPACE
from piko.lib.text import camel
from piko.lib.text import js_length
from piko.lib.text import normalize_newlines
from piko.lib.text import snake


def test_lengths_line_endings_and_trim() -> None:
    assert (js_length("abc"), js_length("😀"), js_length("日本"), js_length("\ud800")) == (3, 2, 2, 1)
    assert normalize_newlines("a\r\nb\rc\n") == "a\nb\nc\n"
    assert "\u3000 x\u2028\ufeff".strip(JS_WHITESPACE) == "x"
    assert "\u200b".strip(JS_WHITESPACE) == "\u200b"  # zero-width space is not whitespace to JavaScript


@pytest.mark.parametrize(
    ("snake_name", "camel_name"),
    [("tool_call_id", "toolCallId"), ("name", "name"), ("thinking_level_map", "thinkingLevelMap")],
)
def test_key_case_round_trips(snake_name: str, camel_name: str) -> None:
    assert camel(snake_name) == camel_name
    assert snake(camel_name) == snake_name
    assert snake(snake_name) == snake_name
