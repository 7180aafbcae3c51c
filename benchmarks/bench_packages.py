"""Benchmark: what installed packages, trust and the policy add to piko's start-up.

Builds a throwaway environment (``python -m venv --without-pip`` seeing the development
environment), installs 10 small plugin wheels into it with ``pi install pip:...`` (offline, from
a local wheel folder; each ships a skill), and a trusted project with 3 packages of its own in
``.pi/python``. Then measures ``App.boot`` plus the ``resources_discover`` answer in fresh
processes, in four set-ups: nothing configured, the 10 global packages, the project as well,
and the same with a policy file. The number that matters is the package start-up work (checking
that every listed package is installed, finding extension files and resources): ``boot`` of the
configured set-ups minus ``boot`` of a bare environment with the same plugins installed.

    .venv/bin/python benchmarks/bench_packages.py [--runs 15] [--json]

Target (issue "Packages, trust and policy"): 13 configured packages add at most 30 ms to boot
(wall, median, warm discovery cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "packages"))

from pkg_wheels import tool_plugin_wheel  # noqa: E402

TARGET_MS = 30.0
GLOBAL = 10
PROJECT = 3

CHILD = """
import asyncio, json, time
t0, c0 = time.perf_counter(), time.process_time()
from piko.app.application import App
from piko.data.events import ResourcesDiscoverEvent
app = App().boot()
t1, c1 = time.perf_counter(), time.process_time()
found = asyncio.run(app.dispatcher.emit("resources_discover", ResourcesDiscoverEvent(cwd=str(app.cwd)), app.context()))
t2 = time.perf_counter()
print(json.dumps({"boot": (t1 - t0) * 1000, "boot_cpu": (c1 - c0) * 1000, "resources": (t2 - t1) * 1000,
                  "skills": len(found["skill_paths"]), "plugins": len(app.pm.infos)}))
"""


def run_child(python: Path, env: dict[str, str], cwd: Path) -> dict[str, float]:
    out = subprocess.run(
        [str(python), "-c", CHILD], env=env, cwd=str(cwd), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wheels = root / "wheels"
        for i in range(GLOBAL + PROJECT):
            tool_plugin_wheel(wheels, f"piko-bench-{i}", "1.0", f"bench{i}", f"bench_tool_{i}", skills=True)
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
        (site / "_dev.pth").write_text(
            f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
        )
        python = venv / "bin" / "python"
        agent, project, policy = root / "agent", root / "project", root / "policy.json"
        for folder in (agent, project, root / "home", root / "cache"):
            folder.mkdir()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PI_", "PIKO_", "PYTHON"))}
        env = {
            **base, "HOME": str(root / "home"), "PI_CODING_AGENT_DIR": str(agent), "PIKO_CACHE_DIR": str(root / "cache"),
            "PIKO_POLICY": str(root / "no-policy.json"), "PIKO_INSTALLER": "pip", "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }  # fmt: skip

        def pi(*argv: str, cwd: Path = root) -> None:
            subprocess.run(
                [str(python), "-m", "piko", *argv], env=env, cwd=str(cwd), check=True, capture_output=True
            )

        for i in range(GLOBAL):
            pi("install", f"pip:piko-bench-{i}")
        for i in range(GLOBAL, GLOBAL + PROJECT):
            pi("install", "-l", f"pip:piko-bench-{i}", cwd=project)
        pi("trust", cwd=project)
        settings = agent / "settings.json"
        configured = settings.read_text()
        policy.write_text(
            json.dumps({"packageSources": {"allow": ["pip:piko-bench-*"]}, "plugins": {"block": ["x.*"]}})
        )

        def setup(name: str) -> tuple[dict[str, str], Path]:
            settings.write_text(configured if name != "installed, not configured" else "{}")
            extra = {"PIKO_POLICY": str(policy)} if name == "project + policy" else {}
            return {**env, **extra}, project if name.startswith("project") else root

        names = [
            "installed, not configured",
            "10 global packages",
            "project + 3 packages",
            "project + policy",
        ]
        results: dict[str, list[dict[str, float]]] = {n: [] for n in names}
        for name in names:  # warm the discovery cache and .pyc files
            run_child(python, *setup(name))
        for _ in range(args.runs):
            for name in names:
                results[name].append(run_child(python, *setup(name)))
    table = {
        name: {
            "boot_ms": statistics.median(r["boot"] for r in runs),
            "boot_cpu_ms": statistics.median(r["boot_cpu"] for r in runs),
            "resources_ms": statistics.median(r["resources"] for r in runs),
            "skills": runs[0]["skills"],
            "plugins": runs[0]["plugins"],
        }
        for name, runs in results.items()
    }
    base = table["installed, not configured"]
    added = table["project + policy"]["boot_ms"] - base["boot_ms"]
    added_cpu = table["project + policy"]["boot_cpu_ms"] - base["boot_cpu_ms"]
    if args.json:
        print(
            json.dumps(
                {"results": table, "added_ms": added, "added_cpu_ms": added_cpu, "target_ms": TARGET_MS},
                indent=2,
            )
        )
    else:
        print(
            f"{'set-up':<28}{'boot ms':>10}{'boot cpu ms':>13}{'resources ms':>15}{'skills':>8}{'plugins':>9}"
        )
        for name, row in table.items():
            print(
                f"{name:<28}{row['boot_ms']:>10.1f}{row['boot_cpu_ms']:>13.1f}{row['resources_ms']:>15.1f}"
                f"{row['skills']:>8}{row['plugins']:>9}"
            )
        print(
            f"\npackage start-up work with {GLOBAL + PROJECT} packages: {added:+.1f} ms wall, {added_cpu:+.1f} ms CPU "
            f"(target: at most {TARGET_MS:.0f} ms wall)"
        )
    return 0 if added <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
