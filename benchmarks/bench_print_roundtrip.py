"""``pi -p "say hi"`` round trip against a local server that answers at once: piko and pi side by side.

Both programs get the same ``models.json`` (a ``mock`` provider on a scripted server on
127.0.0.1), an empty config and session directory, and stdin closed. They take turns, run after
run, so that a busy spell of the machine weighs on both alike. We report the median wall time,
the median CPU time and the peak RSS (all from ``wait4``) of each, and piko's share of pi's
median wall time. Targets (issue "Agent
core"): piko at most 0.15x pi's wall time and at most 50 MB.

    .venv/bin/python benchmarks/bench_print_roundtrip.py [--runs 15] [--pi /work/scratch/pi] [--skills N] [--json]

pi is looked for in ``--pi`` (an npm prefix with ``node_modules/.bin/pi``); without it only piko
is measured. ``--skills N`` puts N skills (a ``SKILL.md`` with front matter each) in the agent
folder of both, to measure what reading their front matter adds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from measure import run_measured  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402

PIKO = str(Path(sys.executable).with_name("pi"))


def write_skills(folder: Path, count: int) -> None:
    """``count`` skills with the front matter skills usually have."""
    for i in range(count):
        skill = folder / f"skill-{i}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Does thing {i}. Use when the user asks for thing {i}.\n"
            "license: MIT\nallowed-tools: [read, bash]\nmetadata:\n  author: someone\n  version: 2\n"
            f"---\n\n# Skill {i}\n\nSteps.\n",
            encoding="utf-8",
        )


def warm_up(command: list[str], env: dict[str, str], cwd: str, runs: int = 2) -> None:
    """Run a few times first (byte-compiled files, entry-point cache, node's compile cache)."""
    for _ in range(runs):
        done = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode != 0 or b"Hi there" not in done.stdout:
            raise RuntimeError(f"{command[0]} failed: {done.stderr.decode()[:500]}")


def measure(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, float]:
    """One run: wall seconds, CPU seconds (user + system) and peak RSS in MB, the program's own
    (:func:`measure.run_measured`)."""
    run = run_measured(command, env, Path(cwd), timeout=120)
    if run.code != 0:
        raise RuntimeError(f"{command[0]} exited with {run.code}")
    return run.wall, run.cpu, run.rss_mb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--pi", default="/work/scratch/pi073", help="npm prefix holding node_modules/.bin/pi")
    parser.add_argument("--skills", type=int, default=0, help="skills in the agent folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    turns = [{"blocks": [{"text": "Hi there! How can I help you today?"}], "repeat": True}]
    results: dict[str, dict[str, float]] = {}
    with LLMServer(turns) as server, tempfile.TemporaryDirectory() as tmp:
        models = {"providers": {"mock": {"baseUrl": server.base_url + "/v1", "api": "openai-completions",
                                         "apiKey": "mock-key", "models": [{"id": "mock-1"}]}}}  # fmt: skip
        pi_bin = Path(args.pi) / "node_modules" / ".bin" / "pi"
        programs = {"piko": [PIKO]}
        if pi_bin.exists():
            programs["pi"] = [str(pi_bin)]
        runs: dict[str, tuple[list[str], dict[str, str], str]] = {}
        for name, command in programs.items():
            home = Path(tmp) / name / "agent"
            home.mkdir(parents=True)
            (home / "models.json").write_text(json.dumps(models))
            write_skills(home / "skills", args.skills)
            work = Path(tmp) / name / "work"
            work.mkdir()
            env = {
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(Path(tmp) / name),
                "PI_CODING_AGENT_DIR": str(home),
                "PIKO_CACHE_DIR": str(Path(tmp) / name / "cache"),
                "PI_OFFLINE": "1",
            }
            # as on a user's machine: Python may write byte-code caches (some sandboxes forbid it)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            cmd = [*command, "-p", "say hi", "--provider", "mock", "--model", "mock-1"]
            warm_up(cmd, env, str(work))
            runs[name] = (cmd, env, str(work))
        # the programs take turns, so that a busy spell of the machine weighs on both alike
        samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, (cmd, env, work) in runs.items():
                samples[name].append(measure(cmd, env, work))
        for name, rows in samples.items():
            results[name] = {
                "wall_s": statistics.median(r[0] for r in rows),
                "min_wall_s": min(r[0] for r in rows),
                "cpu_s": statistics.median(r[1] for r in rows),
                "peak_rss_mb": max(r[2] for r in rows),
            }
    ok = results["piko"]["peak_rss_mb"] <= 50
    if "pi" in results:
        results["ratio"] = {"wall": results["piko"]["wall_s"] / results["pi"]["wall_s"]}
        ok = ok and results["ratio"]["wall"] <= 0.15
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name in programs:
            r = results[name]
            print(
                f"{name:5}  median {r['wall_s'] * 1000:7.0f} ms  (min {r['min_wall_s'] * 1000:.0f} ms, "
                f"CPU {r['cpu_s'] * 1000:.0f} ms)  peak RSS {r['peak_rss_mb']:.0f} MB"
            )
        if "ratio" in results:
            print(f"piko / pi wall time: {results['ratio']['wall']:.3f}x  (target <= 0.15x)")
        print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
