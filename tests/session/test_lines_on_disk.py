"""Message lines left on disk: a large session file keeps in memory only the lines near its end;
the others are read again when the context, a fork or a copy needs them, byte for byte, and a
file changed behind piko's back is reported, never copied wrong."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from session_helpers import assistant
from session_helpers import user

from piko.data.wire import to_wire
from piko.sessions import reading as reading_module
from piko.sessions.manager import SessionManager
from piko.sessions.reading import read_entries
from piko.sessions.reading import read_entries_from


@pytest.fixture
def all_on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every message line is left on disk, whatever the file's size."""
    monkeypatch.setattr(reading_module, "KEEP_TAIL", 0)


def _session(cwd: Path, turns: int = 6) -> SessionManager:
    manager = SessionManager.create(str(cwd), str(cwd / "sessions"))
    manager.append_model_change("mock", "mock-1")
    for n in range(turns):
        manager.append_message(user(f"question {n}"))
        manager.append_message(assistant(f"answer {n}"))
    return manager


@pytest.mark.parametrize("seed", range(12))
def test_reading_in_chunks_finds_what_reading_lines_finds(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(reading_module, "_CHUNK", rng.choice([7, 50, 333, 4096]))
    lines: list[bytes] = []
    for n in range(rng.randint(1, 40)):
        kind = rng.random()
        if kind < 0.1:
            lines.append(b"not json at all\n")
        elif kind < 0.15:
            lines.append(b"\n")
        elif kind < 0.2:
            lines.append(
                b'{"type":"custom","customType":"x","id":"c%d","parentId":null,"timestamp":"t","data":1}\n'
                % n
            )
        else:
            message = {"role": "user", "content": "x" * rng.randint(0, 200), "timestamp": 1}
            entry = {"type": "message", "id": f"m{n}", "parentId": None, "timestamp": "t", "message": message}
            lines.append(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
    if rng.random() < 0.5:
        lines[-1] = lines[-1][: max(1, len(lines[-1]) // 2)]  # a torn last line
    data = b"".join(lines)
    expected, expected_problems = read_entries(io.BytesIO(data).readlines())
    found, problems = read_entries_from(io.BytesIO(data), 0, "/nonexistent", keep_tail=len(data))
    assert [(e.type, e.id, e.line) for e in found] == [(e.type, e.id, e.line) for e in expected]
    assert problems == expected_problems


def test_lines_on_disk_give_the_same_context_copies_and_forks(tmp_path: Path, all_on_disk: None) -> None:
    manager = _session(tmp_path)
    path = Path(manager.session_file or "")
    original = path.read_bytes()
    reopened = SessionManager.open(str(path))
    lazy = [e for e in reopened.get_entries() if e._line is None]
    assert len(lazy) == 11  # every message line was left on disk but the last (read whole: it may be torn)
    assert b"".join(e.line for e in reopened.get_entries()) == original.split(b"\n", 1)[1]
    context = reopened.build_context()
    assert [m.content[0].text for m in context.messages][-2:] == ["question 5", "answer 5"]

    middle = reopened.get_entries()[6].id
    copy = reopened.create_branched_session(middle)
    assert copy is not None
    copied = Path(copy).read_bytes().split(b"\n", 1)[1]
    assert original.split(b"\n", 1)[1].startswith(copied)

    fork = SessionManager.fork_from(str(path), str(tmp_path), str(tmp_path / "sessions"))
    assert Path(fork.session_file or "").read_bytes().split(b"\n", 1)[1] == original.split(b"\n", 1)[1]


def test_a_file_changed_behind_pikos_back_is_reported_not_copied(tmp_path: Path, all_on_disk: None) -> None:
    manager = _session(tmp_path)
    path = Path(manager.session_file or "")
    reopened = SessionManager.open(str(path))
    data = path.read_bytes()
    path.write_bytes(data.replace(b"question", b"QUESTION!"))  # every later offset moves
    context = reopened.build_context()
    assert len(context.messages) < 12
    assert any(
        "the session file changed on disk since it was opened" in d.message for d in reopened.diagnostics
    )
    with pytest.raises(ValueError, match="changed on disk"):
        _ = reopened.get_entries()[-2].line
    assert path.read_bytes() == data.replace(b"question", b"QUESTION!")  # nothing written over it


@pytest.mark.timeout(120)
def test_a_100_mb_line_is_read_in_linear_time_and_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading_module, "_CHUNK", 1 << 14)  # 6,400 chunks for the one line
    manager = _session(tmp_path, turns=1)
    path = Path(manager.session_file or "")
    big = {"type": "message", "id": "big00001", "parentId": manager.leaf_id, "timestamp": "2026-12-01T10:00:00.000Z",
           "message": {"role": "user", "content": "y" * 100_000_000, "timestamp": 1}}  # fmt: skip
    after = {"type": "message", "id": "end00001", "parentId": "big00001", "timestamp": "2026-12-01T10:00:01.000Z",
             "message": to_wire(assistant("after the big one"))}  # fmt: skip
    with path.open("ab") as fh:
        fh.write(json.dumps(big, separators=(",", ":")).encode() + b"\n")
        fh.write(json.dumps(after, separators=(",", ":")).encode() + b"\n")
    reopened = SessionManager.open(str(path))
    entry = reopened.get_entry("big00001")
    assert entry is not None and entry._line is None  # left on disk
    messages = reopened.build_context().messages
    assert len(messages[-2].content) == 100_000_000 and messages[-1].content[0].text == "after the big one"
