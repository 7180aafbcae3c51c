"""RPC mode benchmark: time to the first ``get_state`` answer, and ``get_state`` round trips per second.

Start-up: ``pi --mode rpc --no-session --provider mock --model mock-1`` is started with the pi
samples' ``models.json`` in an empty config dir, a ``get_state`` is written at once, and the
clock stops when its response line arrives (medians over many fresh processes). Round trips:
one process answers ``get_state`` one at a time (request, wait, repeat) and pipelined (thousands
written at once). ``--pi`` also measures pi 0.73.1 (Node) where it is installed, for reference.

    .venv/bin/python benchmarks/bench_rpc.py [--runs 20] [--pi] [--importtime] [--json]

Target (issue "RPC mode"): first response within 150 ms (pi 0.73.1: about 1.0 s here).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_MS = 150.0
ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "fixtures" / "pi_rpc_samples" / "models.json"
PIKO = [str(Path(sys.executable).with_name("pi"))]
PI_NODE = Path("/work/scratch/pi/node_modules/.bin/pi")
ARGS = ["--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"]


def environment(base: Path) -> tuple[dict[str, str], str]:
    """An empty config dir holding the samples' models.json, a home and a work dir."""
    agent = base / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    shutil.copy(MODELS, agent / "models.json")
    work = base / "work"
    work.mkdir(exist_ok=True)
    # PYTHONDONTWRITEBYTECODE is dropped: a user's machine has .pyc files after the first run
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("PI_", "PIKO_")) and not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"
    }  # fmt: skip
    env.update(PI_CODING_AGENT_DIR=str(agent), PIKO_CACHE_DIR=str(base / "cache"), HOME=str(base))
    return env, str(work)


class Lines:
    """Reads whole lines from a pipe with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def next(self, timeout: float = 30.0) -> bytes:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError("no answer")
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError("the process closed its output")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


def first_response_ms(command: list[str], env: dict[str, str], cwd: str) -> float:
    """Milliseconds from starting the process to reading the response of a ``get_state`` sent at once."""
    started = time.perf_counter()
    proc = subprocess.Popen([*command, *ARGS], env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    reader = Lines(proc.stdout.fileno())
    try:
        while True:
            record = json.loads(reader.next())
            if record.get("type") == "response" and record.get("id") == "s":
                break
        elapsed = (time.perf_counter() - started) * 1000
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return elapsed


def round_trips(env: dict[str, str], cwd: str, seconds: float, pipelined: int) -> tuple[float, float]:
    """(sequential, pipelined) ``get_state`` answers per second from one process."""
    proc = subprocess.Popen([*PIKO, *ARGS], env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    reader = Lines(proc.stdout.fileno())
    try:
        count = 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            proc.stdin.write(b'{"id":"r","type":"get_state"}\n')
            proc.stdin.flush()
            reader.next()
            count += 1
        sequential = count / (time.perf_counter() - started)
        started = time.perf_counter()
        proc.stdin.write(b'{"id":"q","type":"get_state"}\n' * pipelined)
        proc.stdin.flush()
        for _ in range(pipelined):
            reader.next()
        burst = pipelined / (time.perf_counter() - started)
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
    return sequential, burst


def import_profile(env: dict[str, str], cwd: str, top: int = 15) -> list[tuple[str, int]]:
    """The slowest imports (cumulative microseconds) of an RPC start-up, from ``-X importtime``."""
    script = (
        "import runpy, sys; sys.argv = ['pi', *sys.argv[1:]]; runpy.run_module('piko', run_name='__main__')"
    )
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", script, *ARGS], env=env, cwd=cwd,
                          input=b'{"id":"s","type":"get_state"}\n', capture_output=True, timeout=60)  # fmt: skip
    rows = []
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line[len("import time:") :].split("|")]
            if parts[1].isdigit():
                rows.append((parts[2], int(parts[1])))
    rows.sort(key=lambda r: -r[1])
    return rows[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="how long to measure sequential round trips"
    )
    parser.add_argument("--pipelined", type=int, default=5000)
    parser.add_argument("--pi", action="store_true", help="also measure pi 0.73.1 (Node), where installed")
    parser.add_argument("--importtime", action="store_true", help="list the slowest imports of a start-up")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-rpc-") as tmp:
        env, cwd = environment(Path(tmp))
        contenders: dict[str, list[str]] = {"piko": PIKO}
        if options.pi and PI_NODE.exists():
            contenders["pi 0.73.1"] = [str(PI_NODE)]
        for command in contenders.values():  # warm-up: caches, .pyc files
            first_response_ms(command, env, cwd)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(options.runs):  # alternate, so a busy moment hurts both alike
            for name, command in contenders.items():
                times[name].append(first_response_ms(command, env, cwd))
        sequential, burst = round_trips(env, cwd, options.seconds, options.pipelined)
        profile = import_profile(env, cwd) if options.importtime else []

    result: dict[str, Any] = {
        "first_response_ms": {name: round(statistics.median(v), 1) for name, v in times.items()},
        "first_response_ms_min": {name: round(min(v), 1) for name, v in times.items()},
        "get_state_per_second": {"sequential": round(sequential), "pipelined": round(burst)},
        "target_ms": TARGET_MS,
    }
    if profile:
        result["slowest_imports_us"] = profile
    ok = result["first_response_ms"]["piko"] <= TARGET_MS
    if options.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'':<12}{'median ms':>12}{'min ms':>10}   (first get_state response after start)")
        for name in contenders:
            print(
                f"{name:<12}{result['first_response_ms'][name]:>12}{result['first_response_ms_min'][name]:>10}"
            )
        print(f"get_state round trips: {result['get_state_per_second']['sequential']}/s one at a time, "
              f"{result['get_state_per_second']['pipelined']}/s pipelined")  # fmt: skip
        for module, micros in profile:
            print(f"  import {module:<50}{micros / 1000:>8.1f} ms")
        print(f"target: piko within {TARGET_MS:g} ms: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
