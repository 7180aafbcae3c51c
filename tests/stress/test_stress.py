"""The stress suite (``pytest -m stress``): each case of ``benchmarks/bench_stress.py``, bounded.

Kept out of the default run (each case streams megabytes). A case passes when its effect is
right (the file written whole, the answer printed, the session continued) and it meets the
targets that do not need pi (1 MB write within 4x the 300 KB one, a flat per-delta cost, memory
within 16x the message); a run to quadratic time ends at the case's timeout. For the ratios to
pi 1.6, run the script itself with ``PIKO_BENCH_PI16`` set.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_stress.py"

CASES = [
    ("write", "openai-completions"),
    ("write", "anthropic-messages"),
    ("write", "openai-responses"),
    ("write", "google-generative-ai"),
    ("write", "mistral-conversations"),
    ("write", "bedrock-converse-stream"),
    ("text", None),
    ("parallel", None),
    ("bash", None),
    ("read", None),
    ("session", None),
]


@pytest.mark.stress
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("case", "api"), CASES, ids=[f"{c}-{a}" if a else c for c, a in CASES])
def test_stress_case(case: str, api: str | None) -> None:
    command = [sys.executable, str(SCRIPT), "--case", case, "--timeout", "240", "--json", "--pi", ""]
    if api:
        command += ["--api", api]
    done = subprocess.run(command, capture_output=True, text=True, timeout=580, check=False)
    report = json.loads(done.stdout)
    for result in report["results"]:
        print(result)
    assert report["failures"] == [], report["failures"]
    assert done.returncode == 0, done.stderr[-2000:]
