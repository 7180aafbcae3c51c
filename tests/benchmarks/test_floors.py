"""The floor programs of ``benchmarks/floors/`` still do their jobs (their figures back issue 20's note).

Each runs as ``bench_instructions.py --floor`` and ``bench_pi16.py --floor`` run it, in a real
subprocess: a streamed turn against a scripted server on 127.0.0.1, one RPC answer, an eager
read of a session file. (``tui_ready.py`` needs a terminal; the interactive benchmark runs it.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from piko.testing import LLMServer

FLOORS = Path(__file__).resolve().parents[2] / "benchmarks" / "floors"


def run(script: str, *args: str, stdin: bytes = b"") -> str:
    done = subprocess.run(
        [sys.executable, str(FLOORS / script), *args], input=stdin, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout.decode()


def test_the_print_floor_streams_one_turn() -> None:
    with LLMServer([{"blocks": [{"text": "Hi there from the floor"}]}]) as server:
        assert run("print_turn.py", server.base_url + "/v1").strip() == "Hi there from the floor"


def test_the_rpc_floor_answers_one_command() -> None:
    answer = json.loads(run("rpc_answer.py", stdin=b'{"type":"get_state","id":"7"}\n'))
    assert answer == {"id": "7", "type": "response", "command": "get_state", "success": True}


def test_the_session_floor_reads_every_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"type": "message", "n": n}) + "\n" for n in range(50)))
    assert "orjson.loads of 50 lines" in run("session_decode.py", str(path))
