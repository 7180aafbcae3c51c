"""Instructions of whole ``pi`` processes under callgrind: ``--version``, a ``-p`` turn, an RPC start.

Wall time on a shared machine drifts with the load; the number of instructions a process
executes does not (the same total to 0.01 % run after run, whatever else the machine does).
So two builds of piko compare best this way: install each in its own virtual environment (a
regular install, not editable: the editable finder adds work to every start) and pass their
``bin/pi``. Every run gets ``PYTHONHASHSEED=0``, an empty configuration with a ``models.json``
provider on a scripted server on 127.0.0.1, and two warm-up runs first (byte code, the
entry-point and catalog caches).

    .venv/bin/python benchmarks/bench_instructions.py /tmp/venv-old/bin/pi /tmp/venv-new/bin/pi [--json]

Cases: ``version`` (``pi --version``), ``print`` (``pi -p --no-session "say hi"``, one text turn)
and ``rpc`` (``pi --mode rpc --no-session``: start, one ``get_state``, stdin closed). Needs
``valgrind``. No target: it prints each build's count and its ratio to the first build's.
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

from piko.testing import LLMServer

CASES = ("version", "print", "rpc")


def _command(pi: str, case: str) -> tuple[list[str], bytes]:
    """The arguments of ``case`` and what goes to its stdin."""
    model = ["--provider", "local", "--model", "m1", "--no-session"]
    if case == "version":
        return [pi, "--version"], b""
    if case == "print":
        return [pi, *model, "-p", "say hi"], b""
    return [pi, *model, "--mode", "rpc"], b'{"type":"get_state","id":"1"}\n'


def count(pi: str, case: str, base_url: str, folder: Path) -> int:
    """Instructions of one run of ``case`` by ``pi`` (after two uncounted runs)."""
    agent = folder / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"local": {"baseUrl": base_url + "/v1", "api": "openai-completions", "apiKey": "k",
                                      "models": [{"id": "m1", "name": "m1", "input": ["text"]}]}}}  # fmt: skip
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(folder),
        "PI_CODING_AGENT_DIR": str(agent),
        "PIKO_CACHE_DIR": str(folder / "cache"),
        "PYTHONHASHSEED": "0",
        "PI_OFFLINE": "1",
    }
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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    cases = args.case or list(CASES)
    turns = [{"blocks": [{"text": "Hi there! How can I help you today?"}], "repeat": True}]
    results: dict[str, dict[str, int]] = {}
    with LLMServer(turns) as server, tempfile.TemporaryDirectory() as tmp:
        for index, pi in enumerate(args.pi):
            results[pi] = {
                case: count(pi, case, server.base_url, Path(tmp) / str(index) / case) for case in cases
            }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    first = results[args.pi[0]]
    print(f"{'build':<40} " + " ".join(f"{case:>22}" for case in cases))
    for pi, counts in results.items():
        cells = [f"{counts[c] / 1e6:9.1f} M ({counts[c] / first[c]:.3f}x)" for c in cases]
        print(f"{pi:<40} " + " ".join(f"{cell:>22}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
