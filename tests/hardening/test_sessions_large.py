"""Battery: large and broken session files load with bounded memory and say what they left out.

Each try writes a real file and opens it in a fresh interpreter (``SessionManager.open`` and
``build_context``), which reports its peak memory (``VmHWM``), its diagnostics and the context
it built. Cases:

- one message line of 20 MB (100 MB under ``-m slow``) in the middle of a session: loaded, and
  the process's peak stays within a few times the line (the line is not copied chunk by chunk);
- 20,000 entries (200,000 under ``-m slow``) whose tree is broken: a parent cycle, entries whose
  parent is missing, a garbage line every thousand: the conversation loads from where the tree
  holds, every broken line is reported, nothing is rewritten.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from battery import Battery
from battery import both_sizes_within
from battery import tries

_CHILD = r"""
import json, sys
from piko.sessions.manager import SessionManager
m = SessionManager.open(sys.argv[1])
ctx = m.build_context()
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"peak_mb": peak / 1024, "messages": len(ctx.messages), "entries": len(m.get_entries()),
                  "diagnostics": [str(d) for d in m.diagnostics],
                  "sizes": [len(getattr(x, "content", "") or "") for x in ctx.messages[-3:]]}))
"""


def _open(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise AssertionError(done.stderr[-500:])
    return json.loads(done.stdout)


def _entry(n: int, parent: str | None, role: str = "user", text: str = "hello") -> bytes:
    message: dict = {
        "role": role,
        "content": [{"type": "text", "text": text}],
        "timestamp": 1_780_000_000_000 + n,
    }
    if role == "assistant":
        message.update(api="openai-completions", provider="mock", model="mock-1", stopReason="stop",
                       usage={"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})  # fmt: skip
    entry = {"type": "message", "id": f"e{n:07x}", "parentId": parent, "timestamp": "2026-12-01T10:00:00.000Z",
             "message": message}  # fmt: skip
    return json.dumps(entry, separators=(",", ":")).encode() + b"\n"


HEADER = b'{"type":"session","version":3,"id":"big","timestamp":"2026-12-01T09:00:00.000Z","cwd":"/tmp"}\n'


@both_sizes_within(1200)
def test_large_and_broken_session_files(battery: Battery, tmp_path: Path, slow: bool) -> None:
    huge = battery.case("sessions large: one huge message line")
    for n in huge.attempts(tries(1, 2, slow=slow)):
        size = (100 if slow else 20) * 1_000_000
        path = tmp_path / f"huge-{n}.jsonl"
        with path.open("wb") as fh:
            fh.write(HEADER + _entry(0, None) + _entry(1, "e0000000", "assistant"))
            fh.write(_entry(2, "e0000001", text="z" * size))
            fh.write(_entry(3, "e0000002", "assistant", "after"))
        before = path.read_bytes()
        found = _open(path)
        if found["messages"] != 4 or found["sizes"][-2] != 1:
            huge.fail(f"{size} bytes: context {found['messages']} messages, sizes {found['sizes']}")
        if found["peak_mb"] > 60 + 5 * size / 1e6:
            huge.fail(f"{size / 1e6:.0f} MB line: peak {found['peak_mb']:.0f} MB")
        if path.read_bytes() != before:
            huge.fail("the file was rewritten")

    broken = battery.case("sessions large: broken tree at scale")
    for n in broken.attempts(tries(1, 2, slow=slow)):
        count = 200_000 if slow else 20_000
        path = tmp_path / f"broken-{n}.jsonl"
        garbage = 0
        with path.open("wb") as fh:
            fh.write(HEADER)
            parent: str | None = None
            for i in range(count):
                if i % 1000 == 999:
                    fh.write(b"{not json\n")
                    garbage += 1
                    continue
                this_parent = parent
                if i % 5000 == 4999:
                    this_parent = "missing1"  # a parent not in the file
                if i == count - 10:
                    this_parent = f"e{count - 5:07x}"  # a cycle through the last entries
                fh.write(_entry(i, this_parent, "user" if i % 2 == 0 else "assistant"))
                parent = f"e{i:07x}"
        before = path.read_bytes()
        found = _open(path)
        skipped = [d for d in found["diagnostics"] if "line skipped" in d]
        if len(skipped) != garbage:
            broken.lose(garbage - len(skipped), f"{garbage} garbage lines, {len(skipped)} reported")
        if not any("cycle" in d or "is not in the file" in d for d in found["diagnostics"]):
            broken.fail(f"the broken tree is not reported: {found['diagnostics'][:3]}")
        if found["messages"] == 0:
            broken.fail("no conversation loaded")
        if path.read_bytes() != before:
            broken.fail("the file was rewritten")
