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


def test_a_project_trust_handler_asks_the_user_on_the_terminal(term: Callable[..., Terminal]) -> None:
    """pi 1.6: ``project_trust`` handlers have ``ctx.ui.select``/``confirm`` in an interactive run;
    their decision takes the place of the built-in question."""
    files = {".pi/prompts/hi.md": "hello $1\n"}
    t = term(work_files=files, extensions=("trust_asker_ext.py",), start=True)
    asked = _wait_stderr(t, "Choice [1-2")
    assert "Which way for this project? (mode tui)" in asked and "1. trust it" in asked  # pi 1.6's ctx.mode
    t.submit("1")
    asked = _wait_stderr(t, f"Trust project?\n{os.path.realpath(t.work)}")
    t.submit("1")  # Yes
    t.wait_ready()
    assert "Trust project folder?" not in t.errors()  # the extension decided: no built-in question
    t.submit("/trust")
    panel = t.wait_for("Project trust")
    assert "Current session: trusted" in panel and "Saved decision: none" in panel
    t.close()
    again = term(work_files=files, extensions=("trust_asker_ext.py",), start=True)
    _wait_stderr(again, "Choice [1-2")
    again.submit("2")  # leave it: the handler says no
    again.wait_ready()
    again.submit("/trust")
    assert "Current session: untrusted" in again.wait_for("Project trust")
