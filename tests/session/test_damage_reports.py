"""Damaged session files: every line left out is reported with its line, unpaired tool results
never reach the context, and files piko does not understand are never rewritten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from session_helpers import FIXTURES
from session_helpers import assistant
from session_helpers import tool_result
from session_helpers import user

from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.sessions.manager import SessionManager

CALL = ToolCall(id="call_1", name="bash", arguments={"command": "ls"})


def _conversation(tmp_path: Path) -> tuple[Path, list[str]]:
    """A session: user, assistant calling a tool, its result, the answer. Returns the path and lines."""
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    manager.append_message(user("list the files"))
    manager.append_message(assistant("let me look", tool_call=CALL))
    manager.append_message(tool_result("call_1", "a.txt b.txt"))
    manager.append_message(assistant("two files"))
    path = Path(manager.session_file or "")
    return path, path.read_text(encoding="utf-8").splitlines(keepends=True)


def _corrupt_middle(line: str) -> str:
    """The line with garbage in its message; it still starts and ends like a message line."""
    middle = line.index('"content"') + 4
    return line[:middle] + "\x00GARBAGE" + line[middle + 8 :]


def _line_of(lines: list[str], needle: str) -> int:
    return next(number for number, line in enumerate(lines, 1) if needle in line)


def _opened_with_damage(tmp_path: Path, needle: str) -> tuple[SessionManager, Path, list[str], int]:
    """The conversation with the first line holding ``needle`` corrupted in its middle, opened:
    the manager, the file, its lines before and the damaged line's number."""
    path, lines = _conversation(tmp_path)
    number = _line_of(lines, needle)
    damaged = [*lines]
    damaged[number - 1] = _corrupt_middle(lines[number - 1])
    path.write_text("".join(damaged), encoding="utf-8")
    return SessionManager.open(str(path)), path, lines, number


def test_a_message_line_corrupted_in_the_middle_is_reported_with_its_line(tmp_path: Path) -> None:
    manager, path, _lines, number = _opened_with_damage(tmp_path, '"role":"user"')
    manager.build_context()
    (problem,) = [d for d in manager.diagnostics if "unreadable message" in d.message]
    assert problem.line == number and str(problem).startswith(f"{path}:{number}: entry ")


def test_a_tool_result_whose_call_was_lost_is_left_out_and_reported(tmp_path: Path) -> None:
    manager, _path, lines, call_line = _opened_with_damage(tmp_path, '"toolCall"')
    result_line = _line_of(lines, '"role":"toolResult"')
    context = manager.build_context()
    assert not any(isinstance(m, ToolResultMessage) for m in context.messages)
    assert [type(m).__name__ for m in context.messages] == ["UserMessage", "AssistantMessage"]
    lines_reported = {d.line: d.message for d in manager.diagnostics}
    assert "unreadable message" in lines_reported[call_line]
    assert "follows no tool call" in lines_reported[result_line] and "call_1" in lines_reported[result_line]
    # building the context again reports nothing twice
    count = len(manager.diagnostics)
    manager.build_context()
    assert len(manager.diagnostics) == count


def test_a_tool_call_whose_result_was_lost_is_reported(tmp_path: Path) -> None:
    manager, _path, lines, result_line = _opened_with_damage(tmp_path, '"role":"toolResult"')
    call_line = _line_of(lines, '"toolCall"')
    manager.build_context()
    reported = {d.line: d.message for d in manager.diagnostics}
    assert "has no result" in reported[call_line] and "No result provided" in reported[call_line]
    assert "unreadable message" in reported[result_line]


def test_a_second_result_for_one_call_is_left_out(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(user("go"))
    manager.append_message(assistant("calling", tool_call=CALL))
    manager.append_message(tool_result("call_1", "first"))
    manager.append_message(tool_result("call_1", "again"))
    results = [m for m in manager.build_context().messages if isinstance(m, ToolResultMessage)]
    assert [r.content[0].text for r in results] == ["first"]
    assert any("follows no tool call" in d.message for d in manager.diagnostics)


def test_a_missing_parent_and_a_parent_cycle_are_reported(tmp_path: Path) -> None:
    path, lines = _conversation(tmp_path)
    entries = [json.loads(line) for line in lines[1:]]
    entries[2]["parentId"] = "gone0000"  # the tool result's parent is not in the file
    path.write_text(lines[0] + "".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    manager = SessionManager.open(str(path))
    context = manager.build_context()
    assert [type(m).__name__ for m in context.messages] == [
        "AssistantMessage"
    ]  # the orphaned result is dropped
    assert any("parent gone0000 is not in the file" in d.message for d in manager.diagnostics)

    entries[2]["parentId"] = entries[3]["id"]  # tool result <-> answer: a cycle
    path.write_text(lines[0] + "".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    manager = SessionManager.open(str(path))
    manager.build_context()
    assert any("cycle" in d.message for d in manager.diagnostics)


def test_duplicate_entry_ids_are_reported_with_their_lines(tmp_path: Path) -> None:
    path, lines = _conversation(tmp_path)
    first = json.loads(lines[1])
    copy = dict(first, timestamp="2030-01-01T00:00:00.000Z")
    path.write_text("".join(lines) + json.dumps(copy) + "\n", encoding="utf-8")
    manager = SessionManager.open(str(path))
    (problem,) = [d for d in manager.diagnostics if "more than one line" in d.message]
    assert f"({2}, {len(lines) + 1})" in problem.message


def test_a_fork_reports_the_lines_its_source_lost(tmp_path: Path) -> None:
    path, lines = _conversation(tmp_path)
    lines.insert(2, "not json\n")
    path.write_text("".join(lines), encoding="utf-8")
    fork = SessionManager.fork_from(str(path), str(tmp_path), str(tmp_path / "forks"))
    assert [(d.path, d.line) for d in fork.diagnostics] == [(str(path), 3)]


# ---------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------

BAD_VERSIONS: list[Any] = ["3", "abc", True, 2.5, 4, 99, 0, -1, [3], {"v": 3}]


@pytest.mark.parametrize("version", BAD_VERSIONS, ids=repr)
def test_a_version_piko_does_not_know_is_never_rewritten(tmp_path: Path, version: Any) -> None:
    path, lines = _conversation(tmp_path)
    header = json.loads(lines[0])
    header["version"] = version
    original = (json.dumps(header) + "\n" + "".join(lines[1:])).encode()
    path.write_bytes(original)
    ids = [json.loads(line)["id"] for line in lines[1:]]
    manager = SessionManager.open(str(path))
    assert path.read_bytes() == original and not list(tmp_path.rglob("*.bak*"))
    (warning,) = [d for d in manager.diagnostics if "not one piko knows" in d.message]
    assert warning.path == str(path) and json.dumps(version, separators=(",", ":")) in warning.message
    assert [e.id for e in manager.get_entries()] == ids  # read as v3: ids and tree kept
    assert len(manager.build_context().messages) == 4
    # what the session adds goes to a new file that starts with the old entries
    new_id = manager.append_message(user("more"))
    assert path.read_bytes() == original
    assert manager.session_file != str(path) and manager.session_file in warning.message
    written = [json.loads(line) for line in Path(manager.session_file or "").read_text().splitlines()]
    assert written[0]["version"] == 3 and written[0]["parentSession"] == str(path)
    assert [e["id"] for e in written[1:]] == [*ids, new_id]


def test_an_unknown_version_in_memory_is_read_and_warned_about(tmp_path: Path) -> None:
    path, lines = _conversation(tmp_path)
    path.write_text(lines[0].replace('"version":3', '"version":"x"') + "".join(lines[1:]))
    manager = SessionManager.in_memory(str(tmp_path))
    manager.set_session_file(str(path))
    assert manager.session_file == str(path)
    assert any("not one piko knows" in d.message for d in manager.diagnostics)


def test_a_migration_keeps_the_original_beside_an_older_backup(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    original = (FIXTURES / "v1_session.jsonl").read_bytes()
    path.write_bytes(original)
    (tmp_path / "old.jsonl.bak").write_text("an older backup")
    SessionManager.open(str(path))
    assert (tmp_path / "old.jsonl.bak").read_text() == "an older backup"
    assert (tmp_path / "old.jsonl.bak.1").read_bytes() == original


def test_reading_an_old_version_in_memory_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    damaged = (FIXTURES / "v1_session.jsonl").read_text() + "not json\n"
    path.write_text(damaged)
    manager = SessionManager.in_memory(str(tmp_path))
    manager.set_session_file(str(path))
    assert path.read_text() == damaged and sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


@pytest.mark.parametrize("line", ['{"type":7,"id":"q"}', '{"id":"q"}', '{"type":"","id":"q"}'])
def test_a_line_without_a_type_is_skipped_and_reported(tmp_path: Path, line: str) -> None:
    path, lines = _conversation(tmp_path)
    lines.insert(2, line + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    manager = SessionManager.open(str(path))
    assert [(d.line, d.message) for d in manager.diagnostics] == [(3, "entry has no type, line skipped")]
    assert "q" not in {e.id for e in manager.get_entries()}
