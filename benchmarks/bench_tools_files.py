"""Benchmark: the file tools on big files (issue "The seven tools").

Two measurements, each in a fresh interpreter so peak memory is the operation's own:

* ``edit-10MB``: one replacement in the middle of a 10 MB file (200,000 lines) with the ``edit``
  tool: read, match, write, and pi's numbered diff;
* ``read-1GB``: lines 1,000,000-1,000,100 (``offset=1000000, limit=101``) of a 1 GB file with the
  ``read`` tool, which streams the file instead of loading it.

For each: wall time (median of ``--runs``), the child's peak RSS growth over its baseline just
before the call (``ru_maxrss``), and, in one more run under ``tracemalloc``, the peak of Python
allocations during the call. The files are created in a temporary directory and removed.

    .venv/bin/python benchmarks/bench_tools_files.py [--runs 5] [--gb 1.0] [--json]
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

CHILD = r"""
import asyncio, json, os, resource, sys, time
from piko.app.application import App
from piko.plugins.tools import edit, read

kind, path = sys.argv[1], sys.argv[2]
app = App(cwd=os.path.dirname(path), agent_dir=os.path.join(os.path.dirname(path), ".agent"))
ctx = app.context()
if kind == "edit":
    middle = int(sys.argv[3])
    toggle = os.path.exists(path + ".toggled")
    old, new = (f"line {middle} ", f"LINE {middle} ") if not toggle else (f"LINE {middle} ", f"line {middle} ")
    params = {"path": os.path.basename(path), "edits": [{"oldText": old, "newText": new}]}
    run = lambda: edit.execute("b", params, None, None, ctx)
else:
    params = {"path": os.path.basename(path), "offset": 1_000_000, "limit": 101}
    run = lambda: read.execute("b", params, None, None, ctx)
tracing = os.environ.get("BENCH_TRACE") == "1"
if tracing:
    import tracemalloc
    tracemalloc.start()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
result = asyncio.run(run())
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
traced = tracemalloc.get_traced_memory()[1] if tracing else None
text = result.content[0].text
if kind == "edit":
    open(path + ".toggled", "w").close() if not toggle else os.unlink(path + ".toggled")
print(json.dumps({"seconds": elapsed, "baseline_kb": before, "peak_kb": peak, "traced": traced, "head": text[:60], "tail": text[-80:]}))
"""


def make_ten_mb(path: Path) -> int:
    """200,000 lines of about 52 bytes; returns the middle line's number."""
    with open(path, "w", encoding="utf-8") as out:
        for start in range(0, 200_000, 10_000):
            out.write(
                "".join(f"line {n} " + "x" * (45 - len(str(n))) + "\n" for n in range(start, start + 10_000))
            )
    return 100_000


def make_big(path: Path, gigabytes: float) -> int:
    """Numbered 100-byte lines up to ``gigabytes``; returns the number of lines."""
    lines = int(gigabytes * (1 << 30)) // 100
    filler = "x" * 88
    with open(path, "w", encoding="ascii") as out:
        for start in range(1, lines + 1, 100_000):
            stop = min(start + 100_000, lines + 1)
            out.write("".join(f"{n:010d} {filler}\n" for n in range(start, stop)))
    return lines


def measure(kind: str, path: Path, runs: int, *extra: str) -> dict[str, object]:
    samples = []
    for _ in range(runs):
        completed = subprocess.run(
            [sys.executable, "-c", CHILD, kind, str(path), *extra], capture_output=True, text=True, check=True
        )
        samples.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    traced = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(path), *extra],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "BENCH_TRACE": "1"},
    )
    traced_peak = json.loads(traced.stdout.strip().splitlines()[-1])["traced"]
    seconds = [s["seconds"] for s in samples]
    growth = [(s["peak_kb"] - s["baseline_kb"]) / 1024 for s in samples]
    return {
        "median_ms": round(statistics.median(seconds) * 1000, 1),
        "min_ms": round(min(seconds) * 1000, 1),
        "peak_rss_growth_mb": round(max(growth), 1),
        "peak_rss_mb": round(max(s["peak_kb"] for s in samples) / 1024, 1),
        "python_peak_mb": round(traced_peak / (1 << 20), 2),
        "head": samples[-1]["head"],
        "tail": samples[-1]["tail"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gb", type=float, default=1.0, help="size of the big file for the read benchmark")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="piko-bench-files-") as folder:
        root = Path(folder)
        ten = root / "ten.txt"
        middle = make_ten_mb(ten)
        results["edit-10MB"] = {
            "file_mb": round(ten.stat().st_size / (1 << 20), 1),
            **measure("edit", ten, args.runs, str(middle)),
        }
        big = root / "big.txt"
        started = time.perf_counter()
        lines = make_big(big, args.gb)
        created = time.perf_counter() - started
        results["read-1GB"] = {
            "file_mb": round(big.stat().st_size / (1 << 20), 1),
            "lines": lines,
            "create_s": round(created, 1),
            **measure("read", big, args.runs),
        }
        os.unlink(big)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, data in results.items():
        assert isinstance(data, dict)
        print(
            f"{name:10s} file {data['file_mb']} MB: median {data['median_ms']} ms (min {data['min_ms']} ms), "
            f"peak RSS growth {data['peak_rss_growth_mb']} MB (process peak {data['peak_rss_mb']} MB), "
            f"peak Python allocations during the call {data['python_peak_mb']} MB"
        )
        print(f"           result starts {data['head']!r} ... ends {data['tail']!r}")


if __name__ == "__main__":
    main()
