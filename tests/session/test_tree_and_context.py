"""The tree (branch, leaf, children, labels, names) and the context built from the current branch."""

from __future__ import annotations

import pytest
from session_helpers import assistant
from session_helpers import user

from piko.data.messages import AssistantMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.sessions.ids import ms_from_iso
from piko.sessions.manager import ModelRef
from piko.sessions.manager import SessionManager


def texts(messages: list) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, (UserMessage, AssistantMessage)):
            content = m.content
            out.append(
                content
                if isinstance(content, str)
                else "".join(b.text for b in content if isinstance(b, TextContent))
            )
        elif isinstance(m, (CompactionSummaryMessage, BranchSummaryMessage)):
            out.append(f"[{m.ROLE}] {m.summary}")
        elif isinstance(m, CustomMessage):
            content = m.content if isinstance(m.content, str) else "+".join(b.text for b in m.content)
            out.append(f"[custom {m.custom_type}] {content}")
    return out


@pytest.fixture
def manager() -> SessionManager:
    return SessionManager.in_memory("/proj")


def test_branching_moves_the_leaf_and_new_entries_hang_off_it(manager: SessionManager) -> None:
    q1 = manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    q2 = manager.append_message(user("q2"))
    a2 = manager.append_message(assistant("a2"))
    manager.branch(a1)
    assert manager.leaf_id == a1
    q3 = manager.append_message(user("q3"))
    assert manager.get_entry(q3).parent_id == a1  # type: ignore[union-attr]
    assert [e.id for e in manager.get_branch()] == [q1, a1, q3]
    assert [e.id for e in manager.get_branch(a2)] == [q1, a1, q2, a2]
    assert [e.id for e in manager.get_children(a1)] == [q2, q3]
    assert [e.id for e in manager.get_children(None)] == [q1]
    assert texts(manager.build_context().messages) == ["q1", "a1", "q3"]

    manager.reset_leaf()
    assert manager.leaf_id is None and manager.build_context().messages == []
    root2 = manager.append_message(user("other root"))
    assert manager.get_entry(root2).parent_id is None  # type: ignore[union-attr]
    roots = manager.get_tree()
    assert [r.entry.id for r in roots] == [q1, root2]
    assert [c.entry.id for c in roots[0].children[0].children] == [q2, q3]
    assert manager.get_leaf_entry().id == root2  # type: ignore[union-attr]


def test_a_branch_asked_for_again_is_the_same_after_appends_moves_and_changes_to_it(
    manager: SessionManager,
) -> None:
    # get_branch keeps its last path: appends, leaf moves and a caller's changes must not leak in
    q1 = manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    first = manager.get_branch()
    first.clear()  # the caller's list, not the kept one
    assert [e.id for e in manager.get_branch()] == [q1, a1]
    q2 = manager.append_message(user("q2"))
    assert [e.id for e in manager.get_branch()] == [q1, a1, q2]
    assert [e.id for e in manager.get_branch(a1)] == [q1, a1]
    manager.branch(q1)
    q3 = manager.append_message(user("q3"))
    assert [e.id for e in manager.get_branch()] == [q1, q3]
    assert [e.id for e in manager.get_branch(q2)] == [q1, a1, q2]
    manager.reset_leaf()
    assert manager.get_branch() == []


def test_tree_orphans_become_roots_and_children_sort_by_time(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}\n'
        '{"type":"message","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"c","timestamp":1}}\n'
        '{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"b","timestamp":1}}\n'
        '{"type":"message","id":"o","parentId":"missing","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"o","timestamp":1}}\n',
        encoding="utf-8",
    )
    manager = SessionManager.open(str(path))
    roots = manager.get_tree()
    assert [r.entry.id for r in roots] == ["a", "o"]
    assert [c.entry.id for c in roots[0].children] == ["b", "c"]
    assert [e.id for e in manager.get_branch("o")] == ["o"]


def test_labels_last_wins_and_none_clears(manager: SessionManager) -> None:
    q = manager.append_message(user("q"))
    a = manager.append_message(assistant("a"))
    manager.append_label(q, "one")
    manager.append_label(q, "two")
    assert manager.get_label(q) == "two"
    manager.append_label(q, None)
    assert manager.get_label(q) is None
    manager.append_label(a, "keep")
    node = manager.get_tree()[0].children[0]
    assert node.label == "keep" and node.label_timestamp is not None
    assert manager.get_tree()[0].label is None


def test_session_name_latest_wins_and_empty_clears(manager: SessionManager) -> None:
    assert manager.get_session_name() is None
    manager.append_session_info("First")
    manager.append_session_info("  Second ")
    assert manager.get_session_name() == "Second"
    manager.append_session_info("   ")
    assert manager.get_session_name() is None


def test_context_model_and_thinking_level_come_from_the_branch(manager: SessionManager) -> None:
    assert manager.build_context().model is None
    manager.append_model_change("openai", "gpt-4o")
    manager.append_thinking_level_change("high")
    q = manager.append_message(user("q"))
    context = manager.build_context()
    assert context.model == ModelRef("openai", "gpt-4o") and context.thinking_level == "high"
    provider, model_id = context.model  # unpacks like a pair
    assert (provider, model_id) == ("openai", "gpt-4o")
    manager.append_message(assistant("a", provider="anthropic", model="claude"))
    assert manager.build_context().model == ModelRef("anthropic", "claude")  # the assistant message counts
    manager.append_model_change("google", "gemini")
    assert manager.build_context().model == ModelRef("google", "gemini")
    manager.branch(q)
    context = manager.build_context()
    assert context.model == ModelRef("openai", "gpt-4o") and context.thinking_level == "high"
    empty = SessionManager.in_memory("/p")
    empty.append_message(user("x"))
    assert empty.build_context().thinking_level == "off"


def test_compaction_keeps_from_first_kept_entry(manager: SessionManager) -> None:
    manager.append_message(user("old q"))
    manager.append_message(assistant("old a"))
    kept = manager.append_message(user("kept q"))
    manager.append_message(assistant("kept a"))
    compaction = manager.append_compaction("what happened", kept, 4321)
    manager.append_message(user("new q"))
    context = manager.build_context()
    assert texts(context.messages) == ["[compactionSummary] what happened", "kept q", "kept a", "new q"]
    summary = context.messages[0]
    assert summary.tokens_before == 4321
    assert summary.timestamp == ms_from_iso(manager.get_entry(compaction).timestamp)  # type: ignore[union-attr]

    # A second compaction: only the latest counts; its kept range may start after the first one.
    later = manager.append_message(assistant("new a"))
    manager.append_compaction("second summary", later, 99)
    assert texts(manager.build_context().messages) == ["[compactionSummary] second summary", "new a"]

    # firstKeptEntryId not on the path: nothing before the compaction is kept.
    other = SessionManager.in_memory("/p")
    other.append_message(user("x"))
    other.append_compaction("s", "unknown-id", 1)
    other.append_message(user("y"))
    assert texts(other.build_context().messages) == ["[compactionSummary] s", "y"]


def test_branch_summaries_custom_messages_and_custom_entries(manager: SessionManager) -> None:
    q = manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    manager.append_custom("state", {"x": 1})  # not part of the context
    manager.append_custom_message("note", "injected", True, {"d": 1})
    manager.append_custom_message("blocks", [TextContent(text="as blocks")], False)
    summary_id = manager.branch_with_summary(q, "what the other branch did", {"readFiles": []}, True)
    entry = manager.get_entry(summary_id)
    assert entry is not None and entry.parent_id == q and entry.from_id == q and entry.from_hook is True  # type: ignore[attr-defined]
    assert texts(manager.build_context().messages) == ["q", "[branchSummary] what the other branch did"]
    leaf = [e for e in manager.get_entries() if e.type == "custom_message"][-1]
    manager.branch(leaf.id)
    messages = manager.build_context().messages
    assert texts(messages) == ["q", "a", "[custom note] injected", "[custom blocks] as blocks"]
    note = messages[2]
    assert isinstance(note, CustomMessage) and note.display is True and note.details == {"d": 1}
    assert messages[3].display is False

    root_summary = manager.branch_with_summary(None, "from the very start")
    assert manager.get_entry(root_summary).from_id == "root"  # type: ignore[union-attr]
    assert manager.get_entry(root_summary).parent_id is None  # type: ignore[union-attr]
    empty = manager.append_branch_summary("x", "")  # an empty summary is no message
    manager.branch(empty)
    assert texts(manager.build_context().messages) == ["[branchSummary] from the very start"]


def test_create_branched_session_keeps_path_and_its_labels(tmp_path, work) -> None:  # type: ignore[no-untyped-def]
    manager = SessionManager.create(str(work), session_dir=str(tmp_path / "s"))
    q1 = manager.append_message(user("q1"))
    a1 = manager.append_message(assistant("a1"))
    q2 = manager.append_message(user("q2"))
    manager.append_message(assistant("a2"))
    manager.append_label(q1, "start")
    manager.append_label(q2, "off-path")
    manager.append_label(a1, "temp")
    manager.append_label(a1, None)
    old_file = manager.session_file
    old_id = manager.session_id

    new_file = manager.create_branched_session(a1)
    assert (
        new_file
        and new_file != old_file
        and manager.session_file == new_file
        and manager.session_id != old_id
    )
    import json
    from pathlib import Path

    written = [json.loads(line) for line in Path(new_file).read_text(encoding="utf-8").splitlines()]
    assert written[0]["parentSession"] == old_file
    assert [e["type"] for e in written[1:]] == ["message", "message", "label"]
    label = written[3]
    assert label["targetId"] == q1 and label["label"] == "start" and label["parentId"] == a1
    original_label = next(
        e
        for e in json.loads("[" + ",".join(Path(old_file).read_text().splitlines()) + "]")
        if e.get("label") == "start"
    )
    assert label["timestamp"] == original_label["timestamp"]
    assert manager.get_label(q1) == "start" and manager.leaf_id == label["id"]
    # Without an assistant message on the path the file waits, like a new session.
    manager.branch(q1)
    later = manager.create_branched_session(q1)
    assert later is not None and not Path(later).exists()
    manager.append_message(assistant("now"))
    assert Path(later).exists()


def test_parent_cycle_does_not_loop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}\n'
        '{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":1}}\n',
        encoding="utf-8",
    )
    manager = SessionManager.open(str(path))
    assert [e.id for e in manager.get_branch()] == ["a", "b"]
    assert texts(manager.build_context().messages) == ["a", "b"]
