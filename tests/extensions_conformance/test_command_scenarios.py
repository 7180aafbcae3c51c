"""The fixtures' ``kind: command`` scenarios: ``/command`` typed as a prompt.

Without a UI (``has_ui: false``) the command runs in process (``piko_session``, print mode),
where the UI the handler sees records its notifications (print mode shows them nowhere, which
is why the captures of these scenarios hold only the session header); with a UI it runs in
``pi --mode rpc``, whose UI requests the test reads.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest
from ext_conformance_kit import golden_of_type
from ext_conformance_kit import plain
from ext_conformance_kit import port
from ext_conformance_kit import run_json
from ext_conformance_kit import scenario
from ext_conformance_kit import send_prompt
from ext_conformance_kit import ui_requests


@pytest.mark.parametrize("scenario_id", ["scn-doom-overlay-001", "scn-todo-002"])
def test_command_without_a_ui_says_it_needs_one(scenario_id: str, piko_session: Any, llm_server: Any) -> None:
    item = scenario(scenario_id)
    assert item["input"]["ctx"] == {"has_ui": False}
    args = item["input"]["args"]
    line = f"/{item['command_name']}" + (f" {args}" if isinstance(args, str) and args else "")
    run = piko_session.run(line, extensions=[port(item["extension_id"])])
    assert run.ui.has_ui is False
    notes = [message for message, _level in run.ui.notifications]
    for piece in item["expect"]["ui_notify_contains"]:
        assert any(piece in note for note in notes), notes
    assert run.extension_errors == []
    assert llm_server.requests == []  # a command: nothing reached the model


def test_plan_command_switches_to_the_read_only_tools(port_rpc: Any, llm_server: Any) -> None:
    item = scenario("scn-plan-mode-001")
    pi = port_rpc("plan-mode")
    send_prompt(pi, f"/{item['command_name']}")
    pi.wait_for(lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "notify")
    # the status is set after the notice: wait for it too before reading both
    pi.wait_for(lambda r: r.get("method") == "setStatus" and bool(r.get("statusText")))
    notes = [r["message"] for r in ui_requests(pi, "notify")]
    captured = [r["message"] for r in golden_of_type(item, "extension_ui_request") if r["method"] == "notify"]
    assert notes == captured
    for piece in item["expect"]["ui_notify_contains"]:
        assert any(piece in note for note in notes)
    statuses = [plain(r.get("statusText")) for r in ui_requests(pi, "setStatus") if r.get("statusText")]
    assert statuses == [
        plain(r["statusText"]) for r in golden_of_type(item, "extension_ui_request") if r.get("statusText")
    ]
    llm_server.add_turns([{"blocks": [{"text": "ok"}]}])
    pi.prompt("what is here?")
    offered = [t["name"] for t in llm_server.requests[0]["body"]["tools"]]
    # ``questionnaire`` is the tool of pi's questionnaire example, not loaded here: the mode asks
    # for it, and piko offers the model only tools that exist
    assert offered == [name for name in item["expect"]["active_tools"] if name != "questionnaire"]


def test_sandbox_command_reports_a_disabled_sandbox(port_rpc: Any) -> None:
    """scn-sandbox-002: bubblewrap is kept off ``PATH``, so the sandbox cannot start, as on the
    machine of the capture (which lacked it too)."""
    item = scenario("scn-sandbox-002")
    path = os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if not shutil.which("bwrap", path=d)
    )
    pi = port_rpc("sandbox", env={"PATH": path})
    send_prompt(pi, f"/{item['command_name']}")
    pi.wait_for(
        lambda r: r.get("type") == "extension_ui_request" and r.get("message") == "Sandbox is disabled"
    )
    notes = [(r["message"], r.get("notifyType")) for r in ui_requests(pi, "notify")]
    for piece in item["expect"]["ui_notify_contains"]:
        assert any(piece in message for message, _ in notes)
    captured = [(r["message"], r.get("notifyType")) for r in golden_of_type(item, "extension_ui_request")]
    assert [kind for _, kind in notes] == [kind for _, kind in captured] == ["error", "info"]
    assert notes[0][0].startswith("Sandbox initialization failed: Sandbox dependencies are not available")


def test_minimal_command_answers_pong(piko_home: Any, llm_server: Any) -> None:
    item = scenario("scn-minimal-command-001")
    records = run_json(piko_home, llm_server, item["extension_id"], f"/{item['command_name']}")
    shown = [r["message"] for r in records if r["type"] == "message_end" and r["message"]["role"] == "custom"]
    for piece in item["expect"]["content_contains"]:
        assert any(piece in str(m["content"]) for m in shown), shown
    assert llm_server.requests == []
