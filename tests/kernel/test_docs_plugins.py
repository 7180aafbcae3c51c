"""The examples of docs/plugins.md that are not a file of the repository, run as the docs show them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.doc_blocks import code_block

from piko.testing import PikoHome
from piko.testing import PikoSession


def test_an_override_wraps_the_original_read(piko_session: PikoSession, piko_home: PikoHome) -> None:
    extension = piko_home.write("checked_read.py", code_block("plugins.md", "ctx.invoke_tool"))
    (piko_home.project / "notes.txt").write_text("hello\n")
    call = {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]}
    run = piko_session.run("read it", turns=[call, {"blocks": [{"text": "ok"}]}], extensions=[extension])
    [result] = run.tool_results
    assert result.content[0].text == "checked: hello\n"
    listed = piko_home.pi("-e", str(extension), "plugins")
    assert "active, overrides tools.read" in next(
        line for line in listed.stdout.splitlines() if line.startswith("checked_read")
    )


def test_the_lower_level_example_runs_as_a_test(tmp_path: Path) -> None:
    (tmp_path / "test_guard.py").write_text(code_block("plugins.md", "def test_guard_blocks_rm"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_guard.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
