"""Project trust in a real terminal: the start-up question, then ``/trust`` saving a decision."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from tmux_terminal import Terminal


def _wait_stderr(terminal: Terminal, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in terminal.errors():
            return terminal.errors()
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never came; stderr:\n{terminal.errors()}\nscreen:\n{terminal.screen()}")


def test_startup_question_then_trust_command_saves_for_the_next_run(term: Callable[..., Terminal]) -> None:
    t = term(work_files={".pi/prompts/hi.md": "hello $1\n"}, start=True)
    asked = _wait_stderr(t, "Choice [1-5")
    work = os.path.realpath(t.work)
    assert f"Trust project folder? {work}" in asked and "Found: .pi/prompts" in asked
    t.submit("5")  # do not trust, for this session only: nothing saved
    t.wait_ready()
    assert not (t.agent / "trust.json").exists()
    t.submit("/trust")
    panel = t.wait_for("Project trust")
    assert "Saved decision: none" in panel and "Current session: untrusted" in panel
    assert "Trust (this session only)" not in panel  # /trust saves, or does nothing
    t.keys("Enter")  # the first choice: Trust
    t.wait_for("Saved trust decision: trusted. Restart pi for this to take effect.")
    assert json.loads((t.agent / "trust.json").read_text()) == {work: True}
    t.close()
    again = term(work_files={".pi/prompts/hi.md": "hello $1\n"}, start=False)
    again.agent.mkdir(parents=True, exist_ok=True)
    (again.agent / "trust.json").write_text(json.dumps({os.path.realpath(again.work): True}))
    again.start()
    again.wait_ready()
    again.submit("/trust")
    panel = again.wait_for("Project trust")
    assert "Saved decision: trusted" in panel and "Current session: trusted" in panel
    assert "Choice [" not in again.errors()  # a saved decision asks nothing
