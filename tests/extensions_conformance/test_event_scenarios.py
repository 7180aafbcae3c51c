"""The fixtures' ``kind: event`` scenarios, run where the event really fires.

A scenario without a UI (``has_ui: false``) runs ``pi --mode json``; one with a UI runs
``pi --mode rpc`` and answers its dialogs as the scenario's ``ui_responses`` say (RPC is the
mode whose UI a test can drive; the captures with a UI were made in it too).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest
from ext_conformance_kit import answer_dialog
from ext_conformance_kit import assert_like_capture
from ext_conformance_kit import golden
from ext_conformance_kit import golden_of_type
from ext_conformance_kit import only
from ext_conformance_kit import plain
from ext_conformance_kit import port
from ext_conformance_kit import result_text
from ext_conformance_kit import run_json
from ext_conformance_kit import scenario
from ext_conformance_kit import send_prompt
from ext_conformance_kit import tool_turns
from ext_conformance_kit import ui_requests


def run_tool_call_event(home: Any, server: Any, item: dict[str, Any], *args: str) -> list[dict[str, Any]]:
    """A ``tool_call`` scenario in JSON mode: the model makes the call the scenario's event describes."""
    event = item["input"]["event"]
    server.add_turns(tool_turns(event["toolName"], event["input"]))
    return run_json(home, server, item["extension_id"], f"Run scenario {item['id']}.", *args)


def check_block(item: dict[str, Any], end: dict[str, Any]) -> None:
    """A blocked call: an error result whose text is the block's reason."""
    assert item["expect"]["block"] is True
    assert end["isError"] is True, end
    for piece in item["expect"]["reason_contains"]:
        assert piece in result_text(end["result"]), end


def test_permission_gate_blocks_without_a_ui(piko_home: Any, llm_server: Any, tmp_path: Any) -> None:
    item = scenario("scn-permission-gate-001")
    records = run_tool_call_event(piko_home, llm_server, item)
    check_block(item, only(records, "tool_execution_end"))
    assert_like_capture(records, item)


def test_plan_mode_blocks_a_command_off_the_allowlist(piko_home: Any, llm_server: Any) -> None:
    """scn-plan-mode-002: the scenario's state ``plan_mode_enabled`` is the port's ``--plan`` flag."""
    item = scenario("scn-plan-mode-002")
    assert item["setup"]["state"] == {"plan_mode_enabled": True}
    records = run_tool_call_event(piko_home, llm_server, item, "--plan")
    check_block(item, only(records, "tool_execution_end"))
    assert_like_capture(records, item)
    custom = [
        r["message"] for r in records if r["type"] == "message_end" and r["message"]["role"] == "custom"
    ]
    assert [m["customType"] for m in custom] == ["plan-mode-context"] and custom[0]["display"] is False


def test_inline_bash_expands_commands_in_the_prompt(piko_home: Any, llm_server: Any) -> None:
    """scn-inline-bash-001. The capture answered ``pwd`` from a mock with ``/repo``; here ``bash``
    really runs, in a folder named ``repo``."""
    item = scenario("scn-inline-bash-001")
    piko_home.project = piko_home.project / "repo"
    piko_home.project.mkdir()
    llm_server.add_turns([{"blocks": [{"text": "ok"}]}])
    records = run_json(piko_home, llm_server, item["extension_id"], item["input"]["event"]["text"])
    assert item["expect"]["action"] == "transform"
    user = next(
        r["message"] for r in records if r["type"] == "message_end" and r["message"]["role"] == "user"
    )
    text = user["content"][0]["text"]
    assert text == f"What's in {piko_home.project.resolve()}?"
    for piece in item["expect"]["text_contains"]:
        assert piece in text
    assert golden_of_type(item, "message_end")[0]["message"]["content"][0]["text"] == "What's in /repo?"
    assert "!{" not in str(llm_server.requests[0]["body"])  # the model saw the output, not the command
    assert_like_capture(records, item)


def test_permission_gate_asks_and_blocks_on_no(port_rpc: Any, llm_server: Any) -> None:
    item = scenario("scn-permission-gate-002")
    event = item["input"]["event"]
    llm_server.add_turns(tool_turns(event["toolName"], event["input"]))
    pi = port_rpc("permission-gate")
    send_prompt(pi, "Run scenario.")
    request = answer_dialog(pi, "select", {"value": item["input"]["ctx"]["ui_responses"]["select"]})
    end = pi.wait_for(lambda r: r.get("type") == "tool_execution_end")
    pi.wait_for(lambda r: r.get("type") == "agent_end")
    captured = golden_of_type(item, "extension_ui_request")[0]
    assert (request["title"], request["options"]) == (captured["title"], captured["options"])
    check_block(item, end)
    assert end["result"] == golden_of_type(item, "tool_execution_end")[0]["result"]


def test_protected_paths_blocks_and_warns(port_rpc: Any, llm_server: Any, piko_home: Any) -> None:
    item = scenario("scn-protected-paths-001")
    event = item["input"]["event"]
    llm_server.add_turns(tool_turns(event["toolName"], event["input"]))
    pi = port_rpc("protected-paths")
    send_prompt(pi, "Run scenario.")
    end = pi.wait_for(lambda r: r.get("type") == "tool_execution_end")
    pi.wait_for(lambda r: r.get("type") == "agent_end")
    check_block(item, end)
    notes = [(r["message"], r.get("notifyType")) for r in ui_requests(pi, "notify")]
    captured = [(r["message"], r.get("notifyType")) for r in golden_of_type(item, "extension_ui_request")]
    assert notes == captured
    for piece in item["expect"]["ui_notify_contains"]:
        assert any(piece in message for message, _ in notes)
    assert end["result"] == golden_of_type(item, "tool_execution_end")[0]["result"]
    assert not (piko_home.project / ".env").exists()


def test_status_line_follows_the_turn(port_rpc: Any, llm_server: Any) -> None:
    item = scenario("scn-status-line-001")
    llm_server.add_turns([{"blocks": [{"text": "ok"}]}])
    pi = port_rpc("status-line")
    send_prompt(pi, "Run scenario.")
    pi.wait_for(lambda r: r.get("type") == "agent_end")
    key = item["expect"]["ui_status_key"]
    statuses = [plain(r.get("statusText")) for r in ui_requests(pi, "setStatus") if r["statusKey"] == key]
    assert statuses == [plain(r["statusText"]) for r in golden_of_type(item, "extension_ui_request")]
    expected = item["expect"]["ui_status_contains_sequence"]
    assert len(statuses) == len(expected)
    for status, piece in zip(statuses, expected, strict=True):
        assert piece in status


def test_sandbox_warns_when_disabled_by_flag(port_rpc: Any) -> None:
    item = scenario("scn-sandbox-003")
    assert item["setup"]["flags"] == {"no-sandbox": True}
    pi = port_rpc("sandbox", "--no-sandbox")
    pi.wait_for(lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "notify")
    notes = [r["message"] for r in ui_requests(pi, "notify")]
    for piece in item["expect"]["ui_notify_contains"]:
        assert any(piece in note for note in notes), notes


def git(cwd: Any, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
}  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_checkpoint_restores_the_code_on_fork(port_rpc: Any, llm_server: Any, piko_home: Any) -> None:
    """scn-git-checkpoint-001 with real git where the scenario mocked it: the snapshot a run took
    (``git stash create``) is applied again (``git stash apply``) when the user forks from that
    run's message and picks the scenario's answer."""
    item = scenario("scn-git-checkpoint-001")
    work = piko_home.project
    dummy = work / "dummy.txt"
    git(work, "init", "-q")
    dummy.write_text("hello\n")
    git(work, "add", "dummy.txt")
    git(work, "commit", "-q", "-m", "start")
    dummy.write_text("edited before the run\n")
    llm_server.add_turns(tool_turns("read", {"path": "dummy.txt"}))
    pi = port_rpc("git-checkpoint", env=GIT_IDENTITY)
    send_prompt(pi, "Checkpoint setup turn.")
    pi.wait_for(lambda r: r.get("type") == "agent_end")
    git(work, "checkout", "--", "dummy.txt")  # the code moves on
    assert dummy.read_text() == "hello\n"
    forks = pi.request({"id": "cmd-2", "type": "get_fork_messages"})["data"]["messages"]
    entry = next(m["entryId"] for m in forks if m["text"] == "Checkpoint setup turn.")
    pi.send({"id": "cmd-3", "type": "fork", "entryId": entry})
    answer_dialog(pi, "select", {"value": item["steps"][-1]["ctx"]["ui_responses"]["select"]})
    done = pi.wait_for(lambda r: r.get("type") == "response" and r.get("id") == "cmd-3")
    assert done["success"] and done["data"]["cancelled"] is False, done
    notes = [r["message"] for r in ui_requests(pi, "notify")]
    for piece in item["expect"]["ui_notify_contains"]:
        assert piece in notes
    assert dummy.read_text() == "edited before the run\n"
    assert [call[1][:2] for call in item["expect"]["exec_called"]] == [
        ["stash", "create"],
        ["stash", "apply"],
    ]


def seed_session(path: Any, cwd: Any, branch: list[dict[str, Any]]) -> None:
    """A pi session file (version 3) whose branch ends with the scenario's entries: a user
    message and the assistant's tool call come first, as a real session has them."""
    import json

    stamp = "2026-02-03T12:00:00.000Z"
    result = branch[0]["message"]
    call = {"type": "toolCall", "id": "call_seed", "name": result["toolName"], "arguments": {"action": "add"}}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "seed"}], "timestamp": 0},
        {
            "role": "assistant", "content": [call], "api": "openai-responses", "provider": "openai",
            "model": "gpt-4o-mini", "stopReason": "toolUse", "timestamp": 0,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        },
        {"content": [{"type": "text", "text": "Added todo #1: Buy milk"}], "toolCallId": "call_seed",
         "isError": False, "timestamp": 0, **result},
    ]  # fmt: skip
    lines = [{"type": "session", "version": 3, "id": "seed-session", "timestamp": stamp, "cwd": str(cwd)}]
    parent = None
    for number, message in enumerate(messages, 1):
        entry = {
            "type": "message",
            "id": f"seed{number:04d}",
            "parentId": parent,
            "timestamp": stamp,
            "message": message,
        }
        lines.append(entry)
        parent = entry["id"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_todo_rebuilds_its_list_from_the_branch(piko_home: Any, llm_server: Any) -> None:
    """scn-todo-003: a resumed session whose branch holds a ``todo`` result; at ``session_start``
    the port rebuilds the list from it, and ``list`` shows the item."""
    item = scenario("scn-todo-003")
    seed = piko_home.root / "seed.jsonl"
    seed_session(seed, piko_home.project, item["setup"]["session_branch"])
    step = item["steps"][-1]
    llm_server.add_turns(tool_turns(step["tool_name"], step["arguments"]))
    records = run_json(
        piko_home, llm_server, item["extension_id"], f"Run scenario {item['id']}.", "--session", str(seed)
    )
    end = only(records, "tool_execution_end")
    for piece in item["expect"]["final_content_contains"]:
        assert piece in result_text(end["result"])
    assert records[0]["id"] == golden(item)[0]["id"] == "seed-session"
    assert_like_capture(records, item)


def test_minimal_event_logs_at_agent_start(piko_home: Any, llm_server: Any) -> None:
    """scn-minimal-event-001: the handler's log line (``pi.logger``) reaches stderr."""
    item = scenario("scn-minimal-event-001")
    assert item["event_name"] == "agent_start"
    llm_server.add_turns([{"blocks": [{"text": "ok"}]}])
    piko_home.use_llm_server(llm_server)
    done = piko_home.pi(
        "-p", "-e", str(port(item["extension_id"])), "--provider", "mock", "--model", "mock-1", "hi"
    )
    assert done.returncode == 0, done.stderr
    for piece in item["expect"]["log_contains"]:
        assert done.stderr.count(piece) == 1, done.stderr
    assert done.stdout == "ok\n"


def test_status_line_themes_its_text_without_a_terminal(piko_session: Any, llm_server: Any) -> None:
    """The port styles its status with ``ctx.ui.theme`` as pi's example does; pi has a theme in
    every mode (checked with pi 0.73.1 in print, JSON and RPC mode), so print mode must too."""
    item = scenario("scn-status-line-001")
    run = piko_session.run(
        "Run scenario.", turns=[{"blocks": [{"text": "ok"}]}], extensions=[port("status-line")]
    )
    assert run.extension_errors == []
    assert plain(run.ui.statuses[item["expect"]["ui_status_key"]]) == "✓ Turn 1 complete"
