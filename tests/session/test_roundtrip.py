"""Files pi wrote come back byte for byte, and piko reads them as pi does (context, tree, labels)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from session_helpers import FIXTURES
from session_helpers import PI_WRITTEN
from session_helpers import SAMPLES
from session_helpers import context_json
from session_helpers import copy_fixture

from piko.data.wire import message_from_wire
from piko.data.wire import to_wire
from piko.lib import jsonio
from piko.sessions.entries import MessageEntry
from piko.sessions.manager import SessionManager


@pytest.mark.parametrize("source", PI_WRITTEN, ids=lambda p: p.parent.name)
def test_every_line_rewritten_by_piko_is_identical(source: Path, tmp_path: Path) -> None:
    original = source.read_bytes()
    path = copy_fixture(source, tmp_path)
    manager = SessionManager.open(str(path))
    assert manager.diagnostics == []
    assert manager.header.line + b"".join(e.line for e in manager.get_entries()) == original
    # What piko writes for the objects it parsed is what JSON.stringify writes (pi's rewrite).
    for line in original.splitlines(keepends=True):
        assert jsonio.dumpb(jsonio.loads(line)) + b"\n" == line
    # Messages survive the data model: structured and back, key order and numbers included.
    for entry in manager.get_entries():
        if isinstance(entry, MessageEntry):
            wire = entry.raw["message"]
            assert jsonio.dumpb(to_wire(message_from_wire(wire))) == jsonio.dumpb(wire)
            assert jsonio.dumpb(to_wire(entry.message)) == jsonio.dumpb(wire)
    assert path.read_bytes() == original  # opening never rewrites a v3 file


@pytest.mark.parametrize("source", PI_WRITTEN, ids=lambda p: p.parent.name)
def test_fork_and_clone_copy_entries_byte_for_byte(source: Path, tmp_path: Path, work: Path) -> None:
    path = copy_fixture(source, tmp_path)
    original_lines = path.read_bytes().splitlines(keepends=True)[1:]

    forked = SessionManager.fork_from(str(path), str(work), session_dir=str(tmp_path / "forks"))
    assert forked.session_file is not None
    fork_lines = Path(forked.session_file).read_bytes().splitlines(keepends=True)
    assert fork_lines[1:] == original_lines
    header = json.loads(fork_lines[0])
    assert list(header) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    assert header["parentSession"] == str(path) and header["cwd"] == str(work)

    manager = SessionManager.open(str(path))
    leaf = manager.leaf_id
    assert leaf is not None
    branch_ids = {e.id for e in manager.get_branch()}
    new_file = manager.create_branched_session(leaf)
    assert new_file is not None and manager.session_file == new_file
    cloned = Path(new_file).read_bytes().splitlines(keepends=True)
    copied = [line for line in cloned[1:] if json.loads(line)["type"] != "label"]
    assert copied == [
        line
        for line in original_lines
        if json.loads(line).get("id") in branch_ids and b'"type":"label"' not in line[:20]
    ]
    assert json.loads(cloned[0])["parentSession"] == str(path)


@pytest.mark.parametrize("source", SAMPLES, ids=lambda p: p.parent.name)
def test_file_name_and_directory_match_pi(source: Path) -> None:
    """``meta.json`` names where pi wrote the file: ``sessions/--<cwd>--/<timestamp>_<id>.jsonl``."""
    from piko.sessions.listing import default_session_dir

    meta = json.loads((source.parent / "meta.json").read_text(encoding="utf-8"))
    original = meta["sessions"][0]["original"]
    header = json.loads(source.read_bytes().splitlines()[0])
    directory = default_session_dir(header["cwd"], "sessions")
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    assert original == f"{directory}/{stamp}_{header['id']}.jsonl"


def test_context_tree_labels_and_name_match_pi_everywhere(tmp_path: Path) -> None:
    """pi's own reading of the rich fixture (``expected.json``): the context with every entry as leaf."""
    expected = json.loads((FIXTURES / "pi_rich" / "expected.json").read_text(encoding="utf-8"))
    path = copy_fixture(FIXTURES / "pi_rich" / "session.jsonl", tmp_path)
    manager = SessionManager.open(str(path))
    assert manager.leaf_id == expected["leafId"]
    assert manager.get_session_name() == expected["sessionName"]
    assert {
        e.id: manager.get_label(e.id) for e in manager.get_entries() if manager.get_label(e.id)
    } == expected["labels"]
    assert jsonio.dumps(context_json(manager.build_context())) == jsonio.dumps(expected["context"])

    def walk(nodes: list[Any], depth: int, out: list[list[Any]]) -> list[list[Any]]:
        for node in nodes:
            out.append([node.entry.id, node.entry.parent_id, depth, node.label, node.label_timestamp])
            walk(node.children, depth + 1, out)
        return out

    assert walk(manager.get_tree(), 0, []) == expected["tree"]
    assert len(expected["contexts"]) == len(manager.get_entries())
    for entry_id, pi_context in expected["contexts"].items():
        manager.branch(entry_id)
        assert jsonio.dumps(context_json(manager.build_context())) == jsonio.dumps(pi_context), entry_id


def test_header_and_entry_accessors(tmp_path: Path) -> None:
    from piko.sessions.entries import BranchSummaryEntry
    from piko.sessions.entries import CompactionEntry
    from piko.sessions.entries import CustomEntry
    from piko.sessions.entries import CustomMessageEntry
    from piko.sessions.entries import LabelEntry
    from piko.sessions.entries import ModelChangeEntry
    from piko.sessions.entries import SessionInfoEntry
    from piko.sessions.entries import ThinkingLevelChangeEntry

    manager = SessionManager.open(str(copy_fixture(FIXTURES / "pi_rich" / "session.jsonl", tmp_path)))
    assert manager.header.version == 3 and manager.header.id == manager.session_id
    assert manager.session_id == "01a22ab5-569d-7161-80b3-d9913d6467eb"
    by_type: dict[type, list[Any]] = {}
    for entry in manager.get_entries():
        by_type.setdefault(type(entry), []).append(entry)
    assert by_type[ModelChangeEntry][1].provider == "mock-anthropic"
    assert by_type[ModelChangeEntry][1].model_id == "mock-claude"
    assert [e.thinking_level for e in by_type[ThinkingLevelChangeEntry]] == ["off", "medium", "high"]
    compaction = by_type[CompactionEntry][0]
    assert compaction.first_kept_entry_id == "db5c1550" and compaction.tokens_before == 126
    assert compaction.details == {"readFiles": [], "modifiedFiles": []} and compaction.from_hook is False
    summary = by_type[BranchSummaryEntry][0]
    assert summary.from_id == "94da0d90" and summary.summary.endswith("compacted.")
    assert [(e.custom_type, e.data) for e in by_type[CustomEntry]][1] == ("fixture-empty", None)
    assert by_type[CustomEntry][0].data["ratio"] == 0.0000015
    hidden = by_type[CustomMessageEntry][1]
    assert hidden.display is False and hidden.content[0].text == "array content ✓"
    assert [e.label for e in by_type[LabelEntry]] == [
        "checkpoint",
        "first",
        None,
        "first-again",
        "branch-point",
    ]
    assert [e.name for e in by_type[SessionInfoEntry]] == ["Fixture session", "Fixture session renamed"]
