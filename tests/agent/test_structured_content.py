"""pi 1.6's ``structuredContent`` of tool results: bash gives its output and exit code as data,
extension tools may return it, ``tool_result`` handlers read and patch it (replacing ``content``
alone drops it), it travels in ``tool_execution_end`` and stays out of the session, as in pi
1.6; real ``pi`` runs in JSON mode against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import json_lines

MOCK = ("--provider", "mock", "--model", "mock-1")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": name, "arguments": arguments}}]}


def _ends(stdout: str) -> list[dict[str, Any]]:
    return [r for r in json_lines(stdout) if r["type"] == "tool_execution_end"]


def _session_results(env: Any) -> list[dict[str, Any]]:
    return [e["message"] for e in env.session_lines() if e.get("message", {}).get("role") == "toolResult"]


def test_bash_results_carry_output_and_exit_code_as_data(pi_env: Any) -> None:
    env = pi_env([_call("bash", command="echo hi"), _call("bash", command="echo oops; exit 3"),
                  {"blocks": [{"text": "done"}]}])  # fmt: skip
    done = env.run("--mode", "json", *MOCK, "go")
    assert done.returncode == 0, done.stderr
    ok, failed = _ends(done.stdout)
    assert list(ok["result"]) == ["content", "structuredContent"]
    assert ok["result"]["structuredContent"] == {
        "output": "hi\n", "truncated": False, "exit_code": 0, "wall_time_seconds": 0,
    } | {"wall_time_seconds": ok["result"]["structuredContent"]["wall_time_seconds"]}  # fmt: skip
    assert list(ok["result"]["structuredContent"]) == [
        "output",
        "truncated",
        "exit_code",
        "wall_time_seconds",
    ]
    assert failed["isError"] is True
    assert failed["result"]["structuredContent"]["exit_code"] == 3
    assert failed["result"]["structuredContent"]["output"] == "oops\n"
    assert failed["result"]["content"][0]["text"].endswith("Command exited with code 3")
    assert all("structuredContent" not in m for m in _session_results(env))  # as pi 1.6 keeps them


def test_a_long_output_is_cut_in_the_middle_past_a_mebibyte(pi_env: Any) -> None:
    env = pi_env(
        [_call("bash", command="head -c 1500000 /dev/zero | tr '\\\\0' a"), {"blocks": [{"text": "ok"}]}]
    )
    done = env.run("--mode", "json", *MOCK, "go")
    assert done.returncode == 0, done.stderr
    (end,) = _ends(done.stdout)
    data = end["result"]["structuredContent"]
    assert data["truncated"] is True and Path(data["full_output_path"]).stat().st_size == 1_500_000
    head, _, tail = data["output"].partition("\n\n[... 451424 bytes omitted ...]\n\n")
    assert (len(head), len(tail)) == (524288, 524288)


EXTENSION = """
import json, os

def activate(pi):
    def log(row):
        with open(os.environ["PIKO_TEST_LOG"], "a") as f:
            f.write(json.dumps(row) + "\\n")

    async def shaped(tool_call_id, params, signal, on_update, ctx):
        return {"content": [{"type": "text", "text": "42"}], "structuredContent": {"answer": 42}}

    pi.register_tool({"name": "shaped", "label": "Shaped", "description": "answers",
                      "parameters": {"type": "object", "properties": {}}, "execute": shaped})

    def first(event, ctx):
        log({"tool": event.tool_name, "seen": event.structured_content})
        if event.tool_name == "bash":
            return {"content": [{"type": "text", "text": "rewritten"}]}  # content alone: drops it
        return {"structuredContent": {"answer": 43}}

    def second(event, ctx):
        log({"tool": event.tool_name, "after": event.structured_content})

    pi.on("tool_result", first)
    pi.on("tool_result", second)
"""


def test_tool_result_handlers_read_and_patch_structured_content(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env([_call("shaped"), _call("bash", command="echo hi"), {"blocks": [{"text": "ok"}]}])
    ext = tmp_path / "shape_ext.py"
    ext.write_text(EXTENSION)
    log = tmp_path / "log.jsonl"
    done = env.run("--mode", "json", "-e", str(ext), *MOCK, "go", env={"PIKO_TEST_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows[0] == {"tool": "shaped", "seen": {"answer": 42}}
    assert rows[1] == {"tool": "shaped", "after": {"answer": 43}}  # the next handler sees the patch
    assert rows[2]["seen"]["output"] == "hi\n" and rows[3] == {"tool": "bash", "after": None}
    shaped, bash = _ends(done.stdout)
    assert shaped["result"]["structuredContent"] == {"answer": 43}
    assert bash["result"] == {"content": [{"type": "text", "text": "rewritten"}]}
