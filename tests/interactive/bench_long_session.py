"""Long-session benchmark of the interactive mode: a resumed 5,000-message session in tmux.

For each program (piko, and pi with ``--pi PATH``) and each ``--tui-mode`` (fullscreen, regular):

1. **First frame on resume**: ``--session FILE`` of 5,000 messages is launched in a fresh tmux
   pane and the pane is polled until the last answer and the footer are on the screen (wall
   time, and the CPU time the process used until then).
2. **Streaming**: one more prompt is answered with ``--words`` words (one delta each) by a
   scripted server on 127.0.0.1; the CPU time the process used while the answer streamed,
   divided by the deltas, is the cost per delta with the long transcript behind it.

    .venv/bin/python tests/interactive/bench_long_session.py [--pi PATH] [--messages 5000] [--json]

The session file is written in pi's format, so both programs read the same file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from support.llm_server import LLMServer  # noqa: E402
from tmux_terminal import Terminal  # noqa: E402


def write_session(path: Path, cwd: str, messages: int) -> str:
    """A pi session file of ``messages`` messages (questions and markdown answers); the last answer's text."""
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    lines = [
        {"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": start.isoformat(), "cwd": cwd}
    ]
    parent = None
    last = ""
    for n in range(messages):
        stamp = start + datetime.timedelta(seconds=n)
        millis = int(stamp.timestamp() * 1000)
        if n % 2 == 0:
            message: dict[str, Any] = {
                "role": "user",
                "content": [{"type": "text", "text": f"Question {n}: how does part {n} work?"}],
                "timestamp": millis,
            }
        else:
            last = f"Answer {n} ends here."
            text = f"Part **{n}** works like this:\n\n- first it reads\n- then it writes\n\n```python\nvalue = {n}\n```\n\n{last}"
            message = {
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "api": "openai-completions",
                "provider": "local",
                "model": "plain",
                "usage": {
                    "input": 100,
                    "output": 20,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 120,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
                "timestamp": millis,
            }
        entry_id = uuid.uuid4().hex[:8]
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": stamp.isoformat(),
                "message": message,
            }
        )
        parent = entry_id
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return last


def process_cpu(pane_pid: int) -> float:
    """CPU seconds (user + system) of the processes under the pane's shell."""
    total = 0.0
    children = subprocess.run(["pgrep", "-P", str(pane_pid)], capture_output=True, text=True).stdout.split()
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in children:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def measure(program: list[str], tui_mode: str, messages: int, words: int, root: Path) -> dict[str, Any]:
    answer = " ".join(f"word{i}" for i in range(words - 1)) + " STREAM-END."
    with LLMServer([{"blocks": [{"text": answer}]}]) as server:
        models = {
            "providers": {
                "local": {
                    "baseUrl": server.base_url + "/v1",
                    "api": "openai-completions",
                    "apiKey": "k",
                    "models": [{"id": "plain", "name": "Plain", "reasoning": False}],
                }
            }
        }
        terminal = Terminal(
            root,
            turns=[],
            tui_mode=tui_mode,
            width=120,
            height=40,
            agent_files={"models.json": json.dumps(models)},
        )
        terminal.env["PATH"] = os.environ.get("PATH", "")
        session = root / "long.jsonl"
        last = write_session(session, str(terminal.work), messages)
        args = ["--provider", "local", "--model", "plain", "--session", str(session), "--tui-mode", tui_mode]
        started = time.perf_counter()
        _start(terminal, program, args)
        try:
            terminal.wait_for(lambda s: last in s and "plain" in s, timeout=300)
            first_frame = time.perf_counter() - started
            pane = int(terminal._tmux("display", "-p", "#{pane_pid}").strip())
            cpu_start = process_cpu(pane)
            terminal.submit("one more")
            terminal.wait_for(r"STREAM-END\.", timeout=300)
            cpu_stream = process_cpu(pane) - cpu_start
        finally:
            terminal.close()
    return {
        "first_frame_s": round(first_frame, 2),
        "startup_cpu_s": round(cpu_start, 2),
        "per_delta_ms": round(cpu_stream * 1000 / words, 3),
    }


def _start(terminal: Terminal, program: list[str], args: list[str]) -> None:
    import tmux_terminal

    saved = tmux_terminal.PIKO
    tmux_terminal.PIKO = program[0]
    try:
        terminal.start([*program[1:], *args])
    finally:
        tmux_terminal.PIKO = saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pi", help="also measure this pi binary (pi 1.6: its node must be on PATH)")
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    programs = {"piko": [str(Path(sys.executable).with_name("piko"))]}
    if options.pi:
        programs["pi"] = [options.pi]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, program in programs.items():
            for tui_mode in ("fullscreen", "regular"):
                root = Path(tmp) / f"{name}-{tui_mode}"
                results[f"{name} {tui_mode}"] = measure(
                    program, tui_mode, options.messages, options.words, root
                )
                if not options.json:
                    print(f"{name:5} {tui_mode:10} {results[f'{name} {tui_mode}']}", flush=True)
    if options.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
