"""Work an extension starts from a plain-function handler (which runs on a thread of its own)
is waited for like work started on the event loop: print mode answers it before it exits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FOLLOW_UP = """
sent = []

def activate(pi):
    def on_end(event, ctx):  # a plain function: piko runs it on a thread
        if not sent:
            sent.append(True)
            pi.send_user_message("and one more thing")
    pi.on("agent_end", on_end)
"""


def test_a_message_sent_from_a_threaded_handler_is_answered_before_print_mode_exits(
    pi_env: Any, tmp_path: Path
) -> None:
    ext = tmp_path / "follow_up.py"
    ext.write_text(FOLLOW_UP)
    env = pi_env([{"blocks": [{"text": "first answer"}]}, {"blocks": [{"text": "second answer"}]}])
    done = env.run("-p", "-e", str(ext), "--provider", "mock", "--model", "mock-1", "hello")
    assert done.returncode == 0, done.stderr
    assert len(env.server.requests) == 2
    last_user = [m for m in env.server.requests[1]["body"]["messages"] if m["role"] == "user"][-1]
    assert "and one more thing" in str(last_user["content"])
    assert "second answer" in done.stdout


AWAITED_FOLLOW_UP = """
sent = []

def activate(pi):
    async def on_end(event, ctx):  # awaited here, so the message is queued while the run ends
        if not sent:
            sent.append(True)
            await pi.send_user_message("and one more thing")
    pi.on("agent_end", on_end)
"""


def test_a_message_an_agent_end_handler_queues_is_answered_in_a_fresh_run(
    pi_env: Any, tmp_path: Path
) -> None:
    """The loop has taken its last queued messages when ``agent_end`` fires: what a handler queues
    then gets a run of its own before the prompt settles, as in pi 1.6."""
    ext = tmp_path / "awaited_follow_up.py"
    ext.write_text(AWAITED_FOLLOW_UP)
    env = pi_env([{"blocks": [{"text": "first answer"}]}, {"blocks": [{"text": "second answer"}]}])
    done = env.run("-p", "-e", str(ext), "--provider", "mock", "--model", "mock-1", "hello")
    assert done.returncode == 0, done.stderr
    assert len(env.server.requests) == 2
    last_user = [m for m in env.server.requests[1]["body"]["messages"] if m["role"] == "user"][-1]
    assert "and one more thing" in str(last_user["content"])
    assert "second answer" in done.stdout
