"""Messages an extension sends as a run ends are answered before print mode exits: work started
from a plain-function handler (which runs on a thread of its own) is waited for like work
started on the event loop, and what an ``agent_end`` handler queues gets a fresh run (pi 1.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

FROM_A_THREAD = """
sent = []

def activate(pi):
    def on_end(event, ctx):  # a plain function: piko runs it on a thread
        if not sent:
            sent.append(True)
            pi.send_user_message("and one more thing")
    pi.on("agent_end", on_end)
"""

AWAITED = """
sent = []

def activate(pi):
    async def on_end(event, ctx):  # awaited here, so the message is queued while the run ends
        if not sent:
            sent.append(True)
            await pi.send_user_message("and one more thing")
    pi.on("agent_end", on_end)
"""


@pytest.mark.parametrize("source", [FROM_A_THREAD, AWAITED], ids=["threaded-handler", "awaited-send"])
def test_a_message_sent_by_an_agent_end_handler_is_answered_before_print_mode_exits(
    pi_env: Any, tmp_path: Path, source: str
) -> None:
    ext = tmp_path / "follow_up.py"
    ext.write_text(source)
    env = pi_env([{"blocks": [{"text": "first answer"}]}, {"blocks": [{"text": "second answer"}]}])
    done = env.run("-p", "-e", str(ext), "--provider", "mock", "--model", "mock-1", "hello")
    assert done.returncode == 0, done.stderr
    assert len(env.server.requests) == 2
    last_user = [m for m in env.server.requests[1]["body"]["messages"] if m["role"] == "user"][-1]
    assert "and one more thing" in str(last_user["content"])
    assert "second answer" in done.stdout
