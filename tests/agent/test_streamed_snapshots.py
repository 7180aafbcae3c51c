"""What a ``message_update`` carries: the change alone on the wire, the message so far in process.

On the wire (``--mode json`` and RPC) piko writes ``message_update`` as pi 1.6 does: the usage so
far and the change (``assistantMessageEvent`` without the ``partial`` snapshot, and no
cumulative ``message``), so a stream's output grows linearly with the message. pi 0.73.1 wrote
the whole message twice into every record. A client rebuilds the text from the deltas and
replaces it with ``text_end``'s content and ``message_end``'s message.

In process, an extension's ``message_update`` handler sees ``event.message`` as it stands at
that delta, even when the whole SSE body reaches piko in one network read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import json_lines

TEXT = "one two three four five six seven eight nine ten"
MODELS = [("--provider", "mock", "--model", "mock-1"), ("--model", "mock-anthropic/mock-claude")]

WATCHER = """
import json, os

def activate(pi):
    seen = []

    def on_update(event, ctx):
        change = event.assistant_message_event
        if change.type == "text_delta":
            seen.append({"delta": change.delta, "shown": event.message.content[0].text})

    def on_end(event, ctx):
        with open(os.environ["PIKO_TEST_LOG"], "w") as fh:
            json.dump(seen, fh)

    pi.on("message_update", on_update)
    pi.on("agent_end", on_end)
"""


@pytest.mark.parametrize("model", MODELS)
def test_json_records_carry_the_change_alone_and_rebuild_the_text(
    pi_env: Any, model: tuple[str, ...]
) -> None:
    env = pi_env([{"blocks": [{"text": TEXT}], "coalesce": True}])
    done = env.run("--mode", "json", "--thinking", "off", *model, "go")
    assert done.returncode == 0, done.stderr
    records = json_lines(done.stdout)
    updates = [r for r in records if r.get("type") == "message_update"]
    assert updates and all(set(r) == {"type", "usage", "assistantMessageEvent"} for r in updates)
    assert all("partial" not in r["assistantMessageEvent"] for r in updates)
    deltas = [
        r["assistantMessageEvent"] for r in updates if r["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert len(deltas) > 2  # the server cut the text into several deltas, sent in one write
    rebuilt = "".join(d["delta"] for d in deltas)
    end = next(
        r["assistantMessageEvent"] for r in updates if r["assistantMessageEvent"]["type"] == "text_end"
    )
    assert rebuilt == end["content"] == TEXT
    final = [r for r in records if r.get("type") == "message_end"][-1]["message"]
    assert final["content"] == [{"type": "text", "text": TEXT}]
    # the usage reported so far (anthropic reports its final counts after the last block)
    assert all(set(r["usage"]) >= {"input", "output", "totalTokens", "cost"} for r in updates)


def test_a_starting_tool_call_is_named_on_the_wire(pi_env: Any) -> None:
    turn = {"blocks": [{"tool_call": {"name": "ls", "arguments": {"path": "."}}}]}
    env = pi_env([turn, {"blocks": [{"text": "ok"}]}])
    done = env.run("--mode", "json", *MODELS[0], "go")
    assert done.returncode == 0, done.stderr
    starts = [
        r["assistantMessageEvent"]
        for r in json_lines(done.stdout)
        if r.get("type") == "message_update" and r["assistantMessageEvent"]["type"] == "toolcall_start"
    ]
    assert len(starts) == 1
    assert starts[0]["toolName"] == "ls" and starts[0]["id"].startswith("call_")


@pytest.mark.parametrize("model", MODELS)
def test_an_extension_sees_the_message_as_of_each_delta(
    pi_env: Any, tmp_path: Path, model: tuple[str, ...]
) -> None:
    ext = tmp_path / "watcher.py"
    ext.write_text(WATCHER)
    log = tmp_path / "seen.json"
    env = pi_env([{"blocks": [{"text": TEXT}], "coalesce": True}])
    done = env.run("-p", "-e", str(ext), "--thinking", "off", *model, "go", env={"PIKO_TEST_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    seen = json.loads(log.read_text())
    assert len(seen) > 2
    so_far = ""
    for step in seen:
        so_far += step["delta"]
        assert step["shown"] == so_far
    assert so_far == TEXT
