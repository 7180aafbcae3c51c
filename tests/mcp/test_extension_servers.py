"""``pi.register_mcp_server``: an extension's server connects with the ``mcp.json`` ones (a real
extension file, a real ``pi`` and the demo stdio server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_support import answer
from mcp_support import call
from mcp_support import stdio_entry
from mcp_support import tool_messages
from mcp_support import tool_names

REGISTERING = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]
ENTRY = %r

def activate(pi):
    pi.register_mcp_server("demo", {**ENTRY, "exposure": "direct"})
    pi.register_mcp_server("demo", ENTRY)  # again: replaces this extension's entry
    problems = []
    for name, config in [("bad name!", ENTRY), ("empty", {"args": []}), ("wrong", "not a dict")]:
        try:
            pi.register_mcp_server(name, config)
        except ValueError as exc:
            problems.append(str(exc))
    pi.register_mcp_server("spare", ENTRY)
    pi.unregister_mcp_server("spare")
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"problems": problems, "servers": [s["name"] for s in pi.get_mcp_servers()]}) + "\\n")
"""


def _extension(env: Any, tmp_path: Path, entry: dict[str, Any]) -> tuple[Path, Path]:
    ext = tmp_path / "mcp_ext.py"
    ext.write_text(REGISTERING % ({**entry, "exposure": "direct"},))
    return ext, tmp_path / "log.jsonl"


def test_an_extension_registered_server_gives_the_model_its_tools(mcp_env: Any, tmp_path: Path) -> None:
    env = mcp_env([call("mcp__demo__echo", {"text": "from ext"}), answer()])
    ext, log = _extension(env, tmp_path, stdio_entry())
    done = env.prompt("-e", str(ext), "call echo", env={"PIKO_TEST_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert row["servers"] == ["demo"]
    assert len(row["problems"]) == 3 and "invalid server name" in row["problems"][0]
    assert '"command" or a "url"' in row["problems"][1] and "must be a dict" in row["problems"][2]
    first, second = env.bodies()
    assert "mcp__demo__echo" in tool_names(first)
    assert not any(name.startswith("mcp__spare__") for name in tool_names(first))
    assert tool_messages(second)[0]["content"] == "echo: from ext"


def test_a_file_server_of_the_same_name_wins_over_the_extension(mcp_env: Any, tmp_path: Path) -> None:
    env = mcp_env([answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct", enabled=False)})
    ext, log = _extension(env, tmp_path, stdio_entry())
    done = env.prompt("-e", str(ext), "hi", env={"PIKO_TEST_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    assert not any(name.startswith("mcp__demo__") for name in tool_names(env.bodies()[0]))


LISTENER = """
import json, os

def activate(pi):
    def on_note(event, ctx):
        with open(os.environ["PIKO_TEST_LOG"], "a") as fh:
            fh.write(json.dumps({"server": event.server, "method": event.method, "params": event.params}) + "\\n")
    pi.on("mcp_notification", on_note)
"""


def test_mcp_notifications_reach_pi_on_handlers(mcp_env: Any, tmp_path: Path) -> None:
    ext = tmp_path / "listen.py"
    ext.write_text(LISTENER)
    log = tmp_path / "notes.jsonl"
    env = mcp_env([call("mcp__demo__shout", {"text": "hey"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("-e", str(ext), "go", env={"PIKO_TEST_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    assert "no such event" not in done.stderr and "unknown event" not in done.stderr.lower()
    notes = [json.loads(line) for line in log.read_text().splitlines()]
    logged = [n for n in notes if n["method"] == "notifications/message"]
    assert logged and logged[0]["server"] == "demo" and logged[0]["params"]["data"] == "shouting hey"
