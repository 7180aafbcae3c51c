"""Trust: asked once on the terminal, recorded in trust.json, ``pi trust``/``pi untrust``, untrusted runs say so."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

from pkg_env import PiEnv

QUESTION = b"Choice [1-5"

EXTENSION = """from piko import hookimpl


@hookimpl
def piko_register_tools(register):
    register(name="project_tool", description="from the project", execute=lambda *a, **k: None)
"""


def _project_with_extension(pienv: PiEnv) -> Path:
    project = pienv.root / "proj"
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "projext.py").write_text(EXTENSION, encoding="utf-8")
    return project


def _run_in_terminal(pienv: PiEnv, args: list[str], cwd: Path, answer: str | None) -> tuple[int, str]:
    """Run pi with a real pseudo-terminal; answer the trust question when it is asked."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [str(pienv.python), "-m", "piko", *args],
        cwd=str(cwd), env=pienv.env(TERM="dumb"), stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    output = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        if answer is not None and not answered and QUESTION in output:
            os.write(master, answer.encode() + b"\n")
            answered = True
        if process.poll() is not None and not ready:
            break
    process.wait(timeout=30)
    os.close(master)
    return process.returncode, output.decode(errors="replace").replace("\r\n", "\n")


def test_interactive_run_asks_once_and_records_yes(pienv: PiEnv) -> None:
    project = _project_with_extension(pienv)
    code, output = _run_in_terminal(pienv, ["plugins"], project, "y")
    assert code == 0, output
    assert f"Trust project folder? {project}" in output
    assert "Found: .pi/extensions" in output
    assert "projext" in output.split("Choice [1-5", 1)[1]  # loaded right away, in the same run
    decisions = json.loads((pienv.agent_dir / "trust.json").read_text())
    assert decisions == {str(project): True}
    code, output = _run_in_terminal(pienv, ["plugins"], project, None)  # not asked again
    assert "Choice [" not in output and "projext" in output
    assert "project_tool" in pienv.probe(cwd=project)["tools"]


def test_interactive_no_is_recorded_and_subfolders_inherit(pienv: PiEnv) -> None:
    project = _project_with_extension(pienv)
    code, output = _run_in_terminal(pienv, ["plugins"], project, "n")
    assert code == 0
    assert "projext" not in output.split("Choice [1-5", 1)[1].split("Warning")[0]
    assert json.loads((pienv.agent_dir / "trust.json").read_text()) == {str(project): False}
    _code, again = _run_in_terminal(pienv, ["plugins"], project, None)
    assert "Choice [" not in again
    assert "not trusted" in again
    sub = project / "src"
    sub.mkdir()
    (sub / ".pi" / "extensions").mkdir(parents=True)
    (sub / ".pi" / "extensions" / "inner.py").write_text(EXTENSION.replace("project_tool", "inner_tool"))
    _code, inner = _run_in_terminal(
        pienv, ["plugins"], sub, None
    )  # the nearest decision (the parent's) holds
    assert "Choice [" not in inner


def test_non_interactive_runs_leave_project_code_out_and_say_so(pienv: PiEnv) -> None:
    project = _project_with_extension(pienv)
    (project / ".pi" / "settings.json").write_text(json.dumps({"shellPath": "/bin/sh"}), encoding="utf-8")
    result = pienv.pi("plugins", cwd=project)
    assert "projext" not in result.stdout
    warning = [line for line in result.stderr.splitlines() if line.startswith("Warning: Project resources")]
    assert warning == [
        f"Warning: Project resources in {project} were not loaded (.pi/settings.json (shellPath), "
        ".pi/extensions (projext.py)): "
        f"this project is not trusted. Use --approve (-a) to trust it for this run, or `pi trust` in {project} "
        "(/trust in the interactive mode) to save a decision"
    ]
    assert not (pienv.agent_dir / "trust.json").exists()  # nothing recorded without asking
    approved = pienv.pi("--approve", "plugins", cwd=project)  # one run, nothing saved
    assert "projext" in approved.stdout and "Project resources" not in approved.stderr
    assert not (pienv.agent_dir / "trust.json").exists()


def test_trust_and_untrust_commands(pienv: PiEnv) -> None:
    project = _project_with_extension(pienv)
    trusted = pienv.pi("trust", cwd=project)
    assert trusted.stdout.strip() == f"Trusted {project}"
    assert "Warning" not in trusted.stderr
    assert "project_tool" in pienv.probe(cwd=project)["tools"]
    assert pienv.pi("untrust", str(project)).stdout.strip() == f"Untrusted {project}"
    assert "project_tool" not in pienv.probe(cwd=project)["tools"]
    assert f"untrusted  {project}" in pienv.pi("trust", "--list").stdout
    assert pienv.pi("untrust", "--forget", cwd=project).stdout.strip() == f"Forgot the decision for {project}"
    assert json.loads((pienv.agent_dir / "trust.json").read_text()) == {}


def test_a_bare_pi_folder_is_never_asked_about(pienv: PiEnv) -> None:
    plain = pienv.root / "plain"
    (plain / ".pi").mkdir(parents=True)
    (plain / "AGENTS.md").write_text("Context files load regardless of trust.\n", encoding="utf-8")
    code, output = _run_in_terminal(pienv, ["plugins"], plain, "y")
    assert code == 0 and "Choice [" not in output and "Warning" not in output


def test_a_project_that_only_disables_plugins_is_asked_about_in_a_terminal(pienv: PiEnv) -> None:
    project = pienv.root / "proj"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(json.dumps({"disabledPlugins": ["tools.ls"]}))
    code, output = _run_in_terminal(pienv, ["plugins"], project, "y")
    assert code == 0, output
    assert f"Trust project folder? {project}" in output
    assert "Found: .pi/settings.json" in output
    assert "blocked (project settings disabledPlugins)" in output.split("Choice [1-5", 1)[1]
    assert json.loads((pienv.agent_dir / "trust.json").read_text()) == {str(project): True}
