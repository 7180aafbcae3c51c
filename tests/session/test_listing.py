"""Listing sessions, the most recent one, ``--session``/``--fork`` by path or id, the read-only view."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_helpers import FIXTURES
from session_helpers import assistant
from session_helpers import copy_fixture
from session_helpers import user

from piko.sessions.listing import default_session_dir
from piko.sessions.listing import find_most_recent_session
from piko.sessions.listing import list_all_sessions
from piko.sessions.listing import list_sessions
from piko.sessions.listing import read_session_info
from piko.sessions.listing import resolve_session
from piko.sessions.manager import SessionFileError
from piko.sessions.manager import SessionInOtherProjectError
from piko.sessions.manager import SessionManager
from piko.sessions.manager import SessionNotFoundError
from piko.sessions.readonly import ReadonlySessionManager


def make_session(
    cwd: str, first: str, *, name: str | None = None, answers: int = 1, ts: int = 1_780_000_000_000
) -> SessionManager:
    manager = SessionManager.create(cwd)
    manager.append_model_change("mock", "mock-1")
    manager.append_message(user(first, timestamp=ts))
    for n in range(answers):
        manager.append_message(assistant(f"answer {n}", timestamp=ts + 1000 * (n + 1)))
    if name is not None:
        manager.append_session_info(name)
    return manager


def test_list_sessions_of_a_project(agent_dir: Path, tmp_path: Path) -> None:
    old = make_session("/proj/a", "older question", ts=1_780_000_000_000)
    new = make_session("/proj/a", "newer question", name="Named", answers=2, ts=1_790_000_000_000)
    make_session("/proj/b", "elsewhere")
    infos = list_sessions("/proj/a")
    assert [i.id for i in infos] == [new.session_id, old.session_id]  # newest activity first
    info = infos[0]
    assert info.path == new.session_file and info.cwd == "/proj/a" and info.name == "Named"
    assert info.message_count == 3 and info.first_message == "newer question"
    assert info.modified == datetime.datetime.fromtimestamp(1_790_000_002, tz=datetime.UTC)
    assert info.created.tzinfo is not None and info.parent_session_path is None
    assert info.all_messages_text == "newer question answer 0 answer 1"
    assert {i.cwd for i in list_all_sessions()} == {"/proj/a", "/proj/b"}
    assert len(list_all_sessions()) == 3
    assert list_sessions("/nowhere") == []


def test_session_info_of_pi_files_and_edge_cases(tmp_path: Path) -> None:
    """What pi's ``SessionManager.list`` says of the same file (``list_by_pi.json``)."""
    (expected,) = json.loads((FIXTURES / "pi_rich" / "list_by_pi.json").read_text(encoding="utf-8"))
    info = read_session_info(copy_fixture(FIXTURES / "pi_rich" / "session.jsonl", tmp_path))
    assert info is not None
    got = {
        "id": info.id,
        "cwd": info.cwd,
        "name": info.name,
        "created": int(info.created.timestamp() * 1000),
        "modified": round(info.modified.timestamp() * 1000),
        "messageCount": info.message_count,
        "firstMessage": info.first_message,
        "allMessagesText": info.all_messages_text,
    }
    assert got == expected

    lone = tmp_path / "lone.jsonl"
    lone.write_text(
        '{"type":"session","version":3,"id":"z","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
    )
    info = read_session_info(lone)
    assert info is not None and info.first_message == "(no messages)" and info.message_count == 0
    assert info.modified == info.created == datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    other = tmp_path / "other.jsonl"
    other.write_text('{"type":"message"}\n')
    assert read_session_info(other) is None


def test_continue_recent_takes_the_newest_file_or_starts_anew(agent_dir: Path) -> None:
    first = make_session("/proj/c", "one")
    second = make_session("/proj/c", "two")
    os.utime(first.session_file or "", (time.time() + 100, time.time() + 100))
    directory = default_session_dir("/proj/c")
    (Path(directory) / "zz-not-a-session.jsonl").write_text('{"x":1}\n')
    assert find_most_recent_session(directory) == first.session_file
    resumed = SessionManager.continue_recent("/proj/c")
    assert resumed.session_id == first.session_id and len(resumed.get_entries()) == 3
    assert second.session_id != resumed.session_id
    fresh = SessionManager.continue_recent("/proj/empty")
    assert fresh.get_entries() == [] and fresh.session_file is not None
    assert not os.path.exists(fresh.session_file)


def test_open_by_path_or_partial_id(agent_dir: Path, tmp_path: Path) -> None:
    mine = make_session("/proj/d", "mine")
    theirs = make_session("/proj/e", "theirs")
    by_path = SessionManager.open(mine.session_file or "", cwd="/proj/d")
    assert by_path.session_id == mine.session_id
    by_id = SessionManager.open(mine.session_id[:13], cwd="/proj/d")
    assert by_id.session_file == mine.session_file and by_id.cwd == "/proj/d"
    with pytest.raises(SessionInOtherProjectError) as caught:
        SessionManager.open(theirs.session_id, cwd="/proj/d")
    assert caught.value.path == theirs.session_file and caught.value.cwd == "/proj/e"
    assert str(caught.value) == "Session found in different project: /proj/e"
    with pytest.raises(SessionNotFoundError, match="No session found matching 'ffffffff'"):
        SessionManager.open("ffffffff", cwd="/proj/d")
    assert resolve_session("x/y", "/proj/d").kind == "path"
    assert resolve_session("name.jsonl", "/proj/d").kind == "path"
    assert resolve_session(theirs.session_id[:8], "/proj/e").kind == "local"
    # The session's own cwd wins, unless overridden.
    assert SessionManager.open(theirs.session_file or "", cwd="/proj/d").cwd == "/proj/e"
    assert SessionManager.open(theirs.session_file or "", cwd="/proj/d", cwd_override="/else").cwd == "/else"


def test_fork_from_another_project(agent_dir: Path) -> None:
    theirs = make_session("/proj/f", "theirs")
    forked = SessionManager.fork_from(theirs.session_id, "/proj/g")
    assert forked.cwd == "/proj/g" and forked.session_id != theirs.session_id
    assert Path(forked.session_file or "").parent == Path(default_session_dir("/proj/g"))
    assert forked.header.parent_session == theirs.session_file
    assert [e.id for e in forked.get_entries()] == [e.id for e in theirs.get_entries()]
    forked.append_message(user("continue here"))
    assert len(Path(forked.session_file or "").read_text().splitlines()) == 5
    with pytest.raises(SessionFileError, match="Cannot fork: source session file is empty or invalid"):
        SessionManager.fork_from("/does/not/exist.jsonl", "/proj/g")
    with pytest.raises(SessionNotFoundError):
        SessionManager.fork_from("abcdef", "/proj/g")


def test_fork_from_migrates_an_old_source_without_touching_it(agent_dir: Path, tmp_path: Path) -> None:
    source = copy_fixture(FIXTURES / "v1_session.jsonl", tmp_path, "old.jsonl")
    before = source.read_bytes()
    forked = SessionManager.fork_from(str(source), "/proj/h")
    assert source.read_bytes() == before
    lines = [json.loads(x) for x in Path(forked.session_file or "").read_text().splitlines()]
    assert lines[0]["version"] == 3 and all("id" in e and "parentId" in e for e in lines[1:])
    # a summary, 2 kept and 2 later messages, as pi (v1_context_by_pi.json)
    assert len(forked.build_context().messages) == 5


def test_read_only_view(agent_dir: Path) -> None:
    manager = make_session("/proj/i", "q", name="N")
    view = manager.read_only_session_manager()
    assert isinstance(view, ReadonlySessionManager)
    assert view.get_session_id() == manager.session_id and view.get_session_file() == manager.session_file
    assert view.get_cwd() == "/proj/i" and view.get_session_name() == "N"
    assert view.get_header().id == manager.session_id and view.get_session_dir() == manager.session_dir
    leaf = view.get_leaf_id()
    assert leaf == manager.leaf_id and view.get_leaf_entry() is manager.get_entry(leaf or "")
    assert [e.id for e in view.get_branch()] == [e.id for e in manager.get_branch()]
    assert len(view.get_entries()) == 4 and len(view.get_tree()) == 1
    new = manager.append_message(user("later"))
    assert view.get_leaf_id() == new and view.get_entry(new) is not None  # a live view
    manager.append_label(new, "L")
    assert view.get_label(new) == "L"
    for name in (
        "append_message",
        "append_label",
        "branch",
        "reset_leaf",
        "create_branched_session",
        "append_custom",
    ):
        assert not hasattr(view, name)
    with pytest.raises(AttributeError):
        view.extra = 1  # type: ignore[attr-defined]


_LISTING_CHILD = r"""
import json, os, sys
from piko.sessions.listing import list_sessions, read_session_info

def peak_mb():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024

before = peak_mb()
infos = list_sessions("/tmp", session_dir=sys.argv[1])
one = read_session_info(os.path.join(sys.argv[1], "big.jsonl"))
growth = peak_mb() - before
text = len(infos[0].all_messages_text)  # the text itself is as large as the messages' texts
print(json.dumps({"growth_mb": growth, "listed": [(i.message_count, i.first_message) for i in infos],
                  "one": one.message_count, "text": text}))
"""


@pytest.mark.parametrize("cache", ["1", "0"], ids=["without-cache", "with-cache"])
def test_listing_a_large_file_takes_memory_for_a_block_not_the_file(tmp_path: Path, cache: str) -> None:
    """A 48 MB session and a 48 MB file that is no session: listed in blocks of lines, so the
    process grows by a few MB, not by the files (reading them whole grew it about threefold)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    header = {
        "type": "session",
        "version": 3,
        "id": "big",
        "timestamp": "2026-12-03T09:00:00.000Z",
        "cwd": "/tmp",
    }
    lines = [json.dumps(header)]
    text = "word " * 200
    count = 48_000
    for n in range(count):
        role = "user" if n % 2 == 0 else "assistant"
        message = {
            "role": role,
            "content": [{"type": "text", "text": f"{n} {text}"}],
            "timestamp": 1_780_000_000_000 + n,
        }
        parent = f'"e{n - 1}"' if n else "null"
        lines.append(f'{{"type":"message","id":"e{n}","parentId":{parent},"timestamp":"2026-12-03T09:00:00.000Z",'
                     f'"message":{json.dumps(message)}}}')  # fmt: skip
    big = folder / "big.jsonl"
    big.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "noise.jsonl").write_bytes(b"not json, no session header anywhere\n" * (48 << 20 >> 5))
    size_mb = big.stat().st_size / (1 << 20)
    env = {**os.environ, "PIKO_NO_CACHE": cache, "PIKO_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", _LISTING_CHILD, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["listed"] == [[count, f"0 {text}"]]  # the noise file is no session: left out
    assert found["one"] == count
    assert found["text"] > count * len(text)
    assert size_mb > 45
    assert found["growth_mb"] < 24, found  # a block of 1 MiB and its lines, a few times over at most
