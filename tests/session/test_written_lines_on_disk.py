"""Message lines piko writes leave memory once on disk and come back byte for byte when asked for.

A long session otherwise holds each message twice (its structured form and its line); issue 20's
1,000-turn memory figure is about this. What is read back must be exactly what was written,
whatever happens to the file afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

from session_helpers import assistant
from session_helpers import user

from piko.sessions.entries import MessageEntry
from piko.sessions.manager import SessionManager


def _talk(manager: SessionManager, turns: int) -> None:
    for turn in range(turns):
        manager.append_message(user(f"question {turn}"))
        manager.append_message(assistant(f"answer {turn} " + "words " * 50))


def _file_lines(path: str) -> list[bytes]:
    return Path(path).read_bytes().splitlines(keepends=True)[1:]  # after the header


def test_written_message_lines_are_not_held_and_read_back_exactly(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    _talk(manager, 20)
    assert manager.session_file is not None
    messages = [e for e in manager.get_entries() if isinstance(e, MessageEntry)]
    assert len(messages) == 40
    assert all(e._line is None for e in messages)  # left on disk
    assert [e.line for e in manager.get_entries()] == _file_lines(manager.session_file)
    assert manager.build_context().messages[-1].content[0].text.startswith("answer 19")


def test_lines_come_back_after_the_file_is_removed_and_the_next_append_rewrites_it(
    agent_dir: Path, work: Path
) -> None:
    manager = SessionManager.create(str(work))
    _talk(manager, 5)
    assert manager.session_file is not None
    before = Path(manager.session_file).read_bytes()
    os.remove(manager.session_file)
    manager.append_message(user("after the removal"))
    after = Path(manager.session_file).read_bytes()
    assert after.startswith(before)  # every earlier line, byte for byte, from the held file
    assert after.count(b"\n") == before.count(b"\n") + 1


def test_a_file_cut_in_place_does_not_lose_the_messages(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    _talk(manager, 5)
    assert manager.session_file is not None
    written = _file_lines(manager.session_file)
    with open(manager.session_file, "r+b") as fh:
        fh.truncate(0)  # another program empties the file in place: the held descriptor sees it too
    assert [e.line for e in manager.get_entries()] == written  # written again from the messages


def test_appending_many_messages_holds_one_file_open(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    _talk(manager, 2)
    open_before = len(os.listdir("/proc/self/fd"))
    _talk(manager, 200)
    assert len(os.listdir("/proc/self/fd")) <= open_before + 1


def test_a_reopened_session_appends_and_reads_back_both_kinds_of_lines(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    _talk(manager, 3)
    assert manager.session_file is not None
    reopened = SessionManager.open(manager.session_file)
    _talk(reopened, 3)
    assert [e.line for e in reopened.get_entries()] == _file_lines(manager.session_file)
