"""Discovery benchmark: what 100 installed plugin distributions add to piko's start-up.

Generates 100 tiny distributions (a ``*.dist-info`` with a ``piko`` entry point and a module with
one hook implementation) in a temporary folder, puts it on ``PYTHONPATH``, and measures in fresh
processes: the entry-point scan with a cold cache (cache file deleted before each run) and a
warm one, loading (importing and registering) the plugins, and the whole ``App.boot``; then
the same without the folder. It also times ``pi plugins`` end to end both ways.

    .venv/bin/python benchmarks/bench_discovery.py [--plugins 100] [--runs 25] [--json]

Target (issue "Kernel and plugin platform"): 100 extra plugins add at most 20 ms (scan + load,
warm cache).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_MS = 20.0

PLUGIN_SOURCE = '''"""Benchmark plugin {i}."""

from piko import hookimpl


@hookimpl
def piko_register_commands(register):
    register("bench-{i}", description="benchmark command {i}", handler=None)
'''

# Runs in a fresh interpreter; prints one JSON line of milliseconds.
CHILD = """
import json, sys, time
clocks = (time.perf_counter, time.process_time)
marks = [tuple(c() for c in clocks)]
from piko.platform import discovery
from piko.app.application import App, BootOptions
marks.append(tuple(c() for c in clocks))
records = discovery.scan()
marks.append(tuple(c() for c in clocks))
app = App()
app.pm.load_entry_points(records, app.make_extension_api)
marks.append(tuple(c() for c in clocks))
boot_app = App()
marks.append(tuple(c() for c in clocks))
boot_app.boot(BootOptions())
marks.append(tuple(c() for c in clocks))
out = {"plugins": len(app.pm.infos)}
for clock, suffix in ((0, ""), (1, "_cpu")):
    for name, (a, b) in {"import": (0, 1), "scan": (1, 2), "load": (2, 3), "boot": (4, 5)}.items():
        out[name + suffix] = (marks[b][clock] - marks[a][clock]) * 1000
print(json.dumps(out))
"""


def make_plugins(site: Path, count: int) -> None:
    """``count`` distributions ``piko-bench-plugin-<i>`` with entry point ``bench.<i>``."""
    for i in range(count):
        module = f"piko_bench_plugin_{i}"
        info = site / f"piko_bench_plugin_{i}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: piko-bench-plugin-{i}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[piko]\nbench.{i} = {module}\n")
        (info / "RECORD").write_text("")
        (site / f"{module}.py").write_text(PLUGIN_SOURCE.format(i=i))


def child_run(env: dict[str, str], cwd: str, cold_cache: Path | None) -> dict[str, float]:
    if cold_cache is not None:
        shutil.rmtree(cold_cache, ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{proc.stderr}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def wall_ms(command: list[str], env: dict[str, str], cwd: str, runs: int) -> float:
    subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=True)  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--plugins", type=int, default=100, help="how many plugin distributions (default 100)"
    )
    parser.add_argument("--runs", type=int, default=25, help="runs per measurement (default 25)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="piko-bench-discovery-"))
    try:
        site = scratch / "site"
        site.mkdir()
        make_plugins(site, args.plugins)
        compileall.compile_dir(str(site), quiet=1)  # as pip does when it installs a distribution
        cache = scratch / "cache"
        # A user's machine keeps .pyc files: let the warm-up runs write them (unlike this sandbox's default).
        skip = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
        base_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("PIKO_", "PI_")) and k not in skip
        }
        base_env.update(
            HOME=str(scratch / "home"), PI_CODING_AGENT_DIR=str(scratch / "agent"), PIKO_CACHE_DIR=str(cache)
        )
        for sub in ("home", "agent", "project"):
            (scratch / sub).mkdir()
        cwd = str(scratch / "project")
        with_plugins = dict(base_env, PYTHONPATH=str(site))

        # Runs alternate between the four set-ups so that a busy machine slows them alike.
        setups = {
            "without_cold": (base_env, cache),
            "with_cold": (with_plugins, cache),
            "without_warm": (base_env, None),
            "with_warm": (with_plugins, None),
        }
        samples: dict[str, list[dict[str, float]]] = {key: [] for key in setups}
        for env, _cold in setups.values():
            child_run(env, cwd, None)  # write .pyc files and the cache once
        for _ in range(args.runs):
            for key, (env, cold) in setups.items():
                if cold is None:
                    child_run(env, cwd, None)  # the previous cold run left another environment's cache
                samples[key].append(child_run(env, cwd, cold))
        results: dict[str, Any] = {key: medians(runs) for key, runs in samples.items()}
        pi = str(Path(sys.executable).parent / "pi")
        if Path(pi).exists():
            results["pi_plugins_without_ms"] = wall_ms([pi, "plugins"], base_env, cwd, args.runs)
            results["pi_plugins_with_ms"] = wall_ms([pi, "plugins"], with_plugins, cwd, args.runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def cost(key: str, suffix: str = "_cpu") -> float:
        return float(results[key]["scan" + suffix] + results[key]["load" + suffix])

    added_warm = cost("with_warm") - cost("without_warm")
    added_cold = cost("with_cold") - cost("without_cold")
    results["added_cpu_ms_warm"] = added_warm
    results["added_cpu_ms_cold"] = added_cold
    results["added_wall_ms_warm"] = cost("with_warm", "") - cost("without_warm", "")
    results["added_wall_ms_cold"] = cost("with_cold", "") - cost("without_cold", "")
    results["target_ms"] = TARGET_MS
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(
            f"{args.plugins} extra plugin distributions, {args.runs} runs each, medians in ms (CPU time; wall time)\n"
        )
        print(f"{'':<22}{'plugins':>8}{'scan':>16}{'load':>16}{'scan+load':>16}{'App.boot':>16}")
        for key in ("without_cold", "with_cold", "without_warm", "with_warm"):
            r = results[key]
            cells = [f"{r[name + '_cpu']:7.2f};{r[name]:7.2f}" for name in ("scan", "load")] + [
                f"{r['scan_cpu'] + r['load_cpu']:7.2f};{r['scan'] + r['load']:7.2f}",
                f"{r['boot_cpu']:7.2f};{r['boot']:7.2f}",
            ]
            print(
                f"{key.replace('_', ' ') + ' cache':<22}{r['plugins']:>8.0f}"
                + "".join(f"{c:>16}" for c in cells)
            )
        if "pi_plugins_with_ms" in results:
            print(f"\npi plugins wall time: {results['pi_plugins_without_ms']:.1f} ms without, "
                  f"{results['pi_plugins_with_ms']:.1f} ms with the extra plugins")  # fmt: skip
        verdict = "meets" if added_warm <= TARGET_MS else "MISSES"
        print(f"\n{args.plugins} plugins add {added_warm:.1f} ms CPU with a warm cache ({added_cold:.1f} ms cold; wall "
              f"{results['added_wall_ms_warm']:.1f} / {results['added_wall_ms_cold']:.1f} ms): "
              f"{verdict} the target of {TARGET_MS:g} ms")  # fmt: skip
    return 0 if added_warm <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
