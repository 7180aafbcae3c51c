"""Truncation helpers: JavaScript rounding in sizes, byte-exact tails, line cutting."""

from __future__ import annotations

import pytest

from piko.plugins.tools.truncate import byte_length
from piko.plugins.tools.truncate import format_size
from piko.plugins.tools.truncate import truncate_head
from piko.plugins.tools.truncate import truncate_line
from piko.plugins.tools.truncate import truncate_tail


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.0KB"),
        (1280, "1.3KB"),
        (51200, "50.0KB"),
        (1310720, "1.3MB"),
        (1153434, "1.1MB"),
    ],
)
def test_format_size_rounds_like_to_fixed(size: int, text: str) -> None:
    assert format_size(size) == text


def test_tail_keeps_a_character_boundary() -> None:
    result = truncate_tail("é" * 10, max_bytes=5)
    assert (result.content, result.last_line_partial, result.output_bytes) == ("éé", True, 4)


def test_head_never_returns_partial_lines() -> None:
    result = truncate_head("abc\ndef\nghi", max_bytes=9)
    assert (result.content, result.truncated_by, result.output_lines) == ("abc\ndef", "bytes", 2)


def test_truncate_line_and_byte_length() -> None:
    assert truncate_line("x" * 501) == ("x" * 500 + "... [truncated]", True)
    assert truncate_line("short") == ("short", False)
    assert byte_length("a\ud800") == 4
