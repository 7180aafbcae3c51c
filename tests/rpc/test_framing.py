"""Framing exactly as pi's: LF-only records, CR stripped, U+2028/U+2029 as data, JSON.parse's errors."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from rpc_client import sample

from piko.plugins.modes.rpc.jsonl import LineSplitter
from piko.plugins.modes.rpc.jsonl import ParseError
from piko.plugins.modes.rpc.jsonl import parse_line
from piko.plugins.modes.rpc.jsonl import serialize
from piko.plugins.modes.rpc.jsonl import v8_error
from piko.plugins.modes.rpc.tree import tree_json

# ---------------------------------------------------------------------------
# Splitting
# ---------------------------------------------------------------------------


def split(chunks: list[bytes]) -> list[str]:
    splitter = LineSplitter()
    out: list[str] = []
    for chunk in chunks:
        out += splitter.feed(chunk)
    return out + splitter.finish()


def test_records_end_at_lf_only() -> None:
    data = 'a\u2028b\u2029c\rd\r\n{"x":1}\n\nlast'.encode()
    assert split([data]) == ["a\u2028b\u2029c\rd", '{"x":1}', "", "last"]


def test_one_trailing_cr_is_stripped() -> None:
    assert split([b"a\r\r\n", b"b\r"]) == ["a\r", "b"]


def test_characters_split_across_reads_survive() -> None:
    data = "héllo 😀\n".encode()
    assert split([data[i : i + 1] for i in range(len(data))]) == ["héllo 😀"]


def test_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    assert split([b"ok\xff\xfe\n"]) == ["ok\ufffd\ufffd"]


def test_nothing_pending_gives_no_last_record() -> None:
    assert split([b"a\n"]) == ["a"]
    assert split([]) == []


@settings(max_examples=300)
@given(
    records=st.lists(st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)))),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000)),
)
def test_any_chunking_gives_the_same_records(records: list[str], cuts: list[int]) -> None:
    data = "".join(r + "\n" for r in records).encode()
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    expected = [r[:-1] if r.endswith("\r") else r for r in records]
    assert split(chunks) == expected


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def test_serialize_is_json_stringify() -> None:
    assert (
        serialize({"a": "x\u2028y", "b": 1.0, "c": [None, True]})
        == '{"a":"x\u2028y","b":1,"c":[null,true]}\n'.encode()
    )
    assert serialize({"s": "\ud800"}) == b'{"s":"\\ud800"}\n'
    assert serialize({"small": 1e-7, "big": 1e21}) == b'{"small":1e-7,"big":1e+21}\n'


def test_serialize_keeps_what_json_cannot_represent_as_text() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    assert json.loads(serialize({"details": Thing(), "raw": b"\xff"})) == {
        "details": "a thing",
        "raw": "\ufffd",
    }


# ---------------------------------------------------------------------------
# Parsing: Node's own messages (recorded from node v20 in tests/fixtures/pi_rpc_samples)
# ---------------------------------------------------------------------------


def test_parse_errors_read_as_node_words_them() -> None:
    oracle = sample("json_parse_errors.json", "")
    assert len(oracle["cases"]) > 500
    for case in oracle["cases"]:
        if case["ok"]:
            assert v8_error(case["text"]) is None, case
            continue
        try:
            parse_line(case["text"])
        except ParseError as exc:
            assert str(exc) == case["error"], case
        else:
            raise AssertionError(f"accepted {case['text']!r}")


def test_parse_accepts_what_json_parse_accepts() -> None:
    assert parse_line('{"id":"\\ud800","n":123456789012345678901234567890}') == {
        "id": "\ud800",
        "n": 123456789012345678901234567890,
    }
    assert parse_line(' \t{"a":[]}\r\n ') == {"a": []}


def test_deep_nesting_is_refused_not_crashed() -> None:
    deep = "[" * 200_000 + "]" * 200_000
    assert v8_error(deep) is None  # valid JSON, only too deep to build here
    with pytest.raises(
        ParseError, match=r"^JSON is nested too deeply \(piko reads up to about 1000 levels\)$"
    ):
        parse_line(deep)
    assert v8_error("[" * 200_000) == "Unexpected end of JSON input"


@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_too_long_to_read_is_named_with_its_position(sign: str) -> None:
    line = '{"type":"get_state","id":' + sign + "9" * 5000 + "}"
    with pytest.raises(ParseError) as caught:
        parse_line(line)
    assert str(caught.value) == (
        "Number too long in JSON at position 25 (5000 digits; piko reads integers of up to 4300 digits)"
    )
    # a long integer inside a string, and one within the limit, are fine
    assert parse_line('{"id":"' + "9" * 5000 + '"}')["id"] == "9" * 5000
    assert parse_line('{"id":' + sign + "1" + "0" * 400 + "}")["id"] == int(sign + "1" + "0" * 400)


def test_tree_json_has_no_depth_limit() -> None:
    class Entry:
        def __init__(self, n: int) -> None:
            self.raw = {"type": "message", "id": f"e{n}"}

    class Node:
        def __init__(self, n: int) -> None:
            self.entry, self.children, self.label, self.label_timestamp = Entry(n), [], None, None

    root = node = Node(0)
    for n in range(1, 20_000):
        child = Node(n)
        node.children.append(child)
        node = child
    node.label, node.label_timestamp = "end", "2026-01-01T00:00:00.000Z"
    text = tree_json([root]).decode()
    assert v8_error(text) is None
    assert text.startswith('[{"entry":{"type":"message","id":"e0"},"children":[{"entry"')
    assert text.endswith(
        '"children":[],"label":"end","labelTimestamp":"2026-01-01T00:00:00.000Z"}' + "]}" * 19_999 + "]"
    )
    small = Node(1)
    small.children = [Node(2), Node(3)]
    assert json.loads(tree_json([small, Node(4)])) == [
        {"entry": {"type": "message", "id": "e1"}, "children": [
            {"entry": {"type": "message", "id": "e2"}, "children": []},
            {"entry": {"type": "message", "id": "e3"}, "children": []},
        ]},
        {"entry": {"type": "message", "id": "e4"}, "children": []},
    ]  # fmt: skip


# ---------------------------------------------------------------------------
# Over the wire
# ---------------------------------------------------------------------------


def test_framing_over_a_real_pipe(rpc: Any) -> None:
    process = rpc()
    process.send_raw('{"id":"crlf","type":"get_state"}\r\n')
    assert process.wait_for(lambda r: r.get("id") == "crlf")["success"]
    # a record written in pieces
    process.send_raw('{"id":"pie')
    time.sleep(0.05)
    process.send_raw('ces","type":"get_state"}\n')
    assert process.wait_for(lambda r: r.get("id") == "pieces")["success"]
    # U+2028 inside a string is data, in and out
    process.send_raw('{"id":"sep","type":"set_session_name","name":"a\u2028b"}\n')
    info = process.wait_for(lambda r: r.get("type") == "session_info_changed")
    assert info["name"] == "a\u2028b"
    assert any("\u2028".encode() in line for line in process.raw_lines)
    # empty and broken records each get a parse error
    process.send_raw(b"\n   \n\xff\xfe\n")
    errors = [process.wait_for(lambda r: r.get("command") == "parse")["error"] for _ in range(3)]
    assert errors == [
        "Failed to parse command: Unexpected end of JSON input",
        "Failed to parse command: Unexpected end of JSON input",
        "Failed to parse command: Unexpected token '\ufffd', \"\ufffd\ufffd\" is not valid JSON",
    ]
    process.send_raw("[1,2]\n")
    assert process.wait_for(lambda r: r.get("command") == "parse")["error"].startswith(
        "Failed to parse command:"
    )
    # the last record needs no LF
    process.send_raw('{"id":"last","type":"get_state"}')
    assert process.close() == 0
    assert process.records[-1]["id"] == "last"
    assert all(line and not line.endswith(b"\r") for line in process.raw_lines)
