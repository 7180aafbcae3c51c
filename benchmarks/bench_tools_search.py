"""Benchmark: the grep and find tools against raw ``rg`` with the same flags over a large tree.

The tree defaults to the Python standard library (``sysconfig.get_path("stdlib")``, with its
site-packages: tens of thousands of files). Each scenario runs the tool's ``execute`` in-process
and the equivalent raw ``rg`` command (output read through a pipe, as a caller would) ``--runs``
times after a warm-up, and reports the medians and their ratio. Targets: grep at most 1.15x raw
rg, find at most 1.2x raw ``rg --files`` (scenarios marked "full scan", where both read
everything; with a limit the tool stops rg early and is usually faster than the raw run).

    .venv/bin/python benchmarks/bench_tools_search.py [--tree DIR] [--runs N] [--json] [--only TEXT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from typing import Any

from piko.extensions.context import ExtensionContext
from piko.plugins.tools import find
from piko.plugins.tools import grep
from piko.plugins.tools.ripgrep import require_rg

GREP_TARGET = 1.15
FIND_TARGET = 1.2


class _TreeApp:
    """The least an ``ExtensionContext`` needs to answer ``cwd``."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd


def _paired_medians(first: Callable[[], Any], second: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median seconds of each, runs interleaved so that load from other processes hits both alike."""
    first()  # warm-up: page cache, imports
    second()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for fn, bucket in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def _raw(args: list[str], cwd: str | None = None) -> Callable[[], Any]:
    rg = require_rg()

    def run() -> None:
        subprocess.run([rg, *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)

    return run


def _tool(
    loop: asyncio.AbstractEventLoop, module: Any, params: dict[str, Any], ctx: Any
) -> Callable[[], Any]:
    def run() -> Any:
        return loop.run_until_complete(module.execute("bench", params, None, None, ctx))

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=sysconfig.get_path("stdlib"), help="directory to search")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--only", default="", help="run only the scenarios whose name contains this")
    options = parser.parse_args(argv)
    tree = options.tree.rstrip("/")
    ctx = ExtensionContext(app=_TreeApp(tree))
    loop = asyncio.new_event_loop()

    rg_files = len(
        subprocess.run([require_rg(), *find.RG_FILES_ARGS], cwd=tree, capture_output=True).stdout.splitlines()
    )

    def grep_case(name: str, params: dict[str, Any], target: float | None) -> tuple[Any, ...]:
        raw = grep.rg_args(
            params["pattern"],
            tree,
            glob=params.get("glob"),
            ignore_case=bool(params.get("ignoreCase")),
            literal=bool(params.get("literal")),
        )
        return (name, "grep", params, raw, None, target)

    scenarios: list[tuple[Any, ...]] = [
        # name, tool, params, raw rg args (the tool's own), raw cwd, target (None: informative)
        grep_case("grep rare pattern (full scan)", {"pattern": "frobnicate|HTTPServer\\("}, GREP_TARGET),
        grep_case(
            "grep literal, ignoreCase, glob *.py (full scan)",
            {
                "pattern": "sqlite3.connect(",
                "literal": True,
                "ignoreCase": True,
                "glob": "*.py",
                "limit": 100000,
            },
            GREP_TARGET,
        ),
        grep_case(
            "grep 'class \\w+Error' all matches, limit 100000 (full scan)",
            {"pattern": "class \\w+Error", "limit": 100000},
            GREP_TARGET,
        ),
        grep_case("grep 'def ' default limit 100 (stops early)", {"pattern": "def "}, None),
        (
            "find *.py limit 1000000 (full scan)",
            "find",
            {"pattern": "*.py", "limit": 1_000_000},
            find.RG_FILES_ARGS,
            tree,
            FIND_TARGET,
        ),
        (
            "find **/test_*.py limit 1000000 (full scan, full-path glob)",
            "find",
            {"pattern": "**/tests/test_*.py", "limit": 1_000_000},
            find.RG_FILES_ARGS,
            tree,
            FIND_TARGET,
        ),
        ("find *.cfg rare (full scan)", "find", {"pattern": "*.cfg"}, find.RG_FILES_ARGS, tree, FIND_TARGET),
        (
            "find test_* name glob (full scan)",
            "find",
            {"pattern": "test_*", "limit": 1_000_000},
            find.RG_FILES_ARGS,
            tree,
            FIND_TARGET,
        ),
        (
            "find *.py default limit 1000 (stops early)",
            "find",
            {"pattern": "*.py"},
            find.RG_FILES_ARGS,
            tree,
            None,
        ),
    ]
    rows = []
    failed = False
    for name, tool, params, raw_args, raw_cwd, target in scenarios:
        if options.only not in name:
            continue
        module = grep if tool == "grep" else find
        tool_run = _tool(loop, module, params, ctx)
        sample = tool_run()
        tool_s, raw_s = _paired_medians(tool_run, _raw(raw_args, raw_cwd), options.runs)
        ratio = tool_s / raw_s
        ok = target is None or ratio <= target
        failed = failed or not ok
        first_line = sample.content[0].text.split("\n", 1)[0]
        rows.append(
            {
                "scenario": name,
                "tool_ms": round(tool_s * 1000, 1),
                "raw_rg_ms": round(raw_s * 1000, 1),
                "ratio": round(ratio, 3),
                "target": target,
                "ok": ok,
                "details": sample.details and {k: v for k, v in sample.details.items() if k != "truncation"},
                "first_line": first_line[:80],
            }
        )
    loop.close()
    if options.json:
        print(json.dumps({"tree": tree, "files": rg_files, "runs": options.runs, "results": rows}, indent=2))
    else:
        print(f"tree: {tree} ({rg_files} files listed by rg --files), median of {options.runs} runs")
        for row in rows:
            goal = f"<= {row['target']}x" if row["target"] else "info"
            mark = "ok" if row["ok"] else "OVER"
            print(
                f"  {row['scenario']:<62} tool {row['tool_ms']:>8.1f} ms  rg {row['raw_rg_ms']:>8.1f} ms  "
                f"{row['ratio']:>5.2f}x  ({goal}, {mark})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
