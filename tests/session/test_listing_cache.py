"""The listing cache: an unchanged session file is not read again, one that grew is read from
where the last listing stopped, a rewritten one whole; a broken cache is ignored."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from session_helpers import assistant
from session_helpers import user

from piko.sessions.listing import list_sessions
from piko.sessions.listing import read_session_info
from piko.sessions.manager import SessionManager


def _session(cwd: str, first: str, answers: int = 1) -> SessionManager:
    manager = SessionManager.create(cwd)
    manager.append_message(user(first, timestamp=1_780_000_000_000))
    for n in range(answers):
        manager.append_message(assistant(f"answer {n}", timestamp=1_780_000_001_000 + n))
    return manager


def _same_size_other_bytes(path: Path) -> None:
    """Replace the file's bytes with others of the same length, keeping its times."""
    stat = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"first", b"FIRST"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_an_unchanged_file_is_not_read_again(agent_dir: Path) -> None:
    manager = _session("/proj", "first question")
    path = Path(manager.session_file or "")
    assert [i.first_message for i in list_sessions("/proj")] == ["first question"]
    _same_size_other_bytes(path)  # what a second listing would see if it read the file
    assert [i.first_message for i in list_sessions("/proj")] == ["first question"]
    os.utime(path, None)  # now it looks changed: read again
    assert [i.first_message for i in list_sessions("/proj")] == ["FIRST question"]


def test_a_file_that_grew_is_read_from_where_the_listing_stopped(agent_dir: Path) -> None:
    manager = _session("/proj", "first question")
    path = Path(manager.session_file or "")
    [before] = list_sessions("/proj")
    assert before.message_count == 2 and before.name is None
    manager.append_message(user("second question", timestamp=1_790_000_000_000))
    manager.append_message(assistant("second answer", timestamp=1_790_000_001_000))
    manager.append_session_info("named later")
    [after] = list_sessions("/proj")
    assert after == read_session_info(path)
    assert after.message_count == 4 and after.name == "named later"
    assert after.modified.timestamp() == 1_790_000_001


def test_no_cache_reads_every_file_and_writes_no_cache(agent_dir: Path, monkeypatch: Any) -> None:
    manager = _session("/proj", "first question")
    path = Path(manager.session_file or "")
    assert [i.first_message for i in list_sessions("/proj")] == ["first question"]  # cached
    monkeypatch.setenv("PIKO_NO_CACHE", "1")
    _same_size_other_bytes(path)
    assert [i.first_message for i in list_sessions("/proj")] == ["FIRST question"]  # read again
    lists = agent_dir.parent / "cache" / "session-lists"  # the fixture's PIKO_CACHE_DIR
    written = {f.name: f.stat().st_mtime_ns for f in lists.iterdir()}
    other = _session("/other", "elsewhere")
    assert [i.first_message for i in list_sessions("/other")] == ["elsewhere"]
    assert other.session_file and {f.name: f.stat().st_mtime_ns for f in lists.iterdir()} == written


def test_a_line_cut_short_counts_once_it_is_complete(agent_dir: Path) -> None:
    manager = _session("/proj", "first question")
    path = Path(manager.session_file or "")
    line = json.dumps({"type": "message", "id": "abcd0001", "parentId": manager.leaf_id,
                       "timestamp": "2026-12-01T10:00:00.000Z",
                       "message": {"role": "user", "content": "late", "timestamp": 1_795_000_000_000}},
                      separators=(",", ":")).encode()  # fmt: skip
    with path.open("ab") as fh:
        fh.write(line[:40])  # a crash mid-write
    [torn] = list_sessions("/proj")
    assert torn.message_count == 2 and torn == read_session_info(path)
    with path.open("ab") as fh:
        fh.write(line[40:] + b"\n")
    [whole] = list_sessions("/proj")
    assert whole.message_count == 3 and whole == read_session_info(path)


def test_a_rewritten_file_is_read_whole(agent_dir: Path) -> None:
    manager = _session("/proj", "first question", answers=3)
    path = Path(manager.session_file or "")
    list_sessions("/proj")
    lines = path.read_bytes().splitlines(keepends=True)
    # a rewrite (a migration, another program) that also makes the file longer
    rewritten = (
        lines[0]
        + lines[1].replace(b"first question", b"other question, much longer now")
        + b"".join(lines[2:])
    )
    path.write_bytes(rewritten)
    [info] = list_sessions("/proj")
    assert info.first_message == "other question, much longer now" and info == read_session_info(path)


def test_a_broken_or_unwritable_cache_changes_nothing(agent_dir: Path, tmp_path: Path) -> None:
    _session("/proj", "first question")
    expected = list_sessions("/proj")
    cache = tmp_path / "cache" / "session-lists"
    [cache_file] = cache.iterdir()
    cache_file.write_text('{"version": 1, "files": {"x": 5, "y": {"size": "no"}}')  # not even JSON
    assert list_sessions("/proj") == expected
    cache_file.write_text(json.dumps({"version": 1, "files": {n: {"size": 1} for n in ("a", "b")}}))
    assert list_sessions("/proj") == expected
    os.environ["PIKO_CACHE_DIR"] = str(tmp_path / "file-not-folder")
    (tmp_path / "file-not-folder").write_text("")
    assert list_sessions("/proj") == expected


def test_files_that_are_not_sessions_stay_out(agent_dir: Path) -> None:
    manager = _session("/proj", "first question")
    folder = Path(manager.session_file or "").parent
    (folder / "notes.jsonl").write_text('{"type":"note"}\n')
    assert len(list_sessions("/proj")) == 1
    assert len(list_sessions("/proj")) == 1  # from the cache too


def test_looking_one_session_up_keeps_the_others_cached(agent_dir: Path) -> None:
    from piko.sessions.listing import resolve_session

    first = _session("/proj", "first question")
    second = _session("/proj", "second question")
    list_sessions("/proj")
    second.append_message(user("more"))  # the match changed: its record is written again
    assert resolve_session(second.session_id, "/proj").path == second.session_file  # lists the match only
    _same_size_other_bytes(Path(first.session_file or ""))
    assert {i.first_message for i in list_sessions("/proj")} == {"first question", "second question"}
