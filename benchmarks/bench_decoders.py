"""Decoding a session's messages: the orjson + cattrs path against msgspec's typed decoding.

Issue 20 asked whether msgspec (decoding JSON straight into typed ``Struct`` classes, in C) is
worth its place beside cattrs for the data model's wire classes; ``piko.data.fast_decode`` is
the answer, and this measures it on the message lines of a generated never-compacted
100,000-entry session (the case where every message is decoded): CPU time, best of
``--runs``, the garbage collector off as in piko's load.

- ``orjson + cattrs``: ``orjson.loads`` of each line, then ``piko.data.wire.message_from_wire``
  (cattrs' generated functions into the attrs data model), the path every line can take;
- ``orjson only``: ``orjson.loads`` of each line, no objects made: the floor of that path;
- ``msgspec into Structs``: ``fast_decode``'s decoder alone, into its ``Struct`` mirrors;
- ``msgspec, then attrs``: ``fast_decode.decode_message_line``, the mirrors built into the
  attrs data model: what a long session's load does now.

No target.

    .venv/bin/python benchmarks/bench_decoders.py [--entries 100000] [--runs 3] [--file F]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from piko.data import fast_decode
from piko.data.wire import message_from_wire


def message_lines(path: Path) -> list[bytes]:
    """The ``message`` entry lines of a session file."""
    return [line for line in path.read_bytes().split(b"\n") if line.startswith(b'{"type":"message"')]


def best_cpu(work: Callable[[], object], runs: int) -> float:
    """The least CPU time of ``runs`` calls of ``work``, the collector off."""
    times: list[float] = []
    for _ in range(runs):
        gc.disable()
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
        gc.enable()
        gc.collect()
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--file", help="a session file to read (default: one generated, never compacted)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.file) if args.file else Path(tmp) / "flat.jsonl"
        if not args.file:
            from bench_session_load import write_realistic_session

            write_realistic_session(path, args.entries, compaction=False)
        lines = message_lines(path)
    print(f"{len(lines):,} message lines, {sum(map(len, lines)) / 1e6:.1f} MB")
    loads, structs, decode = orjson.loads, fast_decode._decode, fast_decode.decode_message_line
    rows: list[tuple[str, float]] = [
        ("orjson + cattrs into attrs", best_cpu(lambda: [message_from_wire(loads(x)["message"]) for x in lines], args.runs)),
        ("orjson only, no objects", best_cpu(lambda: [loads(x) for x in lines], args.runs)),
        ("msgspec into Structs", best_cpu(lambda: [structs(x) for x in lines], args.runs)),
        ("msgspec, then attrs", best_cpu(lambda: [decode(x) for x in lines], args.runs)),
    ]  # fmt: skip
    taken = sum(decode(x) is not None for x in lines)
    print(f"msgspec takes {taken:,} of the lines whole (the rest go the cattrs way)")
    first = rows[0][1]
    for name, seconds in rows:
        print(f"{name:<36} {seconds:7.3f} s CPU  ({seconds / first:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
