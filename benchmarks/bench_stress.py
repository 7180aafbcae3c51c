"""Stress cases: one turn at any size, side by side with pi 1.6 where it is installed.

Each case runs ``pi -p`` (piko, then pi 1.6 when ``PIKO_BENCH_PI16`` or ``--pi`` names its npm
prefix) against the scripted LLM server on 127.0.0.1, in a fresh config and work folder, and
reports wall time, CPU time and peak RSS (from ``wait4``), checks the effect (the file written,
the answer printed, the session continued), and gives piko's ratio to pi. Cases:

``write``      a ``write`` call of 300 KB and of 1 MB, arguments in 12-character deltas, in each
               provider API's wire format (``--api`` picks; pi runs the APIs it speaks here)
``text``       1 MB and 10 MB of answer text in 20-character deltas: the per-delta cost
``parallel``   100 tool calls in one turn (``ls`` of 100 folders)
``bash``       a bash command printing 100 MB
``read``       ``read`` of a 50,000-line file
``session``    a generated session of 5,000 turns resumed (``--session``) and continued

Targets (issue "One turn at any size"): the 300 KB write at most 0.5x pi 1.6's time; 1 MB at most
4x the time of 300 KB; the 10 MB text's per-delta cost at most 1.5x the 1 MB text's; peak RSS
above that of a one-word answer (the program's own floor, measured first) at most 16x the
message size. Exits 1 when one is missed.
Each run is bounded (``--timeout``, default 300 s) so a regression to quadratic time shows as a
timeout, not a hang.

    .venv/bin/python benchmarks/bench_stress.py [--case write --case text ...] [--api openai-completions]
        [--runs 1] [--pi /work/scratch/pi16] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from _common import piko_and_pi  # noqa: E402
from measure import Measured as Run  # noqa: E402
from measure import run_measured as run_program  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402

KB = 1000
MB = 1000 * KB

# api: (base URL suffix, does pi 1.6 run it against a local server here)
APIS: dict[str, tuple[str, bool]] = {
    "openai-completions": ("/v1", True),
    "anthropic-messages": ("", True),
    "openai-responses": ("/v1", True),
    "google-generative-ai": ("/v1beta", True),
    "mistral-conversations": ("/mistral", True),
    "bedrock-converse-stream": ("", False),
}
AWS_KEYS = {
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
}


class Program:
    """piko or pi 1.6, with a config dir and work dir of its own for one case."""

    def __init__(self, name: str, command: list[str], root: Path, extra_path: str = "") -> None:
        self.name, self.command, self.root, self.extra_path = name, command, root, extra_path

    def prepare(self, api: str, base_url: str) -> tuple[dict[str, str], Path]:
        home = self.root / self.name
        agent = home / "agent"
        work = home / "work"
        for folder in (agent, work):
            folder.mkdir(parents=True, exist_ok=True)
        provider = {"baseUrl": base_url, "api": api, "apiKey": "mock-key", "models": [{"id": "mock-1"}]}
        (agent / "models.json").write_text(json.dumps({"providers": {"mock": provider}}))
        env = {
            "PATH": self.extra_path + os.environ.get("PATH", ""),
            "HOME": str(home),
            "PI_CODING_AGENT_DIR": str(agent),
            "PIKO_CACHE_DIR": str(home / "cache"),
            "PI_OFFLINE": "1",
            **AWS_KEYS,
        }
        return env, work


def programs(root: Path, pi_prefix: str | None) -> list[Program]:
    return piko_and_pi(Program, root, pi_prefix)


def run_case(
    name: str,
    turns: list[dict[str, Any]],
    check: Callable[[Run, Path], str | None],
    *,
    api: str = "openai-completions",
    args: tuple[str, ...] = (),
    setup: Callable[[Path, str], list[str]] | None = None,
    progs: list[Program],
    runs: int,
    timeout: float,
) -> dict[str, Any]:
    """Run one case with each program (alternating, ``runs`` times); the medians per program."""
    suffix, pi_speaks = APIS[api]
    samples: dict[str, list[Run]] = {p.name: [] for p in progs if p.name == "piko" or pi_speaks}
    problems: list[str] = []
    for _ in range(runs):
        for program in progs:
            if program.name not in samples:
                continue
            # a server of its own per run: each program starts at the first scripted turn
            with LLMServer([{**t, "repeat": i == len(turns) - 1} for i, t in enumerate(turns)]) as server:
                env, work = program.prepare(api, server.base_url + suffix)
                extra = setup(work, program.name) if setup else []
                command = [
                    *program.command,
                    "-p",
                    *args,
                    *extra,
                    "--provider",
                    "mock",
                    "--model",
                    "mock-1",
                    "go",
                ]
                result = run_program(command, env, work, timeout)
            problem = (
                f"exit {result.code}: {result.stderr.decode('utf-8', 'replace')[-300:]}"
                if result.code != 0
                else check(result, work)
            )
            if problem:
                problems.append(f"{program.name}: {problem}")
            samples[program.name].append(result)
    out: dict[str, Any] = {"case": name, "api": api}
    for prog_name, rows in samples.items():
        out[prog_name] = {
            "wall_s": round(statistics.median(r.wall for r in rows), 3),
            "cpu_s": round(statistics.median(r.cpu for r in rows), 3),
            "peak_rss_mb": round(max(r.rss_mb for r in rows), 1),
        }
    if "pi" in out:
        out["ratio"] = round(out["piko"]["wall_s"] / out["pi"]["wall_s"], 3)
    if problems:
        out["problems"] = problems
    return out


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------


def write_turns(size: int) -> list[dict[str, Any]]:
    line = "y" * 69 + "\n"
    content = line * (size // len(line))
    return [
        {
            "blocks": [
                {"tool_call": {"name": "write", "arguments": {"path": "big.txt", "content": content}}}
            ],
            "coalesce": True,
        },
        {"blocks": [{"text": "Written."}], "coalesce": True},
    ]


def check_written(size: int) -> Callable[[Run, Path], str | None]:
    def check(run: Run, work: Path) -> str | None:
        path = work / "big.txt"
        expected = size // 70 * 70
        actual = path.stat().st_size if path.exists() else None
        path.unlink(missing_ok=True)
        return None if actual == expected else f"big.txt has {actual} bytes, not {expected}"

    return check


def text_turns(size: int) -> list[dict[str, Any]]:
    word = "abcdefghijklmnopqrs "  # 20 characters: one delta each
    return [{"blocks": [{"text": word * (size // len(word)) + "END"}], "coalesce": True}]


def check_text(run: Run, work: Path) -> str | None:
    return None if run.stdout.rstrip().endswith(b"END") else "the answer was not printed whole"


def parallel_turns(count: int) -> list[dict[str, Any]]:
    calls = [{"tool_call": {"name": "ls", "arguments": {"path": f"d{i:03d}"}}} for i in range(count)]
    return [{"blocks": calls, "coalesce": True}, {"blocks": [{"text": "Listed all."}], "coalesce": True}]


def setup_folders(count: int) -> Callable[[Path, str], list[str]]:
    def setup(work: Path, _program: str) -> list[str]:
        for i in range(count):
            folder = work / f"d{i:03d}"
            folder.mkdir(exist_ok=True)
            (folder / f"f{i}.txt").write_text("x")
        return []

    return setup


def check_answer(text: bytes) -> Callable[[Run, Path], str | None]:
    return lambda run, work: None if text in run.stdout else f"no {text!r} in the answer"


def bash_turns(size: int) -> list[dict[str, Any]]:
    command = f"yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c {size}; echo; echo BASH-DONE"
    return [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": command}}}], "coalesce": True},
        {"blocks": [{"text": "Ran it."}], "coalesce": True},
    ]


def read_turns() -> list[dict[str, Any]]:
    return [
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "lines.txt"}}}], "coalesce": True},
        {"blocks": [{"text": "Read it."}], "coalesce": True},
    ]


def setup_lines(count: int) -> Callable[[Path, str], list[str]]:
    def setup(work: Path, _program: str) -> list[str]:
        (work / "lines.txt").write_text("".join(f"line {i} of the long file\n" for i in range(count)))
        return []

    return setup


def setup_session(turns: int) -> Callable[[Path, str], list[str]]:
    from bench_session_load import write_realistic_session

    def setup(work: Path, _program: str) -> list[str]:
        path = work / "long.jsonl"
        # about three entries a turn (prompt, answer with tool calls, tool results)
        write_realistic_session(path, entries=turns * 3, compaction=True)
        header = json.loads(path.open().readline())
        lines = path.read_text().splitlines()
        header["cwd"] = str(work)
        lines[0] = json.dumps(header, separators=(",", ":"))
        path.write_text("\n".join(lines) + "\n")
        return ["--session", str(path)]

    return setup


def check_continued(run: Run, work: Path) -> str | None:
    path = work / "long.jsonl"
    last = json.loads(path.read_text().splitlines()[-1])
    if last.get("type") != "message" or last["message"].get("role") != "assistant":
        return "the session was not continued"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--case", action="append", choices=["write", "text", "parallel", "bash", "read", "session"]
    )
    parser.add_argument("--api", action="append", choices=list(APIS))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--pi", default=os.environ.get("PIKO_BENCH_PI16"), help="npm prefix of pi 1.6")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cases = args.case or ["write", "text", "parallel", "bash", "read", "session"]
    apis = args.api or list(APIS)
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        progs = programs(Path(tmp), args.pi)
        common = {"progs": progs, "runs": args.runs, "timeout": args.timeout}
        floor = run_case(
            "one-word answer (floor)", [{"blocks": [{"text": "Hi."}]}], check_answer(b"Hi."), **common
        )
        base_mb = floor["piko"]["peak_rss_mb"]

        def check_memory(result: dict[str, Any], message_mb: float) -> None:
            grown = result["piko"]["peak_rss_mb"] - base_mb
            result["piko"]["rss_above_floor_mb"] = round(grown, 1)
            if grown > 16 * message_mb:
                failures.append(
                    f"{result['case']} {result['api']}: {grown:.0f} MB above the floor for a "
                    f"{message_mb:g} MB message (target <= 16x)"
                )

        results.append(floor)

        def report(result: dict[str, Any]) -> dict[str, Any]:
            results.append(result)
            if not args.json:
                piko = result["piko"]
                line = (
                    f"{result['case']:24} {result['api']:24} piko {piko['wall_s']:8.2f} s "
                    f"CPU {piko['cpu_s']:7.2f} s {piko['peak_rss_mb']:7.0f} MB"
                )
                if "pi" in result:
                    pi = result["pi"]
                    line += (
                        f" | pi {pi['wall_s']:8.2f} s {pi['peak_rss_mb']:7.0f} MB | {result['ratio']:.2f}x"
                    )
                print(line, flush=True)
                for problem in result.get("problems", []):
                    print(f"    PROBLEM {problem}", flush=True)
            failures.extend(f"{result['case']} {result['api']}: {p}" for p in result.get("problems", []))
            return result

        if "write" in cases:
            for api in apis:
                small = report(
                    run_case(
                        "write 300 KB", write_turns(300 * KB), check_written(300 * KB), api=api, **common
                    )
                )
                large = report(run_case("write 1 MB", write_turns(MB), check_written(MB), api=api, **common))
                growth = large["piko"]["wall_s"] / small["piko"]["wall_s"]
                if growth > 4:
                    failures.append(f"write {api}: 1 MB took {growth:.1f}x the time of 300 KB (target <= 4x)")
                if "ratio" in small and small["ratio"] > 0.5:
                    failures.append(f"write {api}: 300 KB at {small['ratio']:.2f}x pi 1.6 (target <= 0.5x)")
                check_memory(large, 1)
        if "text" in cases:
            one = report(run_case("text 1 MB", text_turns(MB), check_text, **common))
            ten = report(run_case("text 10 MB", text_turns(10 * MB), check_text, **common))
            # per delta, above the floor's time (start-up and the one-word answer)
            for result, size in ((one, MB), (ten, 10 * MB)):
                result["per_delta_us"] = round(
                    (result["piko"]["wall_s"] - floor["piko"]["wall_s"]) / (size // 20) * 1e6, 2
                )
            if not args.json:
                print(
                    f"    per delta: {one['per_delta_us']:.1f} µs at 1 MB, {ten['per_delta_us']:.1f} µs at 10 MB"
                )
            if ten["per_delta_us"] > 1.5 * one["per_delta_us"]:
                failures.append("text: the per-delta cost grew with the message")
            check_memory(ten, 10)
        if "parallel" in cases:
            report(run_case("100 parallel tool calls", parallel_turns(100), check_answer(b"Listed all."),
                            setup=setup_folders(100), **common))  # fmt: skip
        if "bash" in cases:
            report(run_case("bash printing 100 MB", bash_turns(100 * MB), check_answer(b"Ran it."), **common))
        if "read" in cases:
            report(run_case("read of 50,000 lines", read_turns(), check_answer(b"Read it."),
                            setup=setup_lines(50_000), **common))  # fmt: skip
        if "session" in cases:
            report(run_case("5,000-turn session, continued", [{"blocks": [{"text": "One more."}], "coalesce": True}],
                            check_continued, setup=setup_session(5000), **common))  # fmt: skip
    if args.json:
        print(json.dumps({"results": results, "failures": failures}, indent=2))
    else:
        print("\n".join(["targets met"] if not failures else ["TARGETS MISSED:", *failures]))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
