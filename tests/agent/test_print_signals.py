"""SIGTERM, SIGHUP and SIGINT during ``pi -p``: the run stops, the session shuts down, exit 143 / 129 /
130 (as pi for the first two; pi dies of SIGINT)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_harness import MOCK
from support.processes import reaped

EXTENSION = """
import os

def activate(pi):
    def on_shutdown(event, ctx):
        with open(os.environ["PIKO_TEST_LOG"], "a") as log:
            log.write("session_shutdown\\n")

    pi.on("session_shutdown", on_shutdown)
"""


def _signal_once(
    process: subprocess.Popen[str], name: str, ready: Callable[[], bool], what: str, timeout: float = 20
) -> tuple[str, str]:
    """Once ``ready()`` (within 30 s), send ``process`` the signal ``name``; its stdout and stderr
    when it has ended (killed if it has not within ``timeout``)."""
    with reaped(process):
        deadline = time.monotonic() + 30
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready(), f"never: {what}"
        process.send_signal(getattr(signal, name))
        return process.communicate(timeout=timeout)


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_a_signal_mid_answer_shuts_the_session_down(pi_env: Any, name: str, code: int) -> None:
    env = pi_env([{"blocks": [{"text": "a slow answer"}], "stall_s": 30}])
    extension = env.write("shutdown_ext.py", EXTENSION)
    log = env.work / "events.log"
    process = env.start("-p", "-e", str(extension), *MOCK, "hello", env={"PIKO_TEST_LOG": str(log)})
    stdout, _stderr = _signal_once(
        process, name, lambda: bool(env.server.requests), "the request reached the server"
    )
    assert process.returncode == code
    assert stdout == "" and "Traceback" not in _stderr  # no answer is printed, no traceback
    assert log.read_text() == "session_shutdown\n"
    (session_file,) = env.sessions()
    text = session_file.read_text()
    assert '"role":"user"' in text  # what was said is saved
    assert '"stopReason":"aborted"' in text  # and the answer cut short


STUBBORN = str(Path(__file__).resolve().parents[1] / "support" / "stubborn_tool_ext.py")


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("name", "code", "tool"), [("SIGINT", 130, "very_stubborn"), ("SIGTERM", 143, "blocking")]
)
def test_a_signal_ends_the_run_although_a_tool_ignores_the_abort(
    pi_env: Any, name: str, code: int, tool: str
) -> None:
    env = pi_env(
        [{"blocks": [{"tool_call": {"name": tool, "arguments": {}}}]}, {"blocks": [{"text": "late"}]}]
    )
    extension = env.write("shutdown_ext.py", EXTENSION)
    log = env.work / "events.log"
    process = env.start(
        "-p", "-e", str(extension), "-e", STUBBORN, *MOCK, "run it", env={"PIKO_TEST_LOG": str(log)}
    )
    started = env.work / "tool-started.txt"
    stdout, stderr = _signal_once(process, name, started.exists, "the tool started", timeout=60)
    assert process.returncode == code
    assert stdout == "" and "Traceback" not in stderr
    assert "ignored the abort" in stderr
    assert log.read_text() == "session_shutdown\n"
    (session_file,) = env.sessions()
    assert f'"name":"{tool}"' in session_file.read_text()  # the call in flight is saved
