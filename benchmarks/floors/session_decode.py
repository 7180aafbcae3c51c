"""The floor of loading a session eagerly: read the file, split it into lines, ``orjson.loads`` each.

``python benchmarks/floors/session_decode.py FILE`` prints the CPU time of each step. Any load
that turns every line into Python objects pays at least this, before making one entry or
message object; ``bench_pi16.py --case switch-flat`` compares piko's whole switch with it.
"""

import gc
import os
import sys
import time

import orjson


def main(path: str) -> None:
    gc.disable()  # as piko's load does (gc_paused): the collector is not part of the floor
    started = time.process_time()
    with open(path, "rb") as file:
        lines = file.read().split(b"\n")
    split = time.process_time()
    decoded = [orjson.loads(line) for line in lines if line]
    done = time.process_time()
    print(
        f"read and split {split - started:.3f} s CPU, orjson.loads of {len(decoded)} lines "
        f"{done - split:.3f} s CPU, together {done - started:.3f} s CPU"
    )


if __name__ == "__main__":
    main(sys.argv[1])
    sys.stdout.flush()
    os._exit(0)  # freeing the decoded objects at exit is no part of a load: skipped
