"""Battery: the listing cache never lists a session other than reading it afresh would.

A folder of session files goes through random changes (entries appended, a line cut short and
later completed, files rewritten longer or shorter, touched, replaced by something that is not
a session, deleted, new ones), with a listing after each: every record must equal the one
:func:`~piko.sessions.listing.read_session_info` makes from the file as it is, and no session
may be missing (a lost session is data lost).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from battery import Battery
from battery import both_sizes_within
from battery import tries

from piko.sessions.listing import list_sessions
from piko.sessions.listing import read_session_info


def _line(rng: random.Random, n: int) -> bytes:
    kind = rng.random()
    stamp = 1_780_000_000_000 + n * 1000 + rng.randint(0, 999)
    if kind < 0.1:
        entry = {"type": "session_info", "id": f"i{n:07x}", "parentId": None,
                 "timestamp": "2026-12-01T10:00:00.000Z", "name": rng.choice(["", " named ", f"n{n}"])}  # fmt: skip
    elif kind < 0.2:
        entry = {"type": "custom", "customType": "x", "id": f"c{n:07x}", "parentId": None,
                 "timestamp": "2026-12-01T10:00:00.000Z", "data": {"n": n}}  # fmt: skip
    else:
        role = rng.choice(["user", "assistant", "toolResult"])
        content = [{"type": "text", "text": f"text {n} " * rng.randint(1, 30)}] if rng.random() < 0.9 else []
        entry = {"type": "message", "id": f"m{n:07x}", "parentId": None, "timestamp": "2026-12-01T10:00:00.000Z",
                 "message": {"role": role, "content": content, "timestamp": stamp}}  # fmt: skip
    return json.dumps(entry, separators=(",", ":")).encode() + b"\n"


def _header(n: int, cwd: str) -> bytes:
    header = {
        "type": "session",
        "version": 3,
        "id": f"s-{n}",
        "timestamp": "2026-12-01T09:00:00.000Z",
        "cwd": cwd,
    }
    return json.dumps(header, separators=(",", ":")).encode() + b"\n"


def _change(folder: Path, rng: random.Random, counter: list[int], cwd: str) -> str:
    files = sorted(folder.glob("*.jsonl"))
    counter[0] += 1
    n = counter[0]
    choice = rng.random()
    if not files or choice < 0.1:
        path = folder / f"2026-12-01T09-00-00-000Z_s-{n}.jsonl"
        path.write_bytes(
            _header(n, cwd) + b"".join(_line(rng, n * 100 + i) for i in range(rng.randint(0, 5)))
        )
        return "new session"
    path = rng.choice(files)
    data = path.read_bytes()
    if choice < 0.45:
        with path.open("ab") as fh:
            fh.write(b"".join(_line(rng, n * 100 + i) for i in range(rng.randint(1, 4))))
        return "append"
    if choice < 0.55:
        with path.open("ab") as fh:
            fh.write(_line(rng, n)[: rng.randint(1, 30)])
        return "line cut short"
    if choice < 0.62:
        if not data.endswith(b"\n"):
            with path.open("ab") as fh:
                fh.write(b'"}}\n')  # finishes it, as JSON or as garbage
        return "complete a cut line"
    if choice < 0.72:
        lines = data.splitlines(keepends=True)
        rng.shuffle(lines[1:])
        extra = b"".join(_line(rng, n * 100 + i) for i in range(rng.randint(0, 3)))
        path.write_bytes(
            b"".join(lines) + extra if rng.random() < 0.5 else b"".join(lines[: max(1, len(lines) // 2)])
        )
        return "rewrite"
    if choice < 0.8:
        os.utime(path, None)
        return "touch"
    if choice < 0.87:
        path.write_bytes(b'{"type":"note"}\n' + data[len(data) // 2 :])
        return "not a session any more"
    if choice < 0.92:
        path.unlink()
        return "delete"
    path.write_bytes(data.replace(b"text", b"TEXT", 1))  # same size, maybe the same mtime tick
    return "same-size edit"


@both_sizes_within(600)
def test_the_listing_cache_agrees_with_reading_every_file(
    battery: Battery, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: bool
) -> None:
    monkeypatch.setenv("PIKO_CACHE_DIR", str(tmp_path / "cache"))
    rng = random.Random(20 + int(slow))
    tally = battery.case("sessions listing cache: random changes")
    counter = [0]
    for round_number in range(tries(3, 20, slow=slow)):
        folder = tmp_path / f"round-{round_number}"
        folder.mkdir()
        for _ in range(tries(60, 300, slow=slow)):
            what = _change(folder, rng, counter, "/proj")
            tally.tries += 1
            listed = {info.path: info for info in list_sessions("/proj", folder)}
            fresh = {str(p): read_session_info(p) for p in folder.glob("*.jsonl")}
            expected = {path: info for path, info in fresh.items() if info is not None}
            missing = set(expected) - set(listed)
            if missing:
                tally.lose(len(missing), f"after {what}: not listed: {sorted(missing)[:2]}")
            extra = set(listed) - set(expected)
            if extra:
                tally.fail(f"after {what}: listed but not a session: {sorted(extra)[:2]}")
            for path in set(expected) & set(listed):
                if listed[path] != expected[path]:
                    tally.fail(f"after {what}: {Path(path).name}: {listed[path]!r} != {expected[path]!r}")
