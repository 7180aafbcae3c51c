"""Benchmark: open a large session file and build its context (time and peak RSS).

Generates a realistic pi session (user prompts, some with images, assistant replies with thinking,
text and tool calls, tool results with file-sized outputs, usage with fractional costs, abandoned
branches) of ``--entries``
entries (default 100,000, about 115 MB), then, in a fresh subprocess per run, opens it with
``SessionManager.open`` and calls ``build_context()``. Reports wall time of load and context
separately and the peak resident set size of the process.

A session that long has been compacted many times (no model takes 30 million tokens): by
default a compaction entry follows every ~160k tokens of history, keeping the last ~20k, as
pi's auto-compaction does. ``--no-compaction`` measures the worst case, where the context is
every message of the file.

    .venv/bin/python benchmarks/bench_session_load.py [--entries N] [--runs R] [--no-compaction]
        [--compare-pi [NPM_PREFIX]] [--json]

Target (issue "Agent core"): median open + context under 0.6 s and peak RSS under 300 MB for the
default (compacted) file; exits 1 when missed. pi 0.73.1 takes about 2-3 s and 600+ MB here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORDS = (
    "the a function return value file path error test module class import config session "
    "update handle result string number list dict parse write read build check line token "
    "agent model tool call output input context message branch entry leaf tree compaction "
    "summary provider stream usage cost retry abort signal event handler plugin kernel"
).split()


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
        if rng.random() < 0.08:
            words.append("\n")
    return " ".join(words)[:size]


def _code(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    length = 0
    n = 1
    while length < size:
        indent = "    " * rng.randint(0, 3)
        line = f"{n:>6}\t{indent}{rng.choice(_WORDS)}_{rng.choice(_WORDS)} = {rng.choice(_WORDS)}({rng.randint(0, 999)})"
        lines.append(line)
        length += len(line) + 1
        n += 1
    return "\n".join(lines)[:size]


def _image(rng: random.Random) -> str:
    """Base64 of a few kilobytes, as a small pasted PNG would be."""
    import base64

    return base64.b64encode(rng.randbytes(rng.randint(2000, 30000))).decode()


def _iso(ms: int) -> str:
    t = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{ms % 1000:03d}Z"


def write_realistic_session(
    path: str | os.PathLike[str],
    entries: int,
    seed: int = 7,
    compaction: bool = True,
    cwd: str = "/home/user/project",
    start_ms: int = 1_780_000_000_000,
) -> int:
    """Write a pi v3 session file of ``entries`` entries whose header names ``cwd``; returns its size in bytes."""
    from piko.lib.jsonio import dumps  # JavaScript's JSON.stringify output, as pi writes

    rng = random.Random(seed)
    ms = start_ms
    out: list[str] = []
    used_ids: set[str] = set()
    since_compaction = 0  # bytes of history since the last compaction (~4 bytes a token)
    turn_starts: list[str] = []

    def dump(obj: dict[str, object]) -> None:
        out.append(dumps(obj))

    dump(
        {
            "type": "session",
            "version": 3,
            "id": "01a228af-d835-700c-bee9-0cb0e47b184c",
            "timestamp": _iso(ms),
            "cwd": cwd,
        }
    )
    count = 0
    parent: str | None = None

    def add(entry: dict[str, object]) -> None:
        nonlocal count, parent, ms, since_compaction
        ms += rng.randint(5, 4000)
        entry_id = f"{rng.getrandbits(32):08x}"
        while entry_id in used_ids:
            entry_id = f"{rng.getrandbits(32):08x}"
        used_ids.add(entry_id)
        full = {"type": entry.pop("type"), "id": entry_id, "parentId": parent, "timestamp": _iso(ms), **entry}
        dump(full)
        since_compaction += len(out[-1])
        message = full.get("message")
        if isinstance(message, dict) and message.get("role") == "user":
            turn_starts.append(entry_id)
        parent = entry_id
        count += 1

    def maybe_compact() -> None:
        nonlocal since_compaction
        if not compaction or since_compaction < 160_000 * 4 or len(turn_starts) < 3 or count >= entries:
            return
        add(
            {
                "type": "compaction",
                "summary": "## Goal\n" + _text(rng, rng.randint(2000, 6000)),
                "firstKeptEntryId": turn_starts[-2],
                "tokensBefore": since_compaction // 4 + rng.randint(0, 20000),
                "details": {
                    "readFiles": [f"src/{rng.choice(_WORDS)}.py" for _ in range(rng.randint(1, 12))],
                    "modifiedFiles": [f"src/{rng.choice(_WORDS)}.py" for _ in range(rng.randint(0, 6))],
                },
            }
        )
        since_compaction = 20_000 * 4

    def add_abandoned_branch() -> None:
        """A prompt and its answer off the current leaf, then back: pi's ``/tree`` leaves such branches."""
        nonlocal parent
        fork = parent
        add({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": _text(rng, 200)}], "timestamp": ms}})  # fmt: skip
        add({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": _text(rng, 400)}], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": {"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": ms}})  # fmt: skip
        parent = fork

    add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    add({"type": "thinking_level_change", "thinkingLevel": "medium"})
    call = 0
    while count < entries:
        maybe_compact()
        if count >= entries:
            break
        if turn_starts and rng.random() < 0.02 and count + 4 < entries:
            add_abandoned_branch()
        prompt: list[dict[str, object]] = [{"type": "text", "text": _text(rng, rng.randint(40, 600))}]
        if rng.random() < 0.03:  # a pasted screenshot
            prompt.append({"type": "image", "data": _image(rng), "mimeType": "image/png"})
        add({"type": "message", "message": {"role": "user", "content": prompt, "timestamp": ms}})
        for _ in range(rng.randint(2, 6)):
            if count >= entries:
                break
            call += 1
            call_id = f"toolu_{call:024x}"
            tool = rng.choice(["read", "bash", "edit", "grep", "ls"])
            content: list[dict[str, object]] = []
            if rng.random() < 0.5:
                content.append(
                    {
                        "type": "thinking",
                        "thinking": _text(rng, rng.randint(100, 700)),
                        "thinkingSignature": "sig" + "A" * rng.randint(100, 300),
                    }
                )
            if rng.random() < 0.6:
                content.append({"type": "text", "text": _text(rng, rng.randint(30, 300))})
            content.append(
                {
                    "type": "toolCall",
                    "id": call_id,
                    "name": tool,
                    "arguments": {
                        "path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py",
                        "offset": rng.randint(1, 400),
                    },
                }
            )
            tokens_in = rng.randint(2000, 150000)
            tokens_out = rng.randint(20, 2000)
            cache_read = rng.randint(0, tokens_in)
            add(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "usage": {
                            "input": tokens_in - cache_read,
                            "output": tokens_out,
                            "cacheRead": cache_read,
                            "cacheWrite": 0,
                            "totalTokens": tokens_in + tokens_out,
                            "cost": {
                                "input": (tokens_in - cache_read) * 3 / 1e6,
                                "output": tokens_out * 15 / 1e6,
                                "cacheRead": cache_read * 0.3 / 1e6,
                                "cacheWrite": 0,
                                "total": ((tokens_in - cache_read) * 3 + tokens_out * 15 + cache_read * 0.3)
                                / 1e6,
                            },
                        },
                        "stopReason": "toolUse",
                        "timestamp": ms,
                        "responseId": f"msg_{rng.getrandbits(64):016x}",
                    },
                }
            )
            if count >= entries:
                break
            size = int(rng.lognormvariate(6.85, 0.6))
            details = (
                {"diff": _code(rng, 300), "firstChangedLine": rng.randint(1, 200)} if tool == "edit" else None
            )
            msg: dict[str, object] = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": tool,
                "content": [{"type": "text", "text": _code(rng, size)}],
            }
            if details is not None:
                msg["details"] = details
            msg["isError"] = rng.random() < 0.05
            msg["timestamp"] = ms
            add({"type": "message", "message": msg})
        if count < entries:
            add(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": _text(rng, rng.randint(100, 1200))}],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "usage": {
                            "input": 1200,
                            "output": 300,
                            "cacheRead": 50000,
                            "cacheWrite": 0,
                            "totalTokens": 51500,
                            "cost": {
                                "input": 0.0036,
                                "output": 0.0045,
                                "cacheRead": 0.015,
                                "cacheWrite": 0,
                                "total": 0.0231,
                            },
                        },
                        "stopReason": "stop",
                        "timestamp": ms,
                        "responseId": f"msg_{rng.getrandbits(64):016x}",
                    },
                }
            )
    data = "\n".join(out) + "\n"
    Path(path).write_text(data, encoding="utf-8")
    return len(data.encode("utf-8"))


_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from piko.sessions.manager import SessionManager
t1 = time.perf_counter()
cpu1 = resource.getrusage(resource.RUSAGE_SELF)
m = SessionManager.open(sys.argv[1])
t2 = time.perf_counter()
ctx = m.build_context()
t3 = time.perf_counter()
cpu2 = resource.getrusage(resource.RUSAGE_SELF)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:  # ru_maxrss survives fork+exec (it would count the parent); VmHWM is this image's own peak
    with open("/proc/self/status") as fh:
        rss = next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))
except (OSError, StopIteration):
    pass
cpu = (cpu2.ru_utime + cpu2.ru_stime) - (cpu1.ru_utime + cpu1.ru_stime)
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "context_s": t3 - t2, "total_s": t3 - t1, "cpu_s": cpu,
                  "peak_rss_mb": rss / 1024, "entries": len(m.get_entries()), "messages": len(ctx.messages)}))
"""

# pi's own SessionManager on the same file, for comparison (--compare-pi).
_PI_CHILD = r"""
const { SessionManager } = await import(process.argv[1]);
const t1 = performance.now();
const sm = SessionManager.open(process.argv[2]);
const t2 = performance.now();
const ctx = sm.buildSessionContext();
const t3 = performance.now();
const peak = process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify({ open_s: (t2 - t1) / 1000, context_s: (t3 - t2) / 1000, total_s: (t3 - t1) / 1000,
  peak_rss_mb: peak, messages: ctx.messages.length }));
"""

TARGET_S = 0.6
TARGET_MB = 300


def run_once(path: str) -> dict[str, float]:
    """Open ``path`` and build its context in a fresh interpreter; return the figures."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, path], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def run_pi(prefix: str, path: str) -> dict[str, float] | None:
    """pi 0.73.1's figures for the same file (None when node or pi is missing)."""
    module = Path(prefix) / "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"
    if not module.exists() or shutil.which("node") is None:
        return None
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", _PI_CHILD, str(module), path],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--no-compaction", action="store_true", help="no compaction entries (worst case, no target)"
    )
    parser.add_argument("--file", help="use (or create) this session file instead of a temporary one")
    parser.add_argument("--compare-pi", metavar="PREFIX", nargs="?", const="/work/scratch/pi073",
                        help="also time pi's SessionManager (npm prefix holding pi 0.73.1)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or os.path.join(tmp, "bench.jsonl")
        if not os.path.exists(path):
            size = write_realistic_session(path, args.entries, compaction=not args.no_compaction)
        else:
            size = os.path.getsize(path)
        results = [run_once(path) for _ in range(args.runs)]
        pi = run_pi(args.compare_pi, path) if args.compare_pi else None
    median = {
        k: statistics.median(r[k] for r in results)
        for k in ("open_s", "context_s", "total_s", "cpu_s", "peak_rss_mb")
    }
    met = args.no_compaction or (median["total_s"] < TARGET_S and median["peak_rss_mb"] < TARGET_MB)
    if args.json:
        print(json.dumps({"file_mb": size / 1e6, "compaction": not args.no_compaction, "runs": results,
                          "median": median, "pi": pi, "met": met}))  # fmt: skip
        return 0 if met else 1
    kind = (
        "no compaction (worst case: every message is context)"
        if args.no_compaction
        else "compacted as pi does"
    )
    print(f"session file: {size / 1e6:.1f} MB, {results[0]['entries']} entries, {kind}")
    for r in results:
        print(
            f"  open {r['open_s']:.3f}s  context {r['context_s']:.3f}s  total {r['total_s']:.3f}s "
            f"(cpu {r['cpu_s']:.3f}s)  peak RSS {r['peak_rss_mb']:.0f} MB  ({r['messages']} messages in context)"
        )
    print(
        f"median: total {median['total_s']:.3f}s, cpu {median['cpu_s']:.3f}s, peak RSS {median['peak_rss_mb']:.0f} MB"
        + (
            ""
            if args.no_compaction
            else f"  (targets: < {TARGET_S}s, < {TARGET_MB} MB: {'met' if met else 'MISSED'})"
        )
    )
    if pi is not None:
        print(
            f"pi 0.73.1: open {pi['open_s']:.3f}s  context {pi['context_s']:.3f}s  total {pi['total_s']:.3f}s  "
            f"peak RSS {pi['peak_rss_mb']:.0f} MB"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
