"""The extension UI sub-protocol: ``ctx.ui`` calls become ``extension_ui_request`` lines."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support.dialogs_extension import PATH as DIALOGS

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
EXT = ("rpc_ui_ext.py", str(DIALOGS))


def ui_request(process: Any, method: str | None = None) -> dict[str, Any]:
    request = process.wait_for(
        lambda r: r.get("type") == "extension_ui_request" and (method is None or r.get("method") == method)
    )
    assert UUID.match(request["id"]), request
    return request


def notice(process: Any) -> str:
    return str(ui_request(process, "notify")["message"])


@pytest.mark.parametrize(
    ("command", "request_fields", "answer", "result"),
    [
        ("/pick", {"method": "select", "title": "Pick one", "options": ["alpha", "beta", "gamma"]}, {"value": "beta"}, "picked 'beta'"),
        ("/pick", {"method": "select"}, {"cancelled": True}, "picked None"),
        ("/sure", {"method": "confirm", "title": "Sure?", "message": "Really do it?"}, {"confirmed": True}, "confirmed True"),
        ("/sure", {"method": "confirm"}, {"confirmed": False}, "confirmed False"),
        ("/sure", {"method": "confirm"}, {"value": True}, "confirmed True"),  # the spec's older spelling
        ("/sure", {"method": "confirm"}, {"cancelled": True}, "confirmed False"),
        ("/ask", {"method": "input", "title": "Your name", "placeholder": "e.g. Ada"}, {"value": "Ada"}, "name 'Ada'"),
        ("/ask", {"method": "input"}, {"cancelled": True}, "name None"),
        ("/edit-it", {"method": "editor", "title": "Edit the text", "prefill": "prefilled"}, {"value": "new"}, "edited 'new'"),
        ("/edit-it", {"method": "editor"}, {}, "edited None"),
    ],
)  # fmt: skip
def test_dialog_waits_for_the_matching_response(
    rpc: Any, command: str, request_fields: dict[str, Any], answer: dict[str, Any], result: str
) -> None:
    process = rpc(extensions=EXT)
    process.send({"id": "p", "type": "prompt", "message": command})
    request = ui_request(process)
    assert {k: request[k] for k in request_fields} == request_fields
    assert "timeout" not in request
    # answers for other dialogs and stray answers change nothing; commands keep being answered
    process.send({"type": "extension_ui_response", "id": "not-a-pending-request", "value": "x"})
    assert process.request({"id": "s", "type": "get_state"})["success"] is True
    process.send({"type": "extension_ui_response", "id": request["id"], **answer})
    assert notice(process) == result
    response = process.wait_for(lambda r: r.get("id") == "p")
    assert response == {"id": "p", "type": "response", "command": "prompt", "success": True,
                        "data": {"disposition": "handled"}}  # fmt: skip
    assert process.close() == 0


def test_dialog_timeout_and_abort_give_the_cancel_value(rpc: Any) -> None:
    process = rpc(extensions=EXT)
    process.send({"id": "t", "type": "prompt", "message": "/quick 150"})
    request = ui_request(process, "select")
    assert request["timeout"] == 150
    assert notice(process) == "timed out with None"
    process.wait_for(lambda r: r.get("id") == "t")
    # the answer arriving after the timeout is ignored
    process.send({"type": "extension_ui_response", "id": request["id"], "value": "a"})
    process.send({"id": "a", "type": "prompt", "message": "/abortable"})
    ui_request(process, "confirm")
    assert notice(process) == "aborted with False"
    process.wait_for(lambda r: r.get("id") == "a")
    assert process.request({"id": "s", "type": "get_state"})["success"]
    assert process.close() == 0


def test_fire_and_forget_requests_and_rpc_limits(rpc: Any) -> None:
    process = rpc(extensions=EXT)
    process.request({"id": "f", "type": "prompt", "message": "/fire"})
    assert process.close() == 0
    requests = [
        {k: v for k, v in r.items() if k not in ("type", "id")}
        for r in process.events("extension_ui_request")
    ]
    assert requests == [
        {"method": "setStatus", "statusKey": "build", "statusText": "compiling"},
        {"method": "setStatus", "statusKey": "build"},
        {
            "method": "setWidget",
            "widgetKey": "todo",
            "widgetLines": ["first", "second"],
            "widgetPlacement": "belowEditor",
        },
        {"method": "setWidget", "widgetKey": "todo"},
        # no setWidget for a component factory, no setTitle without PI_RPC_EMIT_TITLE
        {"method": "set_editor_text", "text": "draft text"},
        {"method": "notify", "message": "custom=None editor='' has_ui=True", "notifyType": "info"},
    ]
    ids = [r["id"] for r in process.events("extension_ui_request")]
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("value", ["1", "true", " Yes ", "on"])
def test_set_title_only_when_asked_for(rpc: Any, value: str) -> None:
    process = rpc(extensions=EXT, env={"PI_RPC_EMIT_TITLE": value})
    process.request({"id": "f", "type": "prompt", "message": "/fire"})
    assert process.close() == 0
    titles = [r for r in process.events("extension_ui_request") if r["method"] == "setTitle"]
    assert [t["title"] for t in titles] == ["piko - test"]


def test_set_title_stays_quiet_for_a_false_value(rpc: Any) -> None:
    process = rpc(extensions=EXT, env={"PI_RPC_EMIT_TITLE": "0"})
    process.request({"id": "f", "type": "prompt", "message": "/fire"})
    assert process.close() == 0
    assert not [r for r in process.events("extension_ui_request") if r["method"] == "setTitle"]


def test_dialog_in_an_input_handler_holds_the_prompt_response(rpc: Any) -> None:
    process = rpc([{"blocks": [{"text": "Sent."}]}], extensions=EXT)
    process.send({"id": "g", "type": "prompt", "message": "guarded"})
    request = ui_request(process, "confirm")
    assert not [r for r in process.records if r.get("id") == "g"]  # accepted only once answered
    process.send({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
    assert process.wait_for(lambda r: r.get("id") == "g")["success"] is True
    end = process.wait_for(lambda r: r.get("type") == "agent_end")
    assert end["messages"][-1]["content"][0]["text"] == "Sent."
    # refused: the input handler handles it, nothing reaches the model
    process.send({"id": "h", "type": "prompt", "message": "guarded"})
    request = ui_request(process, "confirm")
    process.send({"type": "extension_ui_response", "id": request["id"], "confirmed": False})
    assert process.wait_for(lambda r: r.get("id") == "h")["success"] is True
    assert process.request({"id": "s", "type": "get_state"})["data"]["messageCount"] == 2
    assert len(process.server.requests) == 1
    assert process.close() == 0


def test_extension_errors_are_streamed(rpc: Any) -> None:
    process = rpc(extensions=EXT)
    process.send({"id": "b", "type": "prompt", "message": "/boom"})
    error = process.wait_for(lambda r: r.get("type") == "extension_error")
    assert error == {"type": "extension_error", "extensionPath": "command:boom", "event": "command",
                     "error": "the command blew up"}  # fmt: skip
    assert process.wait_for(lambda r: r.get("id") == "b")["success"] is True
    process.send({"id": "k", "type": "prompt", "message": "break things"})
    error = process.wait_for(lambda r: r.get("type") == "extension_error")
    assert error["event"] == "input" and error["error"] == "input handler failed"
    assert error["extensionPath"].endswith("rpc_ui_ext.py")
    assert process.close() == 0


def test_shutdown_from_an_extension_ends_the_process(rpc: Any) -> None:
    process = rpc(extensions=EXT)
    process.send({"id": "q", "type": "prompt", "message": "/bye"})
    assert process.wait_for(lambda r: r.get("id") == "q")["success"] is True
    assert process.proc.wait(timeout=30) == 0


def test_printing_goes_to_stderr_not_the_protocol(rpc: Any) -> None:
    process = rpc(extensions=EXT)
    process.request({"id": "c", "type": "prompt", "message": "/chatty"})
    assert process.close() == 0
    assert "this goes to stderr, never to the protocol" in process.stderr
    assert all(b"never to the protocol" not in line for line in process.raw_lines)


def test_pending_dialogs_end_when_input_ends(rpc: Any) -> None:
    process = rpc(extensions=EXT)
    process.send({"id": "p", "type": "prompt", "message": "/pick"})
    ui_request(process, "select")
    assert process.close(timeout=30) == 0
    assert notice(process) == "picked None"


def test_every_ui_method_of_the_reference_works_in_rpc_mode(rpc: Any, tmp_path: Any) -> None:
    """The reference's whole ``ctx.ui`` surface: dialogs round-trip (here they time out), the rest
    is sent or inert; nothing raises."""
    from pathlib import Path

    walk = Path(__file__).resolve().parents[1] / "support" / "ui_walk_extension.py"
    log = tmp_path / "walk.jsonl"
    process = rpc(args=["--mode", "rpc", "--provider", "mock", "--model", "mock-1", "-e", str(walk)],
                  env={"PIKO_TEST_LOG": str(log)})  # fmt: skip
    process.send({"id": "w", "type": "prompt", "message": "/uiwalk"})
    process.wait_for(lambda r: r.get("method") == "notify" and r.get("message") == "uiwalk done")
    assert process.close() == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [row for row in rows if "method" in row and not row["ok"]] == []
    assert rows[-1] == {"mode": "rpc", "has_ui": True}
    methods = [r["method"] for r in process.events("extension_ui_request")]
    assert methods[:4] == ["select", "confirm", "input", "editor"]
    assert "set_editor_text" in methods  # paste_to_editor falls back to set_editor_text


def test_permission_gate_answered_after_its_budget_still_decides(rpc: Any) -> None:
    """The gate's budget is 300 ms here (pi's 30 s, scaled down); the user answers after a second."""
    import time

    turns = [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo allowed > gate.txt"}}}]},
        {"blocks": [{"text": "done"}]},
    ]
    process = rpc(
        turns,
        settings={"extensionHandlers": {"toolCallTimeoutMs": 300}},
        extensions=("permission_gate_ext.py",),
    )
    process.send({"id": "p", "type": "prompt", "message": "run it"})
    request = ui_request(process, "confirm")
    time.sleep(1.0)  # the user thinks longer than the handler's budget
    process.send({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
    end = process.wait_for(lambda r: r.get("type") == "tool_execution_end")
    assert end["isError"] is False, end
    process.wait_for(lambda r: r.get("type") == "agent_end")
    assert process.close() == 0
    assert [e for e in process.events("extension_error")] == []


def test_rpc_steer_passes_input_and_its_batch_gets_before_agent_start(rpc: Any, tmp_path: Any) -> None:
    log = tmp_path / "queue.jsonl"
    turns = [
        {"blocks": [{"text": "a slow first answer with many words in it"}], "delay_s": 0.05},
        {"blocks": [{"text": "second"}]},
    ]
    process = rpc(turns, extensions=("queue_policy_ext.py",), env={"PIKO_TEST_LOG": str(log)})
    process.send({"id": "p", "type": "prompt", "message": "first"})
    process.wait_for(lambda r: r.get("type") == "message_update")
    assert process.request({"id": "s", "type": "steer", "message": "steer me"})["success"] is True
    process.wait_for(lambda r: r.get("type") == "agent_end")
    assert process.close() == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert {"input": "steer me", "source": "rpc"} in rows
    assert {"before_agent_start": "steered by input"} in rows
    second = process.server.requests[1]["body"]  # type: ignore[attr-defined]
    assert "steered by input" in json.dumps(second["messages"])
    assert "QUEUED POLICY" in json.dumps(second["messages"][0])


def test_dialogs_fire_ui_prompt_start_and_end_around_the_wait(rpc: Any) -> None:
    process = rpc(extensions=("ui_prompt_ext.py",))
    process.send({"id": "a", "type": "prompt", "message": "/ask"})
    request = ui_request(process, "confirm")
    process.send({"type": "extension_ui_response", "id": request["id"], "confirmed": True})
    process.wait_for(lambda r: r.get("id") == "a")
    process.send({"id": "r", "type": "prompt", "message": "/report"})
    assert json.loads(notice(process)) == [
        {"start": "confirm", "title": "Sure?", "reason": "ui_prompt"},
        {"end": "confirm", "cancelled": False},
    ]
    process.wait_for(lambda r: r.get("id") == "r")
    process.send({"id": "b", "type": "prompt", "message": "/both"})
    first, second = ui_request(process, "input"), ui_request(process, "select")
    process.send({"type": "extension_ui_response", "id": first["id"], "value": "typed"})
    process.send({"type": "extension_ui_response", "id": second["id"], "cancelled": True})
    process.wait_for(lambda r: r.get("id") == "b")
    process.send({"id": "r2", "type": "prompt", "message": "/report"})
    assert json.loads(notice(process)) == [  # one span, from the first opening to the last closing
        {"start": "input", "title": "First", "reason": "ui_prompt"},
        {"end": "input", "cancelled": True},
    ]
    assert process.close() == 0
