"""Old versions are migrated as pi migrates them; damaged files load what can be loaded, losing nothing."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from session_helpers import FIXTURES
from session_helpers import assistant
from session_helpers import context_json
from session_helpers import copy_fixture
from session_helpers import user

from piko.lib import jsonio
from piko.sessions.manager import SessionFileError
from piko.sessions.manager import SessionManager
from piko.sessions.migrations import encode_cwd
from piko.sessions.migrations import migrate_sessions_from_agent_root

sys.path.insert(0, str(FIXTURES))
from make_pi_fixtures import normalize_ids
from make_pi_fixtures import normalize_ids_in_json

HEADER = '{"type":"session","version":3,"id":"01a22ab5-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/proj"}\n'


def entry_line(entry_id: str, parent: str | None, role: str = "user", text: str = "x") -> str:
    parent_json = "null" if parent is None else f'"{parent}"'
    if role == "user":
        message = f'{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}'
    else:
        message = (
            f'{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"a","provider":"p","model":"m",'
            '"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,'
            '"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}'
        )
    return f'{{"type":"message","id":"{entry_id}","parentId":{parent_json},"timestamp":"2026-01-01T00:00:01.000Z","message":{message}}}\n'


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_old_versions_migrate_exactly_as_pi(version: str, tmp_path: Path) -> None:
    """pi's own migration of the same file (``<version>_migrated_by_pi.jsonl``, ids normalized)."""
    path = copy_fixture(FIXTURES / f"{version}_session.jsonl", tmp_path, "old.jsonl")
    original = path.read_bytes()
    manager = SessionManager.open(str(path))
    assert manager.diagnostics == []
    rewritten = path.read_text(encoding="utf-8")
    assert normalize_ids(rewritten) == (FIXTURES / f"{version}_migrated_by_pi.jsonl").read_text(
        encoding="utf-8"
    )
    context = normalize_ids_in_json(jsonio.dumps(context_json(manager.build_context())), rewritten)
    assert context == (FIXTURES / f"{version}_context_by_pi.json").read_text(encoding="utf-8").strip()
    assert manager.header.version == 3
    # Unlike pi, the file as it was is kept before the rewrite.
    assert (tmp_path / "old.jsonl.bak").read_bytes() == original
    # Opening the migrated file again changes nothing.
    SessionManager.open(str(path))
    assert path.read_text(encoding="utf-8") == rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl", "old.jsonl.bak"]


def test_v1_details(tmp_path: Path) -> None:
    path = copy_fixture(FIXTURES / "v1_session.jsonl", tmp_path, "old.jsonl")
    manager = SessionManager.open(str(path))
    entries = manager.get_entries()
    assert entries[0].parent_id is None and all(
        entries[i].parent_id == entries[i - 1].id for i in range(1, len(entries))
    )
    compaction = next(e for e in entries if e.type == "compaction")
    assert compaction.first_kept_entry_id == entries[5].id  # type: ignore[attr-defined] # index 6 of the file = 6th entry
    assert "firstKeptEntryIndex" not in compaction.raw
    assert manager.header.parent_session is not None and manager.header.parent_session.endswith(".jsonl")
    assert manager.cwd == "/home/user/old-project"


def test_v2_hook_message_becomes_custom(tmp_path: Path) -> None:
    path = copy_fixture(FIXTURES / "v2_session.jsonl", tmp_path, "old.jsonl")
    manager = SessionManager.open(str(path))
    custom = [e for e in manager.get_entries() if e.type == "message" and e.role == "custom"]  # type: ignore[attr-defined]
    assert len(custom) == 1 and custom[0].message.custom_type == "reminder"  # type: ignore[attr-defined]
    assert '"hookMessage"' not in path.read_text(encoding="utf-8")


def test_migration_with_damaged_lines_keeps_a_backup(tmp_path: Path) -> None:
    original = (FIXTURES / "v2_session.jsonl").read_text(encoding="utf-8")
    damaged = original.replace('{"type":"custom"', '{"type":"custom" BROKEN', 1)
    path = tmp_path / "old.jsonl"
    path.write_text(damaged, encoding="utf-8")
    manager = SessionManager.open(str(path))
    assert len(manager.diagnostics) == 1 and manager.diagnostics[0].line == 6
    assert (tmp_path / "old.jsonl.bak").read_text(encoding="utf-8") == damaged


def test_torn_last_line_is_skipped_and_the_next_entry_starts_a_new_line(tmp_path: Path) -> None:
    good = HEADER + entry_line("aaaa0001", None) + entry_line("aaaa0002", "aaaa0001", "assistant")
    torn = entry_line("aaaa0003", "aaaa0002")[:60]  # a crash in the middle of a write
    path = tmp_path / "s.jsonl"
    path.write_text(good + torn, encoding="utf-8")
    manager = SessionManager.open(str(path))
    assert [e.id for e in manager.get_entries()] == ["aaaa0001", "aaaa0002"]
    assert len(manager.diagnostics) == 1 and manager.diagnostics[0].line == 4
    assert "line skipped" in str(manager.diagnostics[0]) and str(path) in str(manager.diagnostics[0])
    assert path.read_text(encoding="utf-8") == good + torn  # nothing rewritten
    new = manager.append_message(user("after the crash"))
    text = path.read_text(encoding="utf-8")
    assert text.startswith(good + torn + "\n")
    assert json.loads(text.splitlines()[-1])["id"] == new
    again = SessionManager.open(str(path))
    assert [e.id for e in again.get_entries()] == ["aaaa0001", "aaaa0002", new]


def test_torn_message_line_ending_in_a_brace_is_caught_at_load(tmp_path: Path) -> None:
    full = entry_line("aaaa0003", "aaaa0002", "assistant")
    cut = full[: full.index('"usage"') + len('"usage":{"input":1}')]  # ends in "}" but is not complete
    path = tmp_path / "s.jsonl"
    path.write_text(
        HEADER + entry_line("aaaa0001", None) + entry_line("aaaa0002", "aaaa0001", "assistant") + cut,
        encoding="utf-8",
    )
    manager = SessionManager.open(str(path))
    assert [e.id for e in manager.get_entries()] == ["aaaa0001", "aaaa0002"]
    assert len(manager.diagnostics) == 1


def test_bad_lines_in_the_middle_are_skipped(tmp_path: Path) -> None:
    lines = [
        HEADER,
        entry_line("aaaa0001", None),
        "this is not json\n",
        "[1, 2, 3]\n",
        '{"type":"custom","customType":"no-id","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:01.000Z"}\n',
        "\n",
        entry_line("aaaa0002", "aaaa0001", "assistant"),
        '{"type":"future_entry","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:02.000Z","payload":{"z":1,"a":[1.5]}}\n',
        entry_line("aaaa0004", "aaaa0003"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    manager = SessionManager.open(str(path))
    assert [e.id for e in manager.get_entries()] == ["aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004"]
    assert [d.line for d in manager.diagnostics] == [3, 4, 5]
    unknown = manager.get_entry("aaaa0003")
    assert (
        unknown is not None
        and unknown.type == "future_entry"
        and unknown.get("payload") == {"z": 1, "a": [1.5]}
    )
    assert [type(m).__name__ for m in manager.build_context().messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    # Unknown entries survive a fork byte for byte.
    manager.create_branched_session("aaaa0004")
    copied = Path(manager.session_file or "").read_text(encoding="utf-8")
    assert lines[7] in copied and lines[1] in copied


def test_message_line_the_data_model_rejects_is_skipped_in_the_context(tmp_path: Path) -> None:
    bad = entry_line("aaaa0002", "aaaa0001", "assistant").replace(
        '"stopReason":"stop"', '"stopReason":"weird"'
    )
    path = tmp_path / "s.jsonl"
    path.write_text(
        HEADER + entry_line("aaaa0001", None) + bad + entry_line("aaaa0003", "aaaa0002"), encoding="utf-8"
    )
    manager = SessionManager.open(str(path))
    context = manager.build_context()
    assert [type(m).__name__ for m in context.messages] in (
        ["UserMessage", "UserMessage"],  # rejected by the data model: skipped, reported
        ["UserMessage", "AssistantMessage", "UserMessage"],  # or accepted as it is
    )
    if len(context.messages) == 2:
        assert any("aaaa0002" in d.message for d in manager.diagnostics)


def test_not_a_session_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    content = '{"some":"other jsonl"}\n{"x":1}\n'
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SessionFileError, match="not a session file"):
        SessionManager.open(str(path))
    assert path.read_text(encoding="utf-8") == content
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json at all\n", encoding="utf-8")
    with pytest.raises(SessionFileError):
        SessionManager.open(str(garbage))
    assert garbage.read_text(encoding="utf-8") == "not json at all\n"


def test_empty_file_starts_a_session_there(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    manager = SessionManager.open(str(path), cwd="/proj")
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])  # pi writes the header at once
    assert header["id"] == manager.session_id and header["cwd"] == "/proj"
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    assert [json.loads(x)["type"] for x in path.read_text(encoding="utf-8").splitlines()] == [
        "session",
        "message",
        "message",
    ]


def test_crlf_and_unicode_lines_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = entry_line("aaaa0001", None, text="héllo ✓ \\ud83d\\ude00")
    path.write_bytes((HEADER + line).replace("\n", "\r\n").encode("utf-8"))
    manager = SessionManager.open(str(path))
    assert manager.build_context().messages[0].content[0].text == "héllo ✓ 😀"


def test_moving_sessions_out_of_the_agent_root(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "2025-01-01T00-00-00-000Z_x.jsonl").write_text(HEADER, encoding="utf-8")
    (agent / "other.jsonl").write_text('{"type":"message"}\n', encoding="utf-8")
    moved = migrate_sessions_from_agent_root(agent)
    assert moved == [agent / "sessions" / encode_cwd("/proj") / "2025-01-01T00-00-00-000Z_x.jsonl"]
    assert moved[0].read_text(encoding="utf-8") == HEADER
    assert (agent / "other.jsonl").exists()


def test_cwd_encoding() -> None:
    assert encode_cwd("/home/user/project") == "--home-user-project--"
    assert encode_cwd("C:\\Users\\me\\proj") == "--C--Users-me-proj--"
    assert encode_cwd("relative/dir") == "--relative-dir--"


def test_failed_migration_write_is_retried_with_the_next_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_fixture(FIXTURES / "v2_session.jsonl", tmp_path, "old.jsonl")
    original = path.read_bytes()
    # the rename that completes the atomic rewrite fails (a full or read-only disk; tests run as
    # root, so permissions cannot make it fail for real)
    failing = [True]
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if failing[0]:
            raise OSError(errno.EROFS, "Read-only file system", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    manager = SessionManager.open(str(path))
    assert isinstance(manager.write_error, OSError)
    assert path.read_bytes() == original  # the old file is untouched, not half-written
    assert len(manager.build_context().messages) == 3  # the migrated session is usable in memory
    assert not list(tmp_path.glob(".old.jsonl.*"))  # no temporary file is left behind
    failing[0] = False
    new = manager.append_message(user("after"))
    rewritten = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert rewritten[0]["version"] == 3 and rewritten[-1]["id"] == new and manager.write_error is None
    assert SessionManager.open(str(path)).get_entries()[-1].id == new
