"""The ls tool: collation, limits, unreadable directories."""

from __future__ import annotations

from pathlib import Path

from tool_harness import run_tool
from tool_harness import run_unprivileged

from piko.lib.collation import locale_key

# Node 20's ICU order of these names after toLowerCase() (localeCompare, en-US).
NODE_ORDER = [
    "a",
    "á",
    "à",
    "ä",
    "a b",
    "a_",
    "a-",
    "a1",
    "ab",
    "ae",
    "æ",
    "b",
    "i",
    "ı",
    "o",
    "ø",
    "oe",
    "œ",
    "ss",
    "ß",
    "е",
    "ё",
    "日",
    "本",
]


def test_collation_matches_node() -> None:
    assert sorted(reversed(NODE_ORDER), key=locale_key) == NODE_ORDER


def test_float_limit_prints_like_javascript(work: Path) -> None:
    for name in ("a", "b", "c"):
        (work / name).write_text("", encoding="utf-8")
    run = run_tool("ls", {"limit": 2.0}, work)
    assert run.text == "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    assert run.details == {"entryLimitReached": 2}
    assert type(run.details["entryLimitReached"]) is int


def test_unreadable_directory(work: Path) -> None:
    locked = work / "locked"
    locked.mkdir()
    (locked / "x").write_text("", encoding="utf-8")
    locked.chmod(0o100)
    try:
        outcome = run_unprivileged("tool_harness:run_tool_outcome", "ls", {"path": "locked"}, str(work))
    finally:
        locked.chmod(0o700)
    assert outcome["text"] == f"Cannot read directory: EACCES: permission denied, scandir '{locked}'"
