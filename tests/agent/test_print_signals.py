"""SIGTERM and SIGHUP during ``pi -p``: the run stops, the session shuts down, exit 143 / 129 (as pi)."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest

MOCK = ("--provider", "mock", "--model", "mock-1")

EXTENSION = """
import os

def activate(pi):
    def on_shutdown(event, ctx):
        with open(os.environ["PIKO_TEST_LOG"], "a") as log:
            log.write("session_shutdown\\n")

    pi.on("session_shutdown", on_shutdown)
"""


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_mid_answer_shuts_the_session_down(pi_env: Any, name: str, code: int) -> None:
    env = pi_env([{"blocks": [{"text": "a slow answer"}], "stall_s": 30}])
    extension = env.write("shutdown_ext.py", EXTENSION)
    log = env.work / "events.log"
    process = env.start("-p", "-e", str(extension), *MOCK, "hello", env={"PIKO_TEST_LOG": str(log)})
    try:
        deadline = time.monotonic() + 30
        while not env.server.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert env.server.requests, "the request never reached the server"
        process.send_signal(getattr(signal, name))
        stdout, _stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code
    assert stdout == ""  # no answer is printed
    assert log.read_text() == "session_shutdown\n"
    (session_file,) = env.sessions()
    assert '"role":"user"' in session_file.read_text()  # what was said is saved
