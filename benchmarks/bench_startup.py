"""Start-up benchmark: wall time and peak memory of ``pi --version``, ``pi --help`` and ``pi plugins``.

Each command runs many times in a fresh process (after one warm-up run that fills the discovery
cache) against the bare interpreter, ``python -I -c pass``, on the same machine. Every run gets an
empty ``PI_CODING_AGENT_DIR`` and cache so the user's configuration does not count.

    .venv/bin/python benchmarks/bench_startup.py [--runs 40] [--json]

Target (issue "Kernel and plugin platform"): ``pi --version`` at most 3x the bare interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VERSION_TARGET_RATIO = 3.0


GNU_TIME = "/usr/bin/time"


def run_once(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {proc.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed * 1000, cpu * 1000


def peak_rss_mb(command: list[str], env: dict[str, str], cwd: str) -> float | None:
    """Peak RSS of one run, measured by GNU time (a child forked from this big Python process
    would report this process's memory as its own), or None where GNU time is missing."""
    if not os.path.exists(GNU_TIME):
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as out:
        proc = subprocess.run([GNU_TIME, "-o", out.name, "-f", "%M", *command], env=env, cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        text = out.read().strip().splitlines()
    if proc.returncode != 0 or not text or not text[-1].isdigit():
        return None
    return int(text[-1]) / 1024.0


def measure(commands: list[list[str]], env: dict[str, str], cwd: str, runs: int) -> list[dict[str, Any]]:
    """Runs alternate between the commands, so that a busy machine slows them alike."""
    for command in commands:
        run_once(command, env, cwd)  # warm-up: file cache, discovery cache, .pyc files
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, command in enumerate(commands):
            wall, cpu = run_once(command, env, cwd)
            walls[i].append(wall)
            cpus[i].append(cpu)
    results = []
    for command, times, cpu_times in zip(commands, walls, cpus, strict=True):
        times.sort()
        rss = [m for m in (peak_rss_mb(command, env, cwd) for _ in range(5)) if m is not None]
        results.append(
            {
                "command": " ".join(
                    Path(command[0]).name if i == 0 else part for i, part in enumerate(command)
                ),
                "runs": runs,
                "median_ms": statistics.median(times),
                "min_ms": times[0],
                "p90_ms": times[max(0, int(len(times) * 0.9) - 1)],
                "median_cpu_ms": statistics.median(cpu_times),
                "peak_rss_mb": statistics.median(rss) if rss else None,
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=40, help="runs per command (default 40)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--pi", default=str(Path(sys.executable).parent / "pi"), help="the pi console script")
    args = parser.parse_args(argv)
    if not Path(args.pi).exists():
        raise SystemExit(f"{args.pi} not found: install piko in this environment first (pip install -e .)")

    scratch = Path(tempfile.mkdtemp(prefix="piko-bench-"))
    try:
        # A user's machine keeps .pyc files: let the warm-up run write them (unlike this sandbox's default).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PIKO_", "PI_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            HOME=str(scratch / "home"),
            PI_CODING_AGENT_DIR=str(scratch / "agent"),
            PIKO_CACHE_DIR=str(scratch / "cache"),
        )
        for sub in ("home", "agent", "cache", "project"):
            (scratch / sub).mkdir()
        cwd = str(scratch / "project")
        commands = [
            [sys.executable, "-I", "-c", "pass"],
            [args.pi, "--version"],
            [args.pi, "--help"],
            [args.pi, "plugins"],
        ]
        results = measure(commands, env, cwd, args.runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    bare, bare_cpu = results[0]["median_ms"], results[0]["median_cpu_ms"]
    for result in results:
        result["ratio_to_bare"] = result["median_ms"] / bare
        result["cpu_ratio_to_bare"] = result["median_cpu_ms"] / bare_cpu
    version_ratio = results[1]["ratio_to_bare"]
    if args.json:
        print(json.dumps({"results": results, "version_target_ratio": VERSION_TARGET_RATIO}, indent=2))
    else:
        print(
            f"{'command':<22}{'median':>10}{'min':>10}{'p90':>10}{'x bare':>8}{'CPU':>10}{'x bare':>8}{'peak RSS':>11}"
        )
        for r in results:
            rss = f"{r['peak_rss_mb']:>8.1f} MB" if r["peak_rss_mb"] is not None else "       n/a"
            print(
                f"{r['command']:<22}{r['median_ms']:>8.1f}ms{r['min_ms']:>8.1f}ms{r['p90_ms']:>8.1f}ms"
                f"{r['ratio_to_bare']:>7.2f}x{r['median_cpu_ms']:>8.1f}ms{r['cpu_ratio_to_bare']:>7.2f}x{rss}"
            )
        verdict = "meets" if version_ratio <= VERSION_TARGET_RATIO else "MISSES"
        print(f"\npi --version is {version_ratio:.2f}x the bare interpreter (wall, median of {args.runs}): "
              f"{verdict} the target of {VERSION_TARGET_RATIO:g}x")  # fmt: skip
    return 0 if version_ratio <= VERSION_TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
