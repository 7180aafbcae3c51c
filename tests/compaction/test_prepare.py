"""The cut point and the preparation, over real session entries (in-memory session managers)."""

from __future__ import annotations

import pytest
from builders import assistant
from builders import branch_of
from builders import call
from builders import exchanges
from builders import result
from builders import user
from builders import words

from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.tokens import estimate_context_tokens
from piko.plugins.compaction.prepare import CompactionSettings
from piko.plugins.compaction.prepare import entry_message
from piko.plugins.compaction.prepare import find_cut_point
from piko.plugins.compaction.prepare import prepare_compaction
from piko.sessions.manager import SessionManager
from piko.sessions.manager import build_session_context


def settings(keep: int, reserve: int = 16384) -> CompactionSettings:
    return CompactionSettings(keep_recent_tokens=keep, reserve_tokens=reserve)


def long_tool_conversation() -> SessionManager:
    """Three turns with tool calls (each tool result 100 tokens, other messages 10-30)."""
    manager = SessionManager.in_memory("/tmp/project")
    for turn in range(3):
        if turn == 1:
            manager.append_model_change("mock", "mock-1")
        manager.append_message(user(words(f"question {turn}", 20), at=turn * 100))
        for step in range(3):
            cid = f"call-{turn}-{step}"
            manager.append_message(
                assistant(words(f"step {step}", 10), calls=[call(cid, "read", path=f"f{turn}{step}.txt")])
            )
            manager.append_message(result(cid, words(f"content {step}", 100)))
        manager.append_message(assistant(words(f"answer {turn}", 30)))
    return manager


def test_cut_never_lands_on_a_tool_result_and_kept_results_keep_their_calls() -> None:
    manager = long_tool_conversation()
    entries = manager.get_branch()
    kinds = set()
    for keep in range(0, 1400, 7):
        prep = prepare_compaction(entries, settings(keep))
        if prep is None:
            continue
        index = next(i for i, e in enumerate(entries) if e.id == prep.first_kept_entry_id)
        first = entries[index]
        assert not (first.type == "message" and isinstance(first.message, ToolResultMessage)), keep
        kept_calls = {
            c.id
            for e in entries[index:]
            if e.type == "message" and e.role == "assistant"
            for c in e.message.content
            if getattr(c, "TYPE", "") == "toolCall"
        }
        for e in entries[index:]:
            if e.type == "message" and e.role == "toolResult":
                assert e.message.tool_call_id in kept_calls, keep
        kinds.add((first.type, getattr(first, "role", ""), prep.is_split_turn))
    # the sweep met cuts at user messages, at assistant messages (split turns) and at settings entries
    assert ("message", "user", False) in kinds
    assert ("message", "assistant", True) in kinds
    assert ("model_change", "", False) in kinds


def test_cut_point_walks_back_from_the_newest_message_to_the_budget() -> None:
    manager, _ids = branch_of(*exchanges(2))
    entries = manager.get_branch()
    # 150 tokens: a2 (100) + u2 (200 >= 150) -> keep from u2
    cut = find_cut_point(entries, 0, len(entries), 150)
    assert (cut.first_kept_index, cut.turn_start_index, cut.is_split_turn) == (2, -1, False)
    # exactly reaching the budget counts (pi's >=)
    assert find_cut_point(entries, 0, len(entries), 200).first_kept_index == 2
    # less than one message: keep the newest, an assistant message that splits the turn of u2
    cut = find_cut_point(entries, 0, len(entries), 50)
    assert (cut.first_kept_index, cut.turn_start_index, cut.is_split_turn) == (3, 2, True)
    # more than everything: keep everything
    assert find_cut_point(entries, 0, len(entries), 10_000).first_kept_index == 0


def test_preparation_splits_the_history_and_the_turn_prefix() -> None:
    manager, ids = branch_of(
        user(words("old question", 50)),
        assistant(words("old answer", 50)),
        user(words("big task", 20)),
        assistant(words("step one", 10), calls=[call("c1", "read", path="src/a.py")]),
        result("c1", words("file a", 400)),
        assistant(words("step two", 10), calls=[call("c2", "edit", path="src/b.py", edits=[])]),
        result("c2", words("edited", 10), name="edit"),
        assistant(words("step three", 100)),
    )
    prep = prepare_compaction(manager.get_branch(), settings(200))
    assert prep is not None
    # a7 (100) + r6 (10) + a5 (~20) + r4 (400) crosses 200 at the tool result: the next cut point is a5
    assert prep.first_kept_entry_id == ids[5]
    assert prep.is_split_turn is True
    assert [m.content[0].text[:8] for m in prep.messages_to_summarize] == ["old ques", "old answ"]
    assert [type(m).__name__ for m in prep.turn_prefix_messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
    ]
    # files of the summarized parts only: the edit call stays in the context
    assert prep.file_ops.read == {"src/a.py"}
    assert prep.file_ops.edited == set()
    assert prep.file_ops.details() == {"readFiles": ["src/a.py"], "modifiedFiles": []}
    assert prep.tokens_before == estimate_context_tokens(build_session_context(manager.get_branch()).messages)
    assert prep.previous_summary is None
    assert prep.settings.keep_recent_tokens == 200


def test_split_turn_without_earlier_history() -> None:
    manager, ids = branch_of(
        user(words("only task", 20)),
        assistant(words("step", 10), calls=[call("c1", "read", path="notes.txt")]),
        result("c1", words("notes", 300)),
        assistant(words("done", 30)),
    )
    prep = prepare_compaction(manager.get_branch(), settings(50))
    assert prep is not None
    assert prep.first_kept_entry_id == ids[3]
    assert prep.is_split_turn and prep.messages_to_summarize == []
    assert len(prep.turn_prefix_messages) == 3


def test_settings_entries_before_the_cut_are_kept_and_do_not_split_a_turn() -> None:
    manager = SessionManager.in_memory("/tmp/project")
    manager.append_message(user(words("u1", 100)))
    manager.append_message(assistant(words("a1", 100)))
    change = manager.append_thinking_level_change("high")
    manager.append_message(user(words("u2", 100)))
    manager.append_message(assistant(words("a2", 100)))
    prep = prepare_compaction(manager.get_branch(), settings(150))
    assert prep is not None
    assert prep.first_kept_entry_id == change
    assert prep.is_split_turn is False  # pi would call this a split turn with u1/a1 as its prefix
    assert len(prep.messages_to_summarize) == 2 and prep.turn_prefix_messages == []


def test_custom_messages_and_branch_summaries_are_summarized_as_user_messages() -> None:
    manager = SessionManager.in_memory("/tmp/project")
    manager.append_custom_message("note", words("remember this", 50), True)
    manager.append_message(user(words("u1", 100)))
    manager.append_message(assistant(words("a1", 100)))
    manager.append_message(assistant(words("a1b", 100)))
    manager.append_branch_summary("root", "the other branch tried X")
    manager.append_message(user(words("u2", 100)))
    manager.append_message(assistant(words("a2", 100)))
    prep = prepare_compaction(manager.get_branch(), settings(150))
    assert prep is not None
    kinds = [type(m).__name__ for m in prep.messages_to_summarize]
    assert kinds == ["CustomMessage", "UserMessage", "AssistantMessage", "AssistantMessage"]
    # the summary entry right before the kept user message stays with it (as pi keeps it)
    branch = manager.get_branch()
    assert branch[4].type == "branch_summary" and prep.first_kept_entry_id == branch[4].id
    assert not prep.is_split_turn
    assert isinstance(entry_message(branch[4]), BranchSummaryMessage)


def test_a_second_compaction_summarizes_from_the_first_ones_kept_entry() -> None:
    manager, ids = branch_of(
        user(words("u1", 100)),
        assistant(words("a1", 100), calls=[call("c1", "write", path="out.txt", content="x")]),
        result("c1", "ok", name="write"),
        user(words("u2", 100)),
        assistant(words("a2", 100)),
    )
    first = prepare_compaction(manager.get_branch(), settings(150))
    assert first is not None and first.first_kept_entry_id == ids[3]
    manager.append_compaction(
        "FIRST SUMMARY\n\n<modified-files>\nout.txt\n</modified-files>",
        first.first_kept_entry_id,
        first.tokens_before,
        first.file_ops.details(),
        False,
    )
    assert prepare_compaction(manager.get_branch(), settings(150)) is None  # already compacted
    more = [manager.append_message(m) for m in (user(words("u3", 100)), assistant(words("a3", 100)))]
    second = prepare_compaction(manager.get_branch(), settings(150))
    assert second is not None
    assert second.previous_summary.startswith("FIRST SUMMARY")
    assert second.first_kept_entry_id == more[0]
    # u2 and a2 survived the first compaction and are summarized now; the compaction itself is not
    assert [m.content[0].text[:2] for m in second.messages_to_summarize] == ["u2", "a2"]
    assert not any(isinstance(m, CompactionSummaryMessage) for m in second.messages_to_summarize)
    # files of the first compaction's details carry over
    assert second.file_ops.details() == {"readFiles": [], "modifiedFiles": ["out.txt"]}


def test_an_extension_compactions_details_are_not_read_as_file_lists() -> None:
    manager, ids = branch_of(*exchanges(1))
    manager.append_compaction("EXT", ids[1], 10, {"readFiles": ["secret.txt"]}, True)
    manager.append_message(user(words("u2", 100)))
    manager.append_message(assistant(words("a2", 100)))
    prep = prepare_compaction(manager.get_branch(), settings(150))
    assert prep is not None and prep.previous_summary == "EXT"
    assert prep.file_ops.details() == {"readFiles": [], "modifiedFiles": []}


def test_a_previous_compaction_whose_kept_entry_is_gone_starts_after_it() -> None:
    manager, _ids = branch_of(*exchanges(1))
    manager.append_compaction("S", "no-such-entry", 10)
    manager.append_message(user(words("u2", 100)))
    manager.append_message(assistant(words("a2", 100)))
    manager.append_message(user(words("u3", 100)))
    prep = prepare_compaction(manager.get_branch(), settings(150))
    assert prep is not None
    summarized = [*prep.messages_to_summarize, *prep.turn_prefix_messages]
    assert [m.content[0].text[:2] for m in summarized] == ["u2"]


def test_nothing_to_compact() -> None:
    assert prepare_compaction([], settings(10)) is None
    manager, _ids = branch_of(user("hi"), assistant("hello"))
    # everything fits in keepRecentTokens: nothing would be summarized
    assert prepare_compaction(manager.get_branch(), settings(20000)) is None


def test_settings_defaults_and_bad_values() -> None:
    default = CompactionSettings.from_mapping(None)
    assert (default.enabled, default.reserve_tokens, default.keep_recent_tokens) == (True, 16384, 20000)
    custom = CompactionSettings.from_mapping({"keepRecentTokens": 5000, "enabled": False})
    assert custom.to_wire() == {"enabled": False, "reserveTokens": 16384, "keepRecentTokens": 5000}
    with pytest.raises(ValueError, match=r"compaction\.keepRecentTokens must be a non-negative number"):
        CompactionSettings.from_mapping({"keepRecentTokens": "lots"})
    with pytest.raises(ValueError, match=r"compaction\.reserveTokens"):
        CompactionSettings.from_mapping({"reserveTokens": -1})


def test_damaged_message_lines_are_skipped() -> None:
    from piko.sessions.reading import entry_from_line

    manager, ids = branch_of(*exchanges(2))
    entries = manager.get_branch()
    broken = entry_from_line(
        b'{"type":"message","id":"bad1","parentId":"%s","timestamp":"2026-01-01T00:00:00.000Z",'
        b'"message":7}\n' % ids[0].encode()
    )
    entries.insert(1, broken)
    prep = prepare_compaction(entries, settings(150))
    assert prep is not None
    assert [m.content[0].text[:2] for m in prep.messages_to_summarize] == ["u1", "a1"]
    assert all(isinstance(m, UserMessage) or m.content for m in prep.messages_to_summarize)
