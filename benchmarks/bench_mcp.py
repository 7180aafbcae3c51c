"""MCP: a tool call's round trip through piko against the SDK's own client, and the time to the
first prompt with one stdio server against none.

* **round trip**: ``--calls`` calls of the demo server's ``echo`` over stdio, one at a time,
  through the SDK's own ``stdio_client`` + ``ClientSession.call_tool``, then through piko's
  :class:`~piko.plugins.mcp.connection.ServerConnection` (its own process transport and the
  progress-aware timeout) and the result conversion. We report the median per call of each.
* **first prompt**: ``pi -p hi`` against a scripted local LLM server, runs taking turns without
  ``mcp.json`` and with one ``direct`` stdio server (so the prompt waits for it); median wall
  and CPU time of each, from ``wait4``.

    .venv/bin/python benchmarks/bench_mcp.py [--calls 300] [--runs 7] [--json]

Target (issue 17): piko's round trip at most 1.5x the SDK client's (the first-prompt figures are
reported, not judged: they are mostly the server's own start-up).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from measure import run_measured  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402

PIKO = str(Path(sys.executable).with_name("pi"))
ROUND_TRIP_TARGET = 1.5
DEMO = str(REPO / "tests" / "mcp" / "servers" / "demo_server.py")


async def sdk_calls(calls: int) -> list[float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.stdio import stdio_client

    times: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=[DEMO])
    quiet = open(os.devnull, "w")  # the server's request log, as piko keeps it out of sight
    async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for i in range(calls):
            started = time.perf_counter()
            await session.call_tool("echo", {"text": f"n{i}"})
            times.append(time.perf_counter() - started)
    return times


async def piko_calls(calls: int, agent_dir: str) -> list[float]:
    from piko.plugins.mcp.config import ServerConfig
    from piko.plugins.mcp.connection import ServerConnection
    from piko.plugins.mcp.log import McpLog
    from piko.plugins.mcp.results import tool_result

    config = ServerConfig(name="demo", kind="stdio", raw={"command": sys.executable, "args": [DEMO]},
                          source="bench", scope="global")  # fmt: skip
    connection = ServerConnection(config, os.getcwd(), McpLog(agent_dir))
    connection.start()
    assert await connection.wait_ready(60), connection.error
    times: list[float] = []
    try:
        for i in range(calls):
            started = time.perf_counter()
            tool_result(await connection.call_tool("echo", {"text": f"n{i}"}), "demo", "echo")
            times.append(time.perf_counter() - started)
    finally:
        await connection.stop()
    return times


def first_prompt(runs: int, root: Path) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of ``pi -p hi``: no server, then one direct stdio server."""
    turns = [{"blocks": [{"text": "Hi there"}]}, {"repeat": True, "blocks": [{"text": "Hi there"}]}]
    results: dict[str, list[tuple[float, float]]] = {"no servers": [], "one stdio server": []}
    with LLMServer(turns) as server:
        homes = {}
        for label in results:
            home = root / label.replace(" ", "-") / ".pi" / "agent"
            home.mkdir(parents=True)
            models = {"providers": {"mock": {"baseUrl": server.base_url + "/v1", "api": "openai-completions",
                                             "apiKey": "k", "models": [{"id": "mock-1"}]}}}  # fmt: skip
            (home / "models.json").write_text(json.dumps(models))
            if label == "one stdio server":
                servers = {"demo": {"command": sys.executable, "args": [DEMO], "exposure": "direct"}}
                (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
            homes[label] = home
        command = [PIKO, "-p", "--provider", "mock", "--model", "mock-1", "--no-session", "hi"]
        for run in range(runs + 1):
            for label, home in homes.items():
                env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "PIKO_"))}
                env.update(
                    PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent)
                )
                measured = run_measured(command, env, home, timeout=120)
                if measured.code != 0:
                    raise RuntimeError(
                        f"pi failed ({label}): {measured.stderr[-300:].decode(errors='replace')}"
                    )
                if run:  # the first run of each warms caches
                    results[label].append((measured.wall, measured.cpu))
    return {
        label: {
            "wall_ms": statistics.median(w for w, _ in got) * 1000,
            "cpu_ms": statistics.median(c for _, c in got) * 1000,
        }
        for label, got in results.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sdk = asyncio.run(sdk_calls(args.calls))
        piko = asyncio.run(piko_calls(args.calls, tmp))
        prompt = first_prompt(args.runs, Path(tmp))
    report = {
        "round_trip_us": {"sdk": statistics.median(sdk) * 1e6, "piko": statistics.median(piko) * 1e6},
        "first_prompt": prompt,
    }
    trip = report["round_trip_us"]
    met = trip["piko"] <= ROUND_TRIP_TARGET * trip["sdk"]
    if args.json:
        print(json.dumps(report, indent=2))
        sys.exit(0 if met else 1)
    print(f"tool call round trip (median of {args.calls}): SDK client {trip['sdk']:.0f} us, "
          f"piko {trip['piko']:.0f} us, overhead {trip['piko'] - trip['sdk']:+.0f} us")  # fmt: skip
    for label, figures in prompt.items():
        print(f"pi -p hi, {label:17} wall {figures['wall_ms']:.0f} ms, CPU {figures['cpu_ms']:.0f} ms")
    ratio = trip["piko"] / trip["sdk"]
    print(
        f"round trip is {ratio:.2f}x the SDK client's: {'meets' if met else 'MISSES'} the target of {ROUND_TRIP_TARGET}x"
    )
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
