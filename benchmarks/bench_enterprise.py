"""What the audit log and telemetry cost: ``pi -p`` round trips against a local server, plain,
with ``PIKO_AUDIT_LOG``, with OpenTelemetry exporting to a collector on 127.0.0.1, and with both.

Each run asks for ``--tools`` turns of one ``read`` tool call each, then a final text turn, so
the per-tool-call cost shows as the difference between ``--tools 0`` and ``--tools 20``. The
variants take turns, run after run; we report median wall and CPU time (from ``wait4``) and
each variant's extra over the plain run. Target (issue 21): none; the figures go in the note.

    .venv/bin/python benchmarks/bench_enterprise.py [--runs 15] [--tools 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from measure import run_measured  # noqa: E402
from support.clean_env import hermetic_environment  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402
from support.pi_dirs import make_pi_dirs  # noqa: E402

PIKO = str(Path(sys.executable).with_name("pi"))


class _Sink(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.end_headers()


def turns(tools: int) -> list[dict[str, Any]]:
    calls = [{"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]}] * tools
    return [*calls, {"blocks": [{"text": "Hi there"}]}]


def measure(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """One ``pi -p`` run: wall and CPU seconds (:func:`measure.run_measured`)."""
    command = [PIKO, "--provider", "mock", "--model", "mock-1", "--no-session", "--tools", "read", "-p", "go"]
    run = run_measured(command, env, cwd, timeout=120)
    if run.code != 0:
        raise RuntimeError(f"pi exited with {run.code}")
    return run.wall, run.cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tools", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    collector = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, LLMServer([]) as server:
        home, work = make_pi_dirs(Path(tmp), server)
        base = hermetic_environment()
        base.update(
            PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent.parent)
        )
        otel = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server_address[1]}"}
        audit = {"PIKO_AUDIT_LOG": str(Path(tmp) / "audit.jsonl")}
        variants = {"plain": {}, "audit": audit, "telemetry": otel, "both": {**audit, **otel}}
        for tools in (0, args.tools):
            for _ in range(2):  # warm-up
                for extra in variants.values():
                    server.add_turns(turns(tools))
                    measure({**base, **extra}, work)
            for _ in range(args.runs):
                for name, extra in variants.items():
                    server.add_turns(turns(tools))
                    wall, cpu = measure({**base, **extra}, work)
                    row = results.setdefault(f"{name}/{tools}", {"wall": [], "cpu": []})
                    row["wall"].append(wall)
                    row["cpu"].append(cpu)
    collector.shutdown()
    medians = {k: {m: statistics.median(v) for m, v in row.items()} for k, row in results.items()}
    if args.json:
        print(json.dumps(medians, indent=2))
        return 0
    print(f"{'variant/tool calls':<22}{'wall ms':>10}{'cpu ms':>10}{'extra wall':>12}{'extra cpu':>11}")
    for key, row in medians.items():
        plain = medians[f"plain/{key.split('/')[1]}"]
        print(
            f"{key:<22}{row['wall'] * 1000:>10.1f}{row['cpu'] * 1000:>10.1f}"
            f"{(row['wall'] - plain['wall']) * 1000:>+12.1f}{(row['cpu'] - plain['cpu']) * 1000:>+11.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
