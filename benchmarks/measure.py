"""Running a program and reading its own wall time, CPU time and peak memory.

Peak RSS comes from ``wait4``, and Linux carries a process's high-water mark over ``fork`` and
``exec``: a child of a benchmark that has grown to 300 MB reports at least 300 MB, whatever it
execs (``posix_spawn`` does not help: the child shares the parent's memory until it execs). So
the program is started by a small launcher, this file run as a script in a fresh interpreter
(about 10 MB), which waits for it and reports its figures as one JSON line; the program's
figures are then its own, above a floor of the launcher's size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import attrs


@attrs.define
class Measured:
    """What one run of a program used, and what it printed."""

    wall: float
    cpu: float
    rss_mb: float
    code: int
    stdout: bytes
    stderr: bytes

    def figures(self) -> dict[str, float]:
        return {
            "wall_s": round(self.wall, 3),
            "cpu_s": round(self.cpu, 3),
            "peak_rss_mb": round(self.rss_mb, 1),
        }


def run_measured(command: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Measured:
    """Run ``command`` in ``cwd`` with stdin closed (killed after ``timeout`` seconds)."""
    out_path, err_path = cwd / ".stdout", cwd / ".stderr"
    launcher = [
        sys.executable,
        "-I",
        __file__,
        str(cwd),
        str(timeout),
        str(out_path),
        str(err_path),
        *command,
    ]
    done = subprocess.run(launcher, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the launcher failed: {done.stderr.decode('utf-8', 'replace')[-500:]}")
    figures = json.loads(done.stdout)
    return Measured(
        wall=figures["wall"],
        cpu=figures["cpu"],
        rss_mb=figures["rss_kb"] / 1024,
        code=figures["code"],
        stdout=out_path.read_bytes(),
        stderr=err_path.read_bytes(),
    )


def _launch(cwd: str, timeout: float, out_path: str, err_path: str, command: list[str]) -> dict[str, float]:
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                _pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - start
    process.returncode = code = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_kb": usage.ru_maxrss, "code": code}


if __name__ == "__main__":
    _cwd, _timeout, _out, _err, *_command = sys.argv[1:]
    print(json.dumps(_launch(_cwd, float(_timeout), _out, _err, _command)))
