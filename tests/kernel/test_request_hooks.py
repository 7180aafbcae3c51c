"""``piko_provider_request_headers`` and ``piko_shell_env``: what plugins add to every provider
request and to the environment of the shell commands the agent runs."""

from __future__ import annotations

from pathlib import Path

from support.llm_server import LLMServer
from support.pi_runs import run_in_pi_dirs

PLUGIN = """
from piko import hookimpl

@hookimpl
def piko_provider_request_headers(model, session_id):
    return {"X-Team": "platform", "X-Model": model.id}

@hookimpl
def piko_shell_env(cwd, tool_call_id):
    return {"ACME_CALL": tool_call_id or "user"}
"""


def test_plugins_add_request_headers_and_shell_variables(tmp_path: Path) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo $ACME_CALL > call.txt"}}}]},
        {"blocks": [{"text": "done"}]},
    ]
    plugin = tmp_path / "acme_headers.py"
    plugin.write_text(PLUGIN)
    with LLMServer(turns) as server:
        done, work = run_in_pi_dirs(tmp_path / "run", server, "-e", str(plugin), "-p", "go")
        headers = [{k.lower(): v for k, v in r["headers"].items()} for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert all(h.get("x-team") == "platform" and h.get("x-model") == "mock-1" for h in headers)
    assert (work / "call.txt").read_text().strip().startswith("call_")


WORKSPACE = """
import json, os
from piko import hookimpl

@hookimpl
async def piko_workspace_read_text(request, ctx):
    return "held by the editor\\n" if request.path.endswith("notes.txt") else None

@hookimpl
async def piko_workspace_write_text(request, ctx):
    with open(os.path.join(ctx.cwd, "writes.jsonl"), "a") as out:
        out.write(json.dumps([os.path.basename(request.path), request.content]) + "\\n")
    return True
"""


def test_piko_workspace_read_text_and_write_text_serve_the_file_tools(tmp_path: Path) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]},
        {"blocks": [{"tool_call": {"name": "write", "arguments": {"path": "out.txt", "content": "x"}}}]},
        {"blocks": [{"text": "done"}]},
    ]
    plugin = tmp_path / "editor_bridge.py"
    plugin.write_text(WORKSPACE)
    with LLMServer(turns) as server:
        done, work = run_in_pi_dirs(tmp_path / "run", server, "-e", str(plugin), "--mode", "json", "go")
    assert done.returncode == 0, done.stderr
    assert "held by the editor" in done.stdout
    assert (work / "writes.jsonl").read_text() == '["out.txt", "x"]\n'
    assert not (work / "out.txt").exists()
