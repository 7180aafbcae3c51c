"""Benchmark: ``pi --export`` of a large session (wall time, page size), optionally against pi.

Generates a realistic session with :func:`bench_session_load.write_realistic_session`
(``--entries`` entries, default 5,000: prompts, replies with thinking and code, tool calls with
file-sized outputs), then runs ``pi --export <file> <out.html>`` in a fresh process per run and
reports the median wall time and the size of the page. ``--compare-pi`` runs pi 0.73.1's own
``--export`` on the same file.

    .venv/bin/python benchmarks/bench_export.py [--entries N] [--runs R] [--compare-pi [PREFIX]] [--json]

Target: median under 5 s for the default 5,000 entries (about 6 MB of session); exits 1 when missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_session_load import write_realistic_session

TARGET_S = 5.0


def run(command: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=600
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {result.stderr.decode(errors='replace')[-800:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--compare-pi", metavar="PREFIX", nargs="?", const="/work/scratch/pi073", default=None
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        session = os.path.join(tmp, "session.jsonl")
        size = write_realistic_session(session, args.entries)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "PIKO_"))}
        env.update(
            HOME=tmp,
            PI_CODING_AGENT_DIR=os.path.join(tmp, "agent"),
            PIKO_CACHE_DIR=os.path.join(tmp, "cache"),
        )
        pi = str(Path(sys.executable).with_name("pi"))
        out = os.path.join(tmp, "piko.html")
        run([pi, "--export", session, out], tmp, env)  # warm-up (.pyc files)
        times = [run([pi, "--export", session, out], tmp, env) for _ in range(args.runs)]
        figures: dict[str, float] = {
            "entries": args.entries,
            "session_mb": round(size / 1e6, 2),
            "piko_median_s": round(statistics.median(times), 3),
            "piko_page_mb": round(os.path.getsize(out) / 1e6, 2),
        }
        if args.compare_pi:
            node_pi = os.path.join(args.compare_pi, "node_modules", ".bin", "pi")
            pi_out = os.path.join(tmp, "pi.html")
            pi_times = [
                run([node_pi, "--export", session, pi_out], tmp, env) for _ in range(max(1, args.runs // 2))
            ]
            figures["pi_median_s"] = round(statistics.median(pi_times), 3)
            figures["pi_page_mb"] = round(os.path.getsize(pi_out) / 1e6, 2)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:<16}{value}")
    ok = figures["piko_median_s"] <= TARGET_S
    if not ok:
        print(f"missed the target: median {figures['piko_median_s']} s > {TARGET_S} s", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
