"""Benchmark: decoding a 10,000-delta openai-completions SSE stream into piko stream events.

The stream is served from 127.0.0.1 by the scripted LLM server (``tests/support/llm_server.py``)
running in its own process. Two clients read the same stream: a bare ``httpx`` iteration of
``response.aiter_lines()`` (the floor) and piko's ``openai-completions`` stream function
(request, SSE parsing, JSON decoding, message building, one event per delta). Target: the
decode takes at most 2x the bare iteration. A third client iterates the lines through piko's
plain-http transport (what piko's requests to ``http://`` servers use), which sets the
transport apart from the decoding.

Run: ``.venv/bin/python benchmarks/bench_sse_decode.py [--deltas N] [--rounds R]``; exits 1
when the ratio is above the target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 2.0


def start_server(deltas: int, coalesce: bool) -> tuple[subprocess.Popen[str], str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from support.llm_server import TurnContext
    from support.llm_server import find_format

    # render the stream once: the server then only writes bytes, so its encoding time is not
    # part of what the two clients are measured on
    text = " ".join(f"w{i}" for i in range(deltas))
    fmt = find_format("POST", "/v1/chat/completions")
    assert fmt is not None
    ctx = TurnContext(1, "POST", "/v1/chat/completions", {}, {}, {"model": "bench"})
    events = [chunk.decode() for chunk in fmt.encode({"blocks": [{"text": text}]}, ctx)]
    chunks = ["".join(events)] if coalesce else events
    headers = [["content-type", "text/event-stream"]]
    turn = {"replay": {"status": 200, "headers": headers, "body_chunks": chunks}, "repeat": True}
    script = Path(tempfile.mkdtemp(prefix="bench-sse-")) / "turns.json"
    script.write_text(json.dumps([turn]), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "support" / "llm_server.py"), str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    return proc, base_url


async def bare(base_url: str, transport: str = "httpx") -> tuple[float, int]:
    """Iterate the lines of the stream with nothing else done; ``transport`` ``piko``: through
    piko's plain-http transport, the one piko's own requests use."""
    import httpx

    mounts: dict[str, object] = {}
    if transport == "piko":
        from piko.plugins.providers.plain_transport import PlainHTTPTransport

        mounts = {"http://": PlainHTTPTransport()}
    async with httpx.AsyncClient(timeout=60, mounts=mounts) as client:  # type: ignore[arg-type]
        start = time.perf_counter()
        lines = 0
        async with client.stream(
            "POST", base_url + "/v1/chat/completions", json={"model": "bench", "stream": True}
        ) as response:
            async for _line in response.aiter_lines():
                lines += 1
        return time.perf_counter() - start, lines


async def decode(base_url: str) -> tuple[float, int, str]:
    from piko.data.messages import Model
    from piko.data.messages import UserMessage
    from piko.data.streaming import Context
    from piko.data.streaming import StreamOptions
    from piko.lib.abort import AbortController
    from piko.plugins.providers.openai_completions.wire import stream

    model = Model(id="bench", api="openai-completions", provider="bench", base_url=base_url + "/v1")
    context = Context(messages=[UserMessage(content="go", timestamp=0)])
    start = time.perf_counter()
    events = 0
    last = ""
    options = StreamOptions(api_key="k", signal=AbortController().signal)  # as the agent sends it
    async for event in stream(model, context, options):
        events += 1
        last = event.type
    return time.perf_counter() - start, events, last


async def run(deltas: int, rounds: int, coalesce: bool) -> int:
    proc, base_url = start_server(deltas, coalesce)
    try:
        # warm up both paths (imports, connection pools, server caches)
        await bare(base_url)
        await bare(base_url, "piko")
        await decode(base_url)
        bare_times: list[float] = []
        same_transport_times: list[float] = []
        decode_times: list[float] = []
        events = 0
        for _ in range(rounds):
            elapsed, _lines = await bare(base_url)
            bare_times.append(elapsed)
            elapsed, _lines = await bare(base_url, "piko")
            same_transport_times.append(elapsed)
            elapsed, events, last = await decode(base_url)
            decode_times.append(elapsed)
            if last != "done":
                print(f"decode ended with {last!r}", file=sys.stderr)
                return 2
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
    # the best of interleaved rounds: the least disturbed by whatever else the machine runs
    bare_s = min(bare_times)
    decode_s = min(decode_times)
    ratio = decode_s / bare_s
    median_ratio = statistics.median(decode_times) / statistics.median(bare_times)
    mode = "whole body in one write" if coalesce else "one HTTP chunk per SSE event"
    print(f"deltas: {deltas}, rounds: {rounds}, events per stream: {events}, server: {mode}")
    print(
        f"bare httpx aiter_lines: {bare_s * 1000:.1f} ms (best), {statistics.median(bare_times) * 1000:.1f} ms (median)"
    )
    print(
        f"same, piko's transport: {min(same_transport_times) * 1000:.1f} ms (best), "
        f"{statistics.median(same_transport_times) * 1000:.1f} ms (median)"
    )
    print(
        f"piko decode:            {decode_s * 1000:.1f} ms (best), {statistics.median(decode_times) * 1000:.1f} ms "
        f"(median), {events / decode_s:,.0f} events/s"
    )
    print(
        f"ratio: {ratio:.2f}x best, {median_ratio:.2f}x median (target <= {TARGET_RATIO:.1f}x) -> {'OK' if ratio <= TARGET_RATIO else 'FAIL'}"
    )
    return 0 if ratio <= TARGET_RATIO else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--coalesce", action="store_true", help="serve the whole stream in one write (a stress case)"
    )
    args = parser.parse_args()
    return asyncio.run(run(args.deltas, args.rounds, args.coalesce))


if __name__ == "__main__":
    sys.exit(main())
