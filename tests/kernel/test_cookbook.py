"""docs/cookbook.md, run as written: the gateway provider installed with pip, the tool gate, the
report mode (the renderer recipe: tests/interactive/test_cookbook_renderer.py)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.doc_blocks import code_block

from piko.testing import LLMServer
from piko.testing import PikoHome
from piko.testing import PikoSession
from piko.testing import RecordingUI


def _tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": name, "arguments": arguments}}]}


def _fake_acme_auth(folder: Path) -> Path:
    """An ``acme-auth`` on PATH that prints a token and counts its runs in ``runs.txt``."""
    folder.mkdir()
    script = folder / "acme-auth"
    script.write_text(
        f"#!/bin/sh\n[ \"$*\" = 'token --audience llm' ] || exit 2\necho x >> {folder / 'runs.txt'}\n"
        "echo acme-token-123\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return folder


def test_the_gateway_provider_installs_with_pip_and_sends_its_headers_and_key(
    piko_home: PikoHome, llm_server: LLMServer, tmp_path: Path
) -> None:
    package = tmp_path / "acme-gateway"
    package.mkdir()
    (package / "pyproject.toml").write_text(code_block("cookbook.md", 'name = "acme-gateway"', "toml"))
    (package / "acme_gateway.py").write_text(code_block("cookbook.md", "def piko_register_providers"))
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
         "--target", str(site), str(package)],
        capture_output=True, text=True, timeout=300, env=piko_home.environment(),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    bin_dir = _fake_acme_auth(tmp_path / "bin")
    env = {
        "PYTHONPATH": str(site),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "ACME_GATEWAY_URL": llm_server.base_url + "/v1",
    }

    listed = piko_home.pi("--list-models", "acme", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split()[:2] for line in listed.stderr.splitlines()[1:]]  # on stderr, as pi prints it
    assert rows == [["acme-gateway", "acme-coder"], ["acme-gateway", "acme-thinker"]]

    llm_server.add_turns([_tool_call("ls", path="."), {"blocks": [{"text": "Hello from Acme"}]}])
    done = piko_home.pi("--provider", "acme-gateway", "--model", "acme-coder", "-p", "Hello", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from Acme"
    assert len(llm_server.requests) == 2
    for request in llm_server.requests:
        headers = {k.lower(): v for k, v in request["headers"].items()}
        assert headers["authorization"] == "Bearer acme-token-123"
        assert (headers["x-acme-team"], headers["x-acme-client"]) == ("platform", "piko")
        assert request["body"]["model"] == "acme-coder"
    assert (bin_dir / "runs.txt").read_text().count("x") == 2  # the command ran for each request


GATE_TURNS = [
    _tool_call("bash", command="rm -rf build"),
    _tool_call("bash", command="ls"),
    _tool_call("write", path="../outside.txt", content="hi"),
    {"blocks": [{"text": "done"}]},
]


def _gate_results(piko_session: PikoSession, piko_home: PikoHome, ui: RecordingUI | None) -> list[Any]:
    gate = piko_home.write(
        "gate.py", code_block("cookbook.md", 'def activate(pi):\n    pi.set_label("Tool gate")')
    )
    run = piko_session.run("tidy up", turns=GATE_TURNS, extensions=[gate], ui=ui)
    return [(r.tool_name, r.is_error, r.content[0].text) for r in run.tool_results]


def test_the_gate_blocks_unlisted_programs_and_refuses_outside_writes_without_a_ui(
    piko_session: PikoSession, piko_home: PikoHome
) -> None:
    outside = (piko_home.project / ".." / "outside.txt").resolve()
    results = _gate_results(piko_session, piko_home, None)
    assert results[0][:2] == ("bash", True) and "the gate allows only cat, git, grep" in results[0][2]
    assert results[1][:2] == ("bash", False)
    assert results[2] == ("write", True, f"{outside} is outside the project")
    assert not outside.exists()


def test_the_gate_asks_before_writing_outside_the_project(
    piko_session: PikoSession, piko_home: PikoHome
) -> None:
    ui = RecordingUI(answers={"confirm": [True]})
    results = _gate_results(piko_session, piko_home, ui)
    assert results[2][:2] == ("write", False)
    assert ui.dialogs == [("confirm", "Write outside the project?")]
    assert (piko_home.project / ".." / "outside.txt").resolve().read_text() == "hi"


def test_the_report_mode_prints_the_answer_and_its_statistics(
    piko_home: PikoHome, llm_server: LLMServer
) -> None:
    piko_home.use_llm_server(llm_server)
    mode = piko_home.write("report_mode.py", code_block("cookbook.md", "def piko_register_modes"))
    llm_server.add_turns(
        [
            {**_tool_call("ls", path="."), "usage": {"input": 40, "output": 7}},
            {"blocks": [{"text": "One file."}], "usage": {"input": 60, "output": 3}},
        ]
    )
    args = ["-e", str(mode), "--mode", "report", "--provider", "mock", "--model", "mock-1"]
    done = piko_home.pi(*args, "what is here?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["One file.", "[60 in, 3 out, tools: ls]"]

    blocked = piko_home.pi("-e", str(mode), "--disable-plugin", "tools.bash", "plugins")
    assert "blocked (--disable-plugin)" in next(
        line for line in blocked.stdout.splitlines() if line.startswith("tools.bash")
    )
    llm_server.add_turns([{"status": 400, "repeat": True}])
    failed = piko_home.pi(*args, "hi")
    assert failed.returncode == 1 and failed.stderr.startswith("report: ")
