"""The edit tool's text machinery: the line diff, fuzzy normalization, argument repair, abort."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from tool_harness import aborted_signal
from tool_harness import run_tool

from piko.plugins.tools.edit import prepare_arguments
from piko.plugins.tools.edit_diff import diff_lines
from piko.plugins.tools.edit_diff import generate_diff
from piko.plugins.tools.edit_diff import normalize_for_fuzzy_match

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "a", "b", "\n"]), max_size=12).map("".join)


def _lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


def _tokens(text: str) -> list[str]:
    return text.splitlines(keepends=True)


@settings(max_examples=300, deadline=None)
@given(old=LINES, new=LINES)
def test_diff_reconstructs_both_texts_minimally(old: str, new: str) -> None:
    parts = diff_lines(old, new)
    assert "".join(p.value for p in parts if not p.added) == old
    assert "".join(p.value for p in parts if not p.removed) == new
    changed = sum(p.count for p in parts if p.added or p.removed)
    a, b = _tokens(old), _tokens(new)
    assert changed == len(a) + len(b) - 2 * _lcs(a, b)


@settings(max_examples=100, deadline=None)
@given(old=LINES, new=LINES)
def test_diff_fallback_for_pathological_inputs_still_reconstructs(old: str, new: str) -> None:
    parts = diff_lines(old, new, max_steps=1)
    assert "".join(p.value for p in parts if not p.added) == old
    assert "".join(p.value for p in parts if not p.removed) == new


def test_huge_rewrite_finishes(tmp_path: Path) -> None:
    old = "".join(f"old {i}\n" for i in range(20000))
    new = "".join(f"new {i}\n" for i in range(20000))
    diff, first = generate_diff(old, new)
    assert first == 1
    assert diff.startswith("-    1 old 0\n-    2 old 1\n-    3 old 2\n-    4 old 3")


def test_fuzzy_normalization_follows_javascript_trim_end() -> None:
    assert normalize_for_fuzzy_match("a\ufeff\u3000 \nb\x1c") == "a\nb\x1c"
    assert (
        normalize_for_fuzzy_match("\u201cq\u201d \u2018s\u2019 \u2013\u2212 x\u00a0y") == "\"q\" 's' -- x y"
    )
    assert normalize_for_fuzzy_match("\uff21\u2460") == "A1"  # NFKC


def test_prepare_arguments() -> None:
    assert prepare_arguments({"path": "p", "oldText": "a", "newText": "b"}) == {
        "path": "p",
        "edits": [{"oldText": "a", "newText": "b"}],
    }
    assert prepare_arguments({"path": "p", "edits": '[{"oldText": "a", "newText": "b"}]'})["edits"] == [
        {"oldText": "a", "newText": "b"}
    ]
    assert prepare_arguments({"path": "p", "edits": "not json"}) == {"path": "p", "edits": "not json"}
    assert prepare_arguments({"path": "p", "oldText": "a"}) == {"path": "p", "oldText": "a"}
    assert prepare_arguments(None) is None


def test_legacy_arguments_work_through_execute_directly(work: Path) -> None:
    (work / "t.txt").write_text("hello", encoding="utf-8")
    run = run_tool("edit", {"path": "t.txt", "oldText": "hello", "newText": "bye"}, work, validate=False)
    assert run.text == "Successfully replaced 1 block(s) in t.txt."
    assert (work / "t.txt").read_text(encoding="utf-8") == "bye"


def test_aborted_edit_leaves_the_file(work: Path) -> None:
    (work / "t.txt").write_text("hello", encoding="utf-8")
    run = run_tool(
        "edit",
        {"path": "t.txt", "edits": [{"oldText": "hello", "newText": "x"}]},
        work,
        signal=aborted_signal(),
    )
    assert run.text == "Operation aborted"
    assert (work / "t.txt").read_text(encoding="utf-8") == "hello"


def test_invalid_bytes_survive_as_replacement_characters(work: Path) -> None:
    (work / "b.txt").write_bytes(b"keep\xff\nchange me\n")
    run = run_tool("edit", {"path": "b.txt", "edits": [{"oldText": "change me", "newText": "changed"}]}, work)
    assert run.ok
    assert (work / "b.txt").read_bytes() == b"keep\xef\xbf\xbd\nchanged\n"


def test_numbered_diff_equals_pis_for_recorded_pairs() -> None:
    """400 random pairs with many equal lines (ties for the diff to break), diffed by pi itself."""
    import json

    from tool_harness import ORACLE_DIR

    pairs = json.loads((ORACLE_DIR / "cases.json").read_text(encoding="utf-8"))["diffs"]
    expected = json.loads((ORACLE_DIR / "oracle.json").read_text(encoding="utf-8"))["diffs"]
    assert len(pairs) == len(expected) == 400
    mismatches = [
        (old, new)
        for (old, new), (diff, first) in zip(pairs, expected, strict=True)
        if list(generate_diff(old, new)) != [diff, first]
    ]
    assert mismatches == []


def test_special_files_are_refused_instead_of_read_for_ever(work: Path) -> None:
    run = run_tool("edit", {"path": "/dev/zero", "edits": [{"oldText": "a", "newText": "b"}]}, work)
    assert run.text == "Cannot edit /dev/zero: it is a character device, not a regular file"
