"""The worked example of docs/plugins.md ("Testing a plugin"): the example plugin's own tests, run
with pytest in a subprocess as its author would run them, on the package installed offline.

They take piko.testing's fixtures through the ``pytest11`` entry point of the installed piko, and
find the plugin through its ``piko`` entry point: nothing is imported by hand.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.doc_blocks import shown_file

from piko.testing.rpc_client import hermetic_environment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TESTS = ROOT / "examples" / "piko-example-plugin" / "tests" / "test_example_plugin.py"


def test_the_example_plugins_tests_pass_with_the_fixtures(example_site: Path) -> None:
    source = example_site.parent / "src"  # the copy example_site installed
    env = {**hermetic_environment(), "PYTHONPATH": str(example_site)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=source, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^3 passed", proc.stdout, re.MULTILINE), proc.stdout


def test_the_docs_show_the_example_test_as_it_is() -> None:
    shown = shown_file("plugins.md", "examples/piko-example-plugin/tests/test_example_plugin.py")
    assert shown == EXAMPLE_TESTS.read_text(encoding="utf-8")
