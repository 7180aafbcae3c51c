"""Instructions of whole ``pi`` processes under callgrind: ``--version``, a ``-p`` turn, an RPC start.

Wall time on a shared machine drifts with the load; the number of instructions a process
executes does not (the same total to 0.01 % run after run, whatever else the machine does).
So two builds of piko compare best this way: install each in its own virtual environment (a
regular install, not editable: the editable finder adds work to every start) and pass their
``bin/pi``. Every run gets ``PYTHONHASHSEED=0``, an empty configuration with a ``models.json``
provider on a scripted server on 127.0.0.1, and two warm-up runs first (byte code, the
entry-point and catalog caches).

    .venv/bin/python benchmarks/bench_instructions.py /tmp/venv-old/bin/pi /tmp/venv-new/bin/pi [--json]
    .venv/bin/python benchmarks/bench_instructions.py /tmp/venv-new/bin/pi --floor --pi /work/scratch/pi16

Cases: ``version`` (``pi --version``), ``print`` (``pi -p --no-session "say hi"``, one text turn)
and ``rpc`` (``pi --mode rpc --no-session``: start, one ``get_state``, stdin closed). Needs
``valgrind``. No target: it prints each build's count and its ratio to the first build's.

``--pi PREFIX`` adds pi installed with npm under ``PREFIX`` (pi 1.6: its Node is put first on
``PATH``), so piko's counts can be read against pi's. ``--floor`` adds what the same job costs
a Python program that only imports piko's libraries and does the job bare (``floors/``: one
streamed turn, one RPC answer, an interpreter printing a version), run by the first build's
interpreter: what no piko change can go below.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import installed_pi

from piko.testing import LLMServer

CASES = ("version", "print", "rpc")
FLOORS = Path(__file__).with_name("floors")
FLOOR = "floor"  # the build name of the bare-libraries programs


def _floor_command(python: str, case: str, base_url: str) -> tuple[list[str], bytes]:
    """The bare-libraries program doing ``case``'s job (see ``floors/``)."""
    if case == "version":
        return [python, "-c", "print('0.0.0')"], b""
    if case == "print":
        return [python, str(FLOORS / "print_turn.py"), base_url + "/v1"], b""
    return [python, str(FLOORS / "rpc_answer.py")], b'{"type":"get_state","id":"1"}\n'


def _command(pi: list[str], case: str) -> tuple[list[str], bytes]:
    """The arguments of ``case`` and what goes to its stdin."""
    model = ["--provider", "local", "--model", "m1", "--no-session"]
    if case == "version":
        return [*pi, "--version"], b""
    if case == "print":
        return [*pi, *model, "-p", "say hi"], b""
    return [*pi, *model, "--mode", "rpc"], b'{"type":"get_state","id":"1"}\n'


def count(
    pi: list[str], case: str, base_url: str, folder: Path, path_prefix: str = "", floor_of: str | None = None
) -> int:
    """Instructions of one run of ``case`` by ``pi`` (after two uncounted runs); with
    ``floor_of`` (a ``bin/pi``), of the bare-libraries program run by that build's Python."""
    agent = folder / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"local": {"baseUrl": base_url + "/v1", "api": "openai-completions", "apiKey": "k",
                                      "models": [{"id": "m1", "name": "m1", "input": ["text"]}]}}}  # fmt: skip
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    env = {
        "PATH": path_prefix + os.environ.get("PATH", ""),
        "HOME": str(folder),
        "PI_CODING_AGENT_DIR": str(agent),
        "PIKO_CACHE_DIR": str(folder / "cache"),
        "PYTHONHASHSEED": "0",
        "PI_OFFLINE": "1",
    }
    if floor_of is not None:
        command, stdin = _floor_command(str(Path(floor_of).with_name("python")), case, base_url)
    else:
        command, stdin = _command(pi, case)
    for _ in range(2):
        subprocess.run(command, input=stdin, env=env, cwd=folder, capture_output=True, check=True)
    out = folder / f"callgrind.{case}.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        input=stdin, env=env, cwd=folder, capture_output=True, check=True,
    )  # fmt: skip
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"no summary in {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pi", nargs="+", help="the bin/pi of each build, the first one the baseline")
    parser.add_argument("--case", choices=CASES, action="append", help="only these cases")
    parser.add_argument(
        "--pi", dest="npm_pi", metavar="PREFIX", help="also count the pi installed with npm under PREFIX"
    )
    parser.add_argument("--floor", action="store_true", help="also count the bare-libraries programs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    cases = args.case or list(CASES)
    turns = [{"blocks": [{"text": "Hi there! How can I help you today?"}], "repeat": True}]
    # each build: its name, its pi, what goes before PATH, the build whose Python runs the floor
    builds: list[tuple[str, list[str], str, str | None]] = [(pi, [pi], "", None) for pi in args.pi]
    if args.npm_pi:
        npm = installed_pi(args.npm_pi)
        if npm is None:
            print(f"no pi under {args.npm_pi}/node_modules/.bin", file=sys.stderr)
            return 2
        # its script run by its Node directly: valgrind follows no ``#!/usr/bin/env node`` exec
        node = shutil.which("node", path=npm.path_prefix + os.environ.get("PATH", "")) or "node"
        script = os.path.realpath(npm.command[0])
        builds.append((f"pi ({args.npm_pi})", [node, script], npm.path_prefix, None))
    if args.floor:
        builds.append((FLOOR, [], "", args.pi[0]))
    results: dict[str, dict[str, int]] = {}
    with LLMServer(turns) as server, tempfile.TemporaryDirectory() as tmp:
        for index, (name, pi, prefix, floor_of) in enumerate(builds):
            results[name] = {
                case: count(pi, case, server.base_url, Path(tmp) / str(index) / case, prefix, floor_of)
                for case in cases
            }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    first = results[args.pi[0]]
    width = max(40, *(len(name) + 1 for name in results))
    print(f"{'build':<{width}} " + " ".join(f"{case:>22}" for case in cases))
    for name, counts in results.items():
        cells = [f"{counts[c] / 1e6:9.1f} M ({counts[c] / first[c]:.3f}x)" for c in cases]
        print(f"{name:<{width}} " + " ".join(f"{cell:>22}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
