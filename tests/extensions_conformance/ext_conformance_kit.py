"""The extension conformance fixtures (``tests/fixtures/ext_conformance``) and running their ports.

The data files are pi_agent_rust's, unchanged; ``extensions/`` holds our Python ports of the
extensions they describe. A scenario that needs a model runs the real ``pi`` (``--mode json``
or ``--mode rpc``) against the scripted server; the others boot piko in process.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ext_conformance"
EXTENSIONS = FIXTURES / "extensions"

# fixture extension id -> our Python port (a file or a package folder below ``extensions/``)
PORTS: dict[str, str] = {
    "antigravity-image-gen": "antigravity_image_gen.py",
    "custom-provider-anthropic": "custom_provider_anthropic.py",
    "custom-provider-qwen-cli": "custom_provider_qwen_cli.py",
    "doom-overlay": "doom_overlay.py",
    "dynamic-resources": "dynamic_resources",
    "git-checkpoint": "git_checkpoint.py",
    "hello": "hello.py",
    "inline-bash": "inline_bash.py",
    "minimal_command": "minimal_command.py",
    "minimal_configuration": "minimal_configuration.py",
    "minimal_event": "minimal_event.py",
    "minimal_mcp": "minimal_mcp.py",
    "minimal_multi": "minimal_multi.py",
    "minimal_provider": "minimal_provider.py",
    "minimal_resources": "minimal_resources",
    "minimal_template": "minimal_template",
    "minimal_tool": "minimal_tool.py",
    "minimal_ui_component": "minimal_ui_component.py",
    "permission-gate": "permission_gate.py",
    "plan-mode": "plan_mode.py",
    "protected-paths": "protected_paths.py",
    "sandbox": "sandbox.py",
    "status-line": "status_line.py",
    "subagent": "subagent.py",
    "todo": "todo.py",
    "with-deps": "with_deps",
}

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def load(relative: str) -> Any:
    """A data file of the fixtures, parsed."""
    return json.loads((FIXTURES / relative).read_text(encoding="utf-8"))


@cache
def scenario_files() -> dict[str, dict[str, Any]]:
    """Every ``fixtures/*.json`` with scenarios, by the id of the extension it describes."""
    out = {}
    for path in sorted((FIXTURES / "fixtures").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "scenarios" in data:
            out[data["extension"]["id"]] = data
    return out


def scenario(scenario_id: str) -> dict[str, Any]:
    """One scenario by its id (``scn-hello-001``), with ``extension_id`` added."""
    for ext_id, data in scenario_files().items():
        for item in data["scenarios"]:
            if item["id"] == scenario_id:
                return {**item, "extension_id": ext_id}
    raise KeyError(scenario_id)


def port(ext_id: str) -> Path:
    """Our Python port of a fixture's extension."""
    return EXTENSIONS / PORTS[ext_id]


def golden(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON lines pi printed in the capture of a scenario (``stdout_normalized_jsonl``)."""
    return [json.loads(line) for line in item.get("outputs", {}).get("stdout_normalized_jsonl", [])]


def golden_of_type(item: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in golden(item) if record.get("type") == kind]


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def result_text(result: dict[str, Any]) -> str:
    """The text blocks of a tool result (wire form), joined."""
    return "".join(
        block.get("text", "") for block in result.get("content") or [] if block.get("type") == "text"
    )


def tool_turns(tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model of the captures: a text and one tool call, then ``ok``."""
    return [
        {
            "blocks": [
                {"text": f"Calling tool {tool}."},
                {"tool_call": {"name": tool, "arguments": arguments}},
            ]
        },
        {"blocks": [{"text": "ok"}]},
    ]


# The model of the captures: pi's ``openai`` provider (OpenAI responses) aimed at the scripted server.
CAPTURE_MODEL = ["--provider", "openai", "--model", "gpt-4o-mini"]


def use_capture_model(home: Any, server: Any) -> None:
    """Point ``openai/gpt-4o-mini`` at ``server`` (speaking OpenAI responses), as the captures' models.json did."""
    from piko.testing.home import mock_provider

    model = {"id": "gpt-4o-mini", "name": "GPT-4o mini", "contextWindow": 128000, "maxTokens": 16384}
    home.write_models({"openai": mock_provider(server.base_url, [model], api="openai-responses")})


def run_json(
    home: Any, server: Any, ext_id: str, prompt: str, *args: str, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """``pi --mode json -e PORT ARGS PROMPT`` against the scripted ``server``; the JSON lines printed."""
    use_capture_model(home, server)
    done = home.pi("--mode", "json", "-e", str(port(ext_id)), *CAPTURE_MODEL, *args, prompt, env=env)
    assert done.returncode == 0, done.stderr
    assert "failed to load" not in done.stderr, done.stderr
    return json_lines(done.stdout)


def run_tool_scenario(
    home: Any, server: Any, item: dict[str, Any], *args: str, env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Run a ``kind: tool`` scenario as it was captured: the model calls the tool with the
    scenario's arguments, then answers ``ok``; the JSON lines printed."""
    server.add_turns(tool_turns(item["tool_name"], item["input"]["arguments"]))
    return run_json(home, server, item["extension_id"], f"Run scenario {item['id']}.", *args, env=env)


def only(records: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The one record of a type."""
    found = [r for r in records if r.get("type") == kind]
    assert len(found) == 1, (kind, [r.get("type") for r in records])
    return found[0]


def lifecycle(records: list[dict[str, Any]]) -> list[str]:
    """The record types of a JSON-mode run, compared with a capture's: ``message_update`` by its
    change, without ``*_delta`` (the captures' server sent each block whole) and without
    ``agent_settled`` (pi 1.6; the captures are of an earlier pi)."""
    out = []
    for record in records:
        kind = record["type"]
        if kind == "message_update":
            change = record.get("assistantMessageEvent", {}).get("type", "")
            if change.endswith("_delta"):
                continue
            kind = f"{kind}:{change}"
        if kind != "agent_settled":
            out.append(kind)
    return out


def assert_like_capture(records: list[dict[str, Any]], item: dict[str, Any]) -> None:
    """The run printed what pi printed in the scenario's capture: the same records in the same
    order (see :func:`lifecycle`) and the same tool results (``tool_execution_update``/``_end``)."""
    assert lifecycle(records) == lifecycle(golden(item))
    for kind in ("tool_execution_update", "tool_execution_end"):
        mine = [r for r in records if r["type"] == kind]
        theirs = golden_of_type(item, kind)
        assert [(r["toolName"], r.get("result", r.get("partialResult")), r.get("isError")) for r in mine] == [
            (r["toolName"], r.get("result", r.get("partialResult")), r.get("isError")) for r in theirs
        ]


def check_tool_expect(expect: dict[str, Any], end: dict[str, Any]) -> None:
    """Hold a tool result (a ``tool_execution_end`` record) to a scenario's ``expect``."""
    result = end["result"]
    text = result_text(result)
    for piece in expect.get("content_contains", []):
        assert piece in text, (piece, result)
    for piece in expect.get("error_contains", []):
        assert piece in text, (piece, result)
    if "is_error" in expect:
        assert end["isError"] is expect["is_error"], end
    elif "error_contains" not in expect:
        assert end["isError"] is False, end
    if "details_exact" in expect:
        assert result.get("details") == expect["details_exact"], result
    for key in expect.get("details_contains_keys", []):
        assert key in (result.get("details") or {}), (key, result)
    if "content_types" in expect:
        assert [block["type"] for block in result["content"]] == expect["content_types"], result


def plain(text: str | None) -> str:
    """Text without its ANSI colours."""
    return ANSI.sub("", text or "")


def start_rpc(home: Any, server: Any, ext_id: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """``pi --mode rpc --no-session -e PORT ARGS`` on the captures' model (a running ``RpcProcess``)."""
    from piko.testing.rpc_client import RpcProcess

    use_capture_model(home, server)
    argv = ["--mode", "rpc", "--no-session", *CAPTURE_MODEL, "-e", str(port(ext_id)), *args]
    return RpcProcess(home.agent_dir, home.project, argv, home.environment(env))


def ui_requests(process: Any, method: str) -> list[dict[str, Any]]:
    """The ``extension_ui_request`` records of one method written so far."""
    return [
        r for r in process.records if r.get("type") == "extension_ui_request" and r.get("method") == method
    ]


def answer_dialog(process: Any, method: str, answer: dict[str, Any]) -> dict[str, Any]:
    """Wait for a dialog request and answer it (``{"value": ...}``, ``{"confirmed": ...}``); the request."""
    request = process.wait_for(
        lambda r: r.get("type") == "extension_ui_request" and r.get("method") == method
    )
    process.send({"type": "extension_ui_response", "id": request["id"], **answer})
    return request


def send_prompt(process: Any, message: str, request_id: str = "cmd-1") -> None:
    """Send a prompt and check it was taken (the run goes on in the background)."""
    response = process.request({"id": request_id, "type": "prompt", "message": message})
    assert response.get("success"), response
