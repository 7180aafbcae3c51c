"""Battery: every file tool on special files and odd paths answers within a bound, and pi keeps serving.

One ``pi --mode rpc`` session per round; the scripted model calls read, write, edit, ls, grep and
find on each path in turn (devices, a FIFO with no writer, a socket, /proc files, a directory
given as a file, a NUL in the path, a 4 KB path, a symlink loop, a file deleted while it is
read, a file without permissions). Each call must end with a tool result (an error, or content
within the tools' output limit) and ``get_state`` must be answered after it; a result missing
from the saved session counts as lost. ``pi -p`` runs the worst of them too.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from battery import Battery
from battery import both_sizes
from battery import tries
from hangs_support import ANSWER_BOUND
from hangs_support import answers
from hangs_support import rpc_session
from hangs_support import run_print
from hangs_support import session_messages

from piko.testing import text_turn
from piko.testing import tool_turn

# Device, FIFO and socket paths: every tool must refuse them with an error.
SPECIAL = ("/dev/zero", "/dev/urandom", "fifo", "socket")
RESULT_LIMIT = 50 * 1024 + 1024  # the tools' 50 KB output limit and their notice


def _paths(root: Path) -> dict[str, str]:
    """The odd paths, created under ``root`` where they are files of ours."""
    root.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / "fifo")
    (root / "adir").mkdir()
    os.symlink("loop", root / "loop")
    secret = root / "secret.txt"
    secret.write_text("zzz\n")
    secret.chmod(0)
    long_path = str(root) + "/" + "/".join(["d" * 200] * 21) + "/f.txt"
    return {
        "/dev/zero": "/dev/zero",
        "/dev/urandom": "/dev/urandom",
        "fifo": str(root / "fifo"),
        "socket": str(root / "socket"),
        "/proc/self/mem": "/proc/self/mem",
        "/proc/self/status": "/proc/self/status",
        "/proc/self/new": "/proc/self/new/x.txt",
        "directory": str(root / "adir"),
        "NUL in path": str(root / "a\x00b.txt"),
        "4 KB path": long_path,
        "symlink loop": str(root / "loop"),
        "deleted mid-read": str(root / "big-{tool}.txt"),
        "no permission": str(secret),
    }


TOOL_ARGUMENTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "read": lambda path: {"path": path},
    "write": lambda path: {"path": path, "content": "hello\n"},
    "edit": lambda path: {"path": path, "edits": [{"oldText": "not there", "newText": "x"}]},
    "ls": lambda path: {"path": path},
    "grep": lambda path: {"pattern": "zzz", "path": path},
    "find": lambda path: {"pattern": "*.txt", "path": path},
}


def _round(root: Path, battery: Battery, tallies: dict[str, Any]) -> None:
    paths = _paths(root / "files")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(paths["socket"])
    calls: list[tuple[str, str, str]] = []  # (case, tool, path)
    for kind, template in paths.items():
        for tool in TOOL_ARGUMENTS:
            path = template.replace("{tool}", tool)
            if kind == "deleted mid-read":
                Path(path).write_bytes(b"a line of text\n" * 1_500_000)
            calls.append((f"{tool} {kind}", tool, path))
    turns = [tool_turn(tool, TOOL_ARGUMENTS[tool](path)) for _case, tool, path in calls] + [text_turn("done")]
    try:
        with rpc_session(root / "rpc", turns) as process:
            process.send({"id": "p", "type": "prompt", "message": "try every file"})
            results = 0
            for index, (case, _tool, path) in enumerate(calls):
                tally = _tally(battery, tallies, case)
                tally.tries += 1
                try:
                    process.wait_for(lambda r: r.get("type") == "tool_execution_start", timeout=ANSWER_BOUND)
                    if "deleted mid-read" in case and os.path.exists(path):
                        os.unlink(path)
                    end = process.wait_for(
                        lambda r: r.get("type") == "tool_execution_end", timeout=ANSWER_BOUND
                    )
                except (TimeoutError, EOFError) as exc:
                    tally.fail(f"no tool result: {exc}".splitlines()[0])
                    for later, _t, _p in calls[index + 1 :]:  # the session is stuck: the rest is not reached
                        _tally(battery, tallies, later).tries += 1
                        tallies[later].fail("not reached: an earlier call hung")
                    return
                results += 1
                problem = _result_problem(case, end)
                if problem:
                    tally.fail(problem)
                if not answers(process, f"s{index}"):
                    tally.fail("get_state was not answered after the result")
            process.wait_for(lambda r: r.get("type") == "agent_end", timeout=ANSWER_BOUND)
            assert process.close(timeout=ANSWER_BOUND) == 0
        saved = [m for m in session_messages(root / "rpc") if m["role"] == "toolResult"]
        if len(saved) < results:
            tallies[calls[0][0]].lose(results - len(saved), "tool results missing from the session file")
    finally:
        listener.close()


def _tally(battery: Battery, tallies: dict[str, Any], case: str) -> Any:
    if case not in tallies:
        tallies[case] = battery.case(f"hangs special files: {case}")
    return tallies[case]


def _result_problem(case: str, end: dict[str, Any]) -> str | None:
    """What is wrong with a tool result, or ``None``."""
    text = "".join(block.get("text", "") for block in end["result"].get("content", []))
    if len(text.encode("utf-8", "replace")) > RESULT_LIMIT:
        return f"unbounded result: {len(text)} characters"
    kind = case.split(" ", 1)[1]
    if kind in SPECIAL and not end.get("isError"):
        return f"a special file was not refused: {text[:120]!r}"
    return None


@both_sizes
def test_file_tools_on_special_files_answer_and_pi_keeps_serving(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    tallies: dict[str, Any] = {}
    for round_index in range(tries(1, 5, slow=slow)):
        _round(tmp_path / f"round{round_index}", battery, tallies)


PRINT_CASES = {
    "read /dev/zero": ("read", {"path": "/dev/zero"}),
    "read fifo": ("read", {"path": "fifo"}),
    "write /proc/self/new": ("write", {"path": "/proc/self/new/x.txt", "content": "x"}),
    "grep /dev/urandom": ("grep", {"pattern": "x", "path": "/dev/urandom"}),
}


@both_sizes
def test_print_mode_ends_after_a_tool_on_a_special_file(battery: Battery, tmp_path: Path, slow: bool) -> None:
    for name, (tool, arguments) in PRINT_CASES.items():
        tally = battery.case(f"hangs special files: pi -p {name}")
        for attempt in tally.attempts(tries(1, 3, slow=slow)):
            root = tmp_path / f"{name.replace(' ', '_').replace('/', '_')}-{attempt}"
            root.mkdir(parents=True)
            work_fifo = root / "work" / "fifo"

            def make_fifo(path: Path = work_fifo) -> None:
                path.parent.mkdir(parents=True, exist_ok=True)
                os.mkfifo(path)

            if tool == "read" and arguments["path"] == "fifo":
                make_fifo()
            done = run_print(root, [tool_turn(tool, arguments), text_turn("all done")], "go")
            if done is None:
                tally.fail("pi -p did not end")
                continue
            if done.returncode != 0 or "all done" not in done.stdout:
                tally.fail(f"exit {done.returncode}: {done.stderr.strip()[-200:]}")
            saved = session_messages(root)
            if [m["role"] for m in saved] != ["user", "assistant", "toolResult", "assistant"]:
                tally.lose(1, f"session holds {[m['role'] for m in saved]}")
