"""Every RPC command against ``pi --mode rpc``: pi's request and response shapes, and its events."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from rpc_client import SAMPLE_ARGS
from support.dialogs_extension import PATH as DIALOGS

from piko.testing import text_turn

SESSION_ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
SLOW = {"blocks": [{"text": "one two three four five six seven eight nine ten"}], "delay_s": 0.15}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def until_idle(process: Any) -> dict[str, Any]:
    """Wait for ``agent_settled`` (after ``agent_end``: nothing more follows); returns ``agent_end``."""
    end = process.wait_for(lambda r: r.get("type") == "agent_end", 30)
    process.wait_for(lambda r: r.get("type") == "agent_settled", 30)
    return end


def after_one_prompt(rpc: Any, answer: str) -> Any:
    """A session-keeping process that has answered one prompt with ``answer``, now idle."""
    process = rpc([text_turn(answer)], args=SESSION_ARGS)
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    return process


def last_text(event: dict[str, Any]) -> str:
    return str(event["messages"][-1]["content"][0]["text"])


# ---------------------------------------------------------------------------
# State, models, thinking
# ---------------------------------------------------------------------------


def test_state_and_models(rpc: Any) -> None:
    process = rpc()
    state = process.request({"id": "s", "type": "get_state"})
    assert state["data"] == {
        "model": state["data"]["model"],
        "thinkingLevel": "off",
        "isStreaming": False,
        "isCompacting": False,
        "steeringMode": "one-at-a-time",
        "followUpMode": "one-at-a-time",
        "sessionId": state["data"]["sessionId"],
        "autoCompactionEnabled": True,
        "messageCount": 0,
        "pendingMessageCount": 0,
    }  # --no-session: no sessionFile; no name yet
    assert (state["data"]["model"]["provider"], state["data"]["model"]["id"]) == ("mock", "mock-1")
    models = process.request({"id": "m", "type": "get_available_models"})["data"]["models"]
    assert [(m["provider"], m["id"]) for m in models] == [
        ("mock", "mock-1"),
        ("mock-anthropic", "mock-claude"),
    ]

    missing = process.request({"id": "x", "type": "set_model", "provider": "mock", "modelId": "nope"})
    assert missing == {"id": "x", "type": "response", "command": "set_model", "success": False,
                       "error": "Model not found: mock/nope"}  # fmt: skip
    chosen = process.request(
        {"id": "sm", "type": "set_model", "provider": "mock-anthropic", "modelId": "mock-claude"}
    )
    assert chosen["data"] == models[1]
    # a reasoning model: its levels, a level change streamed before the response
    levels = process.request({"id": "l", "type": "get_available_thinking_levels"})["data"]
    assert levels == {"levels": ["off", "minimal", "low", "medium", "high"]}
    before = len(process.records)
    process.request({"id": "t", "type": "set_thinking_level", "level": "high"})
    assert process.records[before:] == [
        {"type": "thinking_level_changed", "level": "high"},
        {"id": "t", "type": "response", "command": "set_thinking_level", "success": True},
    ]
    cycled = process.request({"id": "c", "type": "cycle_thinking_level"})
    assert cycled["data"] == {"level": "off"}
    assert process.request({"id": "s2", "type": "get_state"})["data"]["thinkingLevel"] == "off"
    cycle = process.request({"id": "cm", "type": "cycle_model"})
    assert cycle["data"] == {"model": models[0], "thinkingLevel": "off", "isScoped": False}
    # a model without reasoning cannot cycle its level
    assert process.request({"id": "c2", "type": "cycle_thinking_level"})["data"] is None
    assert process.request({"id": "l2", "type": "get_available_thinking_levels"})["data"] == {
        "levels": ["off"]
    }
    assert process.close() == 0
    settings = json.loads((process.home / "settings.json").read_text())
    assert (settings["defaultProvider"], settings["defaultModel"]) == ("mock", "mock-1")


def test_cycle_model_with_one_model_gives_null(rpc: Any, tmp_path: Path) -> None:
    process = rpc(args=["--mode", "rpc", "--no-session", "--models", "mock-1"])
    assert process.request({"id": "c", "type": "cycle_model"})["data"] is None
    assert process.close() == 0


def test_queue_modes_and_toggles(rpc: Any) -> None:
    process = rpc()
    for kind in ("set_steering_mode", "set_follow_up_mode"):
        assert process.request({"id": kind, "type": kind, "mode": "all"}) == {
            "id": kind, "type": "response", "command": kind, "success": True,
        }  # fmt: skip
    assert process.request({"id": "ac", "type": "set_auto_compaction", "enabled": False})["success"]
    assert process.request({"id": "ar", "type": "set_auto_retry", "enabled": False})["success"]
    assert process.request({"id": "ab", "type": "abort_retry"})["success"]
    state = process.request({"id": "s", "type": "get_state"})["data"]
    assert (state["steeringMode"], state["followUpMode"], state["autoCompactionEnabled"]) == (
        "all",
        "all",
        False,
    )
    assert process.close() == 0
    settings = json.loads((process.home / "settings.json").read_text())
    assert settings["steeringMode"] == settings["followUpMode"] == "all"
    assert settings["compaction"]["enabled"] is False and settings["retry"]["enabled"] is False


# ---------------------------------------------------------------------------
# Prompting: streaming, steering, follow-ups, abort, images
# ---------------------------------------------------------------------------


def test_prompt_while_streaming_needs_streaming_behavior(rpc: Any) -> None:
    process = rpc([SLOW, text_turn("steered reply"), text_turn("follow-up reply")])
    assert process.request({"id": "p", "type": "prompt", "message": "go"})["success"]
    process.wait_for(lambda r: r.get("type") == "message_update")
    assert process.request({"id": "s", "type": "get_state"})["data"]["isStreaming"] is True
    refused = process.request({"id": "p2", "type": "prompt", "message": "again"})
    assert refused == {
        "id": "p2", "type": "response", "command": "prompt", "success": False,
        "error": "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
    }  # fmt: skip
    before = len(process.records)
    assert process.request(
        {"id": "p3", "type": "prompt", "message": "later", "streamingBehavior": "followUp"}
    )["success"]
    queued = [r for r in process.records[before:] if r.get("type") == "queue_update"]
    assert queued == [{"type": "queue_update", "steering": [], "followUp": ["later"]}]
    assert process.request({"id": "st", "type": "steer", "message": "now"})["success"]
    assert process.request({"id": "s2", "type": "get_state"})["data"]["pendingMessageCount"] == 2
    until_idle(process)
    # steering went first, then the follow-up; each left the queue as it was delivered
    updates = process.events("queue_update")
    assert updates[-1] == {"type": "queue_update", "steering": [], "followUp": []}
    users = [r["message"]["content"][0]["text"] for r in process.events("message_start")
             if r["message"]["role"] == "user"]  # fmt: skip
    assert users == ["go", "now", "later"]
    assert process.request({"id": "t", "type": "get_last_assistant_text"})["data"] == {
        "text": "follow-up reply"
    }
    assert process.close() == 0


def test_abort_stops_the_stream(rpc: Any) -> None:
    process = rpc([{"blocks": [{"text": " ".join(["word"] * 200)}], "delay_s": 0.05}])
    process.request({"id": "p", "type": "prompt", "message": "talk"})
    process.wait_for(lambda r: r.get("type") == "message_update")
    assert process.request({"id": "a", "type": "abort"}) == {"id": "a", "type": "response", "command": "abort",
                                                             "success": True}  # fmt: skip
    end = until_idle(process)
    assert end["messages"][-1]["stopReason"] == "aborted"
    state = process.request({"id": "s", "type": "get_state"})["data"]
    assert state["isStreaming"] is False
    # the aborted answer is not the last assistant text
    assert process.request({"id": "t", "type": "get_last_assistant_text"})["data"] == {"text": None}
    assert process.close() == 0


def test_clear_queue_returns_what_was_queued(rpc: Any) -> None:
    process = rpc([SLOW, text_turn("x")])
    process.request({"id": "p", "type": "prompt", "message": "go"})
    # queue once the first request is out: a message queued before it goes into it (as in pi)
    process.wait_for(lambda r: r.get("type") == "message_update")
    process.request({"id": "s", "type": "steer", "message": "a"})
    process.request({"id": "f", "type": "follow_up", "message": "b"})
    before = len(process.records)
    cleared = process.request({"id": "c", "type": "clear_queue"})
    assert cleared["data"] == {"steering": ["a"], "followUp": ["b"]}
    answered = process.records.index(cleared, before)
    updates = [r for r in process.records[before:answered] if r.get("type") == "queue_update"]
    assert updates == [{"type": "queue_update", "steering": [], "followUp": []}]  # sent before the answer
    until_idle(process)
    assert process.request({"id": "st", "type": "get_state"})["data"]["pendingMessageCount"] == 0
    assert process.close() == 0


def test_prompt_with_images_reaches_the_model(rpc: Any) -> None:
    process = rpc([text_turn("I see it")], model_fields={"mock": {"input": ["text", "image"]}})
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    older = {"type": "image", "source": {"type": "base64", "mediaType": "image/png", "data": PNG}}
    process.request({"id": "p", "type": "prompt", "message": "look", "images": [image, older]})
    end = until_idle(process)
    assert end["messages"][0]["content"] == [{"type": "text", "text": "look"}, image, image]
    body = process.server.requests[0]["body"]
    parts = body["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]
    assert process.close() == 0


def test_extension_commands_cannot_be_queued(rpc: Any) -> None:
    process = rpc(extensions=("rpc_ui_ext.py",))
    refused = process.request({"id": "s", "type": "steer", "message": "/boom now"})
    assert refused["success"] is False
    assert (
        refused["error"]
        == 'Extension command "/boom" cannot be queued. Use prompt() or execute the command when not streaming.'
    )
    assert process.close() == 0


def test_prompt_without_a_model_is_refused(rpc: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty-agent-dir"
    empty.mkdir()
    process = rpc(args=["--mode", "rpc", "--no-session"],
                  env={"PI_CODING_AGENT_DIR": str(empty), "PIKO_DISABLE_PLUGINS": "providers.faux"})  # fmt: skip
    assert "model" not in process.request({"id": "s", "type": "get_state"})["data"]
    response = process.request({"id": "p", "type": "prompt", "message": "hi"})
    assert response["success"] is False and response["command"] == "prompt"
    assert "model" in response["error"].lower()
    assert process.request({"id": "s2", "type": "get_state"})["data"]["messageCount"] == 0
    assert process.close() == 0


# ---------------------------------------------------------------------------
# Shell
# ---------------------------------------------------------------------------


def test_bash_and_abort_bash(rpc: Any) -> None:
    process = rpc()
    done = process.request({"id": "b", "type": "bash", "command": "printf 'x\\ny'"})
    assert done["data"] == {"output": "x\ny", "exitCode": 0, "cancelled": False, "truncated": False}
    process.send({"id": "long", "type": "bash", "command": "sleep 20"})
    busy = process.request({"id": "b2", "type": "bash", "command": "true"})
    assert busy["success"] is False and "already running" in busy["error"]
    assert process.request({"id": "ab", "type": "abort_bash"})["success"]
    stopped = process.wait_for(lambda r: r.get("id") == "long", 15)
    assert stopped["data"]["cancelled"] is True and "exitCode" not in stopped["data"]
    messages = process.request({"id": "m", "type": "get_messages"})["data"]["messages"]
    assert [m["role"] for m in messages] == ["bashExecution", "bashExecution"]
    assert messages[0]["command"] == "printf 'x\\ny'"
    assert process.close() == 0


# ---------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------


def test_sessions_fork_switch_clone_new(rpc: Any) -> None:
    process = rpc([text_turn("first answer"), text_turn("second answer")], args=SESSION_ARGS)
    process.request({"id": "p1", "type": "prompt", "message": "one"})
    until_idle(process)
    process.request({"id": "p2", "type": "prompt", "message": "two"})
    until_idle(process)
    original = process.request({"id": "s", "type": "get_state"})["data"]["sessionFile"]
    assert Path(original).is_file()
    forks = process.request({"id": "fm", "type": "get_fork_messages"})["data"]["messages"]
    assert [m["text"] for m in forks] == ["one", "two"]

    forked = process.request({"id": "f", "type": "fork", "entryId": forks[1]["entryId"]})
    assert forked["data"] == {"text": "two", "cancelled": False}
    state = process.request({"id": "s2", "type": "get_state"})["data"]
    assert state["sessionFile"] != original and state["messageCount"] == 2
    bad = process.request({"id": "f2", "type": "fork", "entryId": "nope"})
    assert bad["success"] is False and bad["error"] == "Invalid entry ID for forking"

    switched = process.request({"id": "sw", "type": "switch_session", "sessionPath": original})
    assert switched["data"] == {"cancelled": False}
    assert process.request({"id": "s3", "type": "get_state"})["data"]["messageCount"] == 4
    cloned = process.request({"id": "cl", "type": "clone"})
    assert cloned["data"] == {"cancelled": False}
    state = process.request({"id": "s4", "type": "get_state"})["data"]
    assert state["sessionFile"] != original and state["messageCount"] == 4

    fresh = process.request({"id": "n", "type": "new_session", "parentSession": original})
    assert fresh["data"] == {"cancelled": False}
    state = process.request({"id": "s5", "type": "get_state"})["data"]
    assert state["messageCount"] == 0
    # like pi, a path without a file starts an empty session there
    elsewhere = process.work / "elsewhere.jsonl"
    assert process.request({"id": "sw2", "type": "switch_session", "sessionPath": str(elsewhere)})["success"]
    state = process.request({"id": "s6", "type": "get_state"})["data"]
    assert (state["sessionFile"], state["messageCount"]) == (str(elsewhere), 0)
    assert process.close() == 0


def test_fork_before_the_first_answer_then_clone(rpc: Any) -> None:
    """A branch with no answer yet has no file; forking and cloning it work from memory."""
    process = rpc([text_turn("answer")], args=SESSION_ARGS)
    process.request({"id": "p", "type": "prompt", "message": "first question"})
    until_idle(process)
    first = process.request({"id": "fm", "type": "get_fork_messages"})["data"]["messages"][0]
    forked = process.request({"id": "f", "type": "fork", "entryId": first["entryId"]})
    assert forked["data"] == {"text": "first question", "cancelled": False}
    state = process.request({"id": "s", "type": "get_state"})["data"]
    assert state["messageCount"] == 0 and not Path(state["sessionFile"]).exists()
    tree = process.request({"id": "t", "type": "get_tree"})["data"]
    assert [n["entry"]["type"] for n in tree["tree"]] == ["model_change"]
    cloned = process.request({"id": "c", "type": "clone"})
    assert cloned["data"] == {"cancelled": False}
    again = process.request({"id": "t2", "type": "get_tree"})["data"]
    assert again["tree"][0]["entry"]["id"] == tree["tree"][0]["entry"]["id"]
    assert process.close() == 0


def test_session_name_and_stats(rpc: Any) -> None:
    process = after_one_prompt(rpc, "hello")
    empty = process.request({"id": "e", "type": "set_session_name", "name": "   "})
    assert empty["error"] == "Session name cannot be empty"
    before = len(process.records)
    process.request({"id": "n", "type": "set_session_name", "name": "  my work  "})
    assert process.records[before] == {"type": "session_info_changed", "name": "my work"}
    state = process.request({"id": "s", "type": "get_state"})["data"]
    assert state["sessionName"] == "my work"
    stats = process.request({"id": "st", "type": "get_session_stats"})["data"]
    assert stats == {
        "sessionFile": state["sessionFile"], "sessionId": state["sessionId"],
        "userMessages": 1, "assistantMessages": 1, "toolCalls": 0, "toolResults": 0, "totalMessages": 2,
        "tokens": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "total": 120},
        "cost": 0, "contextUsage": {"tokens": 120, "contextWindow": 128000, "percent": 0.09375},
    }  # fmt: skip
    assert process.close() == 0


def test_get_tree_lists_branches(rpc: Any) -> None:
    process = rpc([text_turn("a1"), text_turn("a2")], args=SESSION_ARGS)
    process.request({"id": "p1", "type": "prompt", "message": "q1"})
    until_idle(process)
    tree = process.request({"id": "t", "type": "get_tree"})["data"]
    node, path = tree["tree"][0], []
    while True:
        path.append(node["entry"]["type"])
        if not node["children"]:
            break
        assert list(node) == ["entry", "children"]
        node = node["children"][0]
    assert path == ["model_change", "thinking_level_change", "message", "message"]
    assert tree["leafId"] == node["entry"]["id"]
    assert process.close() == 0


def test_compact_reports_why_it_cannot(rpc: Any) -> None:
    process = rpc()
    before = len(process.records)
    response = process.request({"id": "c", "type": "compact", "customInstructions": "keep code"})
    assert response == {"id": "c", "type": "response", "command": "compact", "success": False,
                        "error": "Nothing to compact (session too small)"}  # fmt: skip
    events = [r["type"] for r in process.records[before:] if r.get("type") != "response"]
    assert events == ["compaction_start", "compaction_end"]
    assert process.close() == 0


def test_compact_answers_with_the_compaction_result(rpc: Any) -> None:
    turns = [
        text_turn("answer one " * 20),
        text_turn("answer two " * 20),
        text_turn("## Goal\nSummary text"),  # the history before the kept part
        text_turn("prefix summary"),  # the start of the turn that is cut
    ]
    process = rpc(turns, args=SESSION_ARGS, settings={"compaction": {"keepRecentTokens": 10}})
    for n in range(2):
        process.request({"id": f"p{n}", "type": "prompt", "message": f"question {n} " * 30})
        until_idle(process)
    before = len(process.records)
    response = process.request({"id": "c", "type": "compact", "customInstructions": "be brief"})
    data = response["data"]
    assert list(data) == ["summary", "firstKeptEntryId", "tokensBefore", "details"]
    # the two summaries are asked for at once: either may get either scripted answer
    assert "Summary text" in data["summary"] and "prefix summary" in data["summary"]
    assert data["tokensBefore"] > 0
    events = [r for r in process.records[before:] if r.get("type") != "response"]
    assert events[0] == {"type": "compaction_start", "reason": "manual"}
    assert events[1] == {"type": "compaction_end", "reason": "manual", "result": data, "aborted": False,
                         "willRetry": False}  # fmt: skip
    assert "be brief" in json.dumps([r["body"] for r in process.server.requests[2:]])
    stats = process.request({"id": "st", "type": "get_session_stats"})["data"]
    assert stats["contextUsage"] == {"tokens": None, "contextWindow": 128000, "percent": None}
    assert process.close() == 0


def test_retry_events_and_abort_retry(rpc: Any) -> None:
    # the provider's own retries answer at once; the session's wait is long enough to cancel
    failing = {"status": 500, "repeat": True, "headers": {"retry-after-ms": "1"}}
    process = rpc([failing], settings={"retry": {"baseDelayMs": 30000}})
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    end = process.wait_for(lambda r: r.get("type") == "agent_end")
    assert end["messages"][-1]["stopReason"] == "error"
    start = process.wait_for(lambda r: r.get("type") == "auto_retry_start")
    assert {k: start[k] for k in ("attempt", "maxAttempts", "delayMs")} == {"attempt": 1, "maxAttempts": 3,
                                                                            "delayMs": 30000}  # fmt: skip
    assert start["errorMessage"].startswith("500")
    assert process.request({"id": "a", "type": "abort_retry"})["success"]
    stopped = process.wait_for(lambda r: r.get("type") == "auto_retry_end")
    assert stopped == {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 1,
        "finalError": "Retry cancelled",
    }
    assert process.request({"id": "s", "type": "get_state"})["data"]["isStreaming"] is False
    assert process.close() == 0


def test_export_html_without_a_plugin_says_so(rpc: Any) -> None:
    process = rpc(args=[*SAMPLE_ARGS, "--disable-plugin", "export.html"])
    response = process.request({"id": "x", "type": "export_html", "outputPath": "out.html"})
    assert response == {"id": "x", "type": "response", "command": "export_html", "success": False,
                        "error": "HTML export is not available: no plugin answers piko_export_html (see `pi plugins`)"}  # fmt: skip
    assert not (process.work / "out.html").exists()
    assert process.close() == 0


def test_export_html_through_the_hook(rpc: Any) -> None:
    process = rpc(
        [text_turn("hello")],
        args=[*SESSION_ARGS, "--disable-plugin", "export.html"],
        extensions=("rpc_export_ext.py",),
    )
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    target = process.work / "out.html"
    response = process.request({"id": "x", "type": "export_html", "outputPath": str(target)})
    assert response["data"] == {"path": str(target)}
    assert "entries=4" in target.read_text()  # model, thinking level, question, answer
    assert process.close() == 0


def test_export_html_with_the_built_in_exporter(rpc: Any) -> None:
    process = after_one_prompt(rpc, "hello from the model")
    response = process.request({"id": "x", "type": "export_html", "outputPath": "exported.html"})
    assert response["success"] is True, response
    path = Path(response["data"]["path"])
    assert path.is_absolute() or (process.work / path).exists()
    page = (path if path.is_absolute() else process.work / path).read_text()
    assert "hello from the model" in page
    assert process.close() == 0


def test_get_commands_lists_extension_commands_templates_and_skills(rpc: Any) -> None:
    def prepare(home: Path, work: Path) -> None:
        (home / "prompts").mkdir()
        (home / "prompts" / "review.md").write_text("---\ndescription: Review code\n---\nReview $1\n")
        (home / "skills" / "tidy").mkdir(parents=True)
        (home / "skills" / "tidy" / "SKILL.md").write_text(
            "---\nname: tidy\ndescription: Tidy things up\n---\nTidy.\n"
        )

    process = rpc(extensions=("rpc_ui_ext.py", str(DIALOGS)), prepare=prepare)
    commands = process.request({"id": "c", "type": "get_commands"})["data"]["commands"]
    assert process.close() == 0
    home = process.home
    by_name = {c["name"]: c for c in commands}
    assert by_name["pick"] == {
        "name": "pick", "description": "Pick from a list", "source": "extension",
        "sourceInfo": {"path": str(DIALOGS), "source": "local",
                       "scope": "user", "origin": "top-level"},
    }  # fmt: skip
    assert by_name["review"] == {
        "name": "review", "description": "Review code", "source": "prompt",
        "sourceInfo": {"path": str(home / "prompts" / "review.md"), "source": "auto", "scope": "user",
                       "origin": "top-level"},
    }  # fmt: skip
    tidy = by_name["skill:tidy"]
    assert (tidy["source"], tidy["description"]) == ("skill", "Tidy things up")
    assert tidy["sourceInfo"]["path"] == str(home / "skills" / "tidy" / "SKILL.md")
    # enableSkillCommands only hides skills from interactive completion: get_commands lists them (as pi)
    process = rpc(prepare=prepare, settings={"enableSkillCommands": False})
    commands = process.request({"id": "c", "type": "get_commands"})["data"]["commands"]
    assert process.close() == 0
    assert "skill:tidy" in {c["name"] for c in commands}
    # a template runs through prompt, expanded
    process = rpc([text_turn("reviewed")], prepare=prepare)
    process.request({"id": "p", "type": "prompt", "message": "/review main.py"})
    end = until_idle(process)
    assert end["messages"][0]["content"][0]["text"].startswith("Review main.py")
    assert process.close() == 0


# ---------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ({"id": 1, "type": "prompt"}, 'Invalid "prompt" command: missing "message" (a string)'),
        ({"id": 2, "type": "prompt", "message": 5}, 'Invalid "prompt" command: "message" must be a string'),
        ({"id": 3, "type": "prompt", "message": "x", "streamingBehavior": "later"},
         'Invalid "prompt" command: "streamingBehavior" must be "steer" or "followUp"'),
        ({"id": 4, "type": "prompt", "message": "x", "images": [{"type": "image"}]},
         'Invalid "prompt" command: "images" must be an array of images ({"type": "image", "data": <base64>, "mimeType": <type>})'),
        ({"id": 5, "type": "set_thinking_level", "level": "ultra"},
         'Invalid "set_thinking_level" command: "level" must be one of "off", "minimal", "low", "medium", "high", "xhigh", "max"'),
        ({"id": 6, "type": "set_steering_mode", "mode": "some"},
         'Invalid "set_steering_mode" command: "mode" must be "all" or "one-at-a-time"'),
        ({"id": 7, "type": "set_auto_retry", "enabled": "yes"}, 'Invalid "set_auto_retry" command: "enabled" must be a boolean'),
        ({"id": 8, "type": "bash"}, 'Invalid "bash" command: missing "command" (a string)'),
        ({"id": 9, "type": "set_model", "provider": "mock"}, 'Invalid "set_model" command: missing "modelId" (a string)'),
        ({"id": None, "type": "fork"}, 'Invalid "fork" command: missing "entryId" (a string)'),
        ({"id": "u", "type": "frobnicate"}, "Unknown command: frobnicate"),
        ({"id": "t", "type": 7}, 'Invalid command: "type" must be a string naming the command'),
        ({"id": "v"}, 'Invalid command: "type" must be a string naming the command'),
    ],
)  # fmt: skip
def test_bad_fields_are_refused_with_the_id(rpc: Any, command: dict[str, Any], error: str) -> None:
    process = rpc()
    process.send(command)
    response = process.wait_for(lambda r: r.get("type") == "response")
    name = command.get("type") if isinstance(command.get("type"), str) else "unknown"
    assert response == {
        "id": command["id"],
        "type": "response",
        "command": name,
        "success": False,
        "error": error,
    }
    assert process.request({"id": "s", "type": "get_state"})["success"]
    assert process.close() == 0


def test_fork_events_say_their_reason(rpc: Any) -> None:
    process = rpc(
        [text_turn("answer"), text_turn("again")], args=SESSION_ARGS, extensions=("fork_reason_ext.py",)
    )
    process.request({"id": "p", "type": "prompt", "message": "one"})
    until_idle(process)
    first = process.request({"id": "fm", "type": "get_fork_messages"})["data"]["messages"][0]
    assert process.request({"id": "f", "type": "fork", "entryId": first["entryId"]})["success"]
    process.request({"id": "p2", "type": "prompt", "message": "two"})
    until_idle(process)
    assert process.request({"id": "cl", "type": "clone"})["success"]
    process.send({"id": "r", "type": "prompt", "message": "/report"})
    notice = process.wait_for(
        lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "notify"
    )
    assert json.loads(notice["message"]) == [
        ["before", "branch", "before"], ["after", "branch"], ["before", "fork", "at"], ["after", "fork"]
    ]  # fmt: skip
    assert process.close() == 0
