"""What pi 1.6 added to the RPC and JSON protocols, additively: ``get_entries``, streamed
``bash_execution_update``, the assistant fields ``rawStopReason``/``durationMs``/``thinkingLevel``
and ``agent_settled`` (field names and order as pi 1.6.0 sends them against the same server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_commands import SESSION_ARGS
from test_commands import SLOW
from test_commands import until_idle

from piko.testing import text_turn

ASSISTANT_KEYS = [
    "role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId",
    "rawStopReason", "durationMs", "thinkingLevel",
]  # fmt: skip


def test_assistant_messages_carry_pi_1_6_fields(rpc: Any) -> None:
    process = rpc(
        [{"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "true"}}}]}, text_turn("ok")]
    )
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    ends = [r["message"] for r in process.records if r.get("type") == "message_end"]
    assistants = [m for m in ends if m["role"] == "assistant"]
    assert [list(m) for m in assistants] == [ASSISTANT_KEYS, ASSISTANT_KEYS]
    assert [m["rawStopReason"] for m in assistants] == ["tool_calls", "stop"]
    assert [m["thinkingLevel"] for m in assistants] == ["off", "off"]
    assert all(isinstance(m["durationMs"], int) and m["durationMs"] >= 0 for m in assistants)
    messages = process.request({"id": "m", "type": "get_messages"})["data"]["messages"]
    assert [m["rawStopReason"] for m in messages if m["role"] == "assistant"] == ["tool_calls", "stop"]


def test_errors_and_thinking_levels(rpc: Any) -> None:
    process = rpc(
        [{"status": 400}, {"blocks": [{"thinking": "hmm"}, {"text": "ok"}]}],
        args=["--mode", "rpc", "--no-session", "--model", "mock-claude:high"],
    )
    for n in range(2):
        process.request({"id": f"p{n}", "type": "prompt", "message": "hi"})
        until_idle(process)
    failed, answered = [
        r["message"]
        for r in process.records
        if r.get("type") == "message_end" and r["message"]["role"] == "assistant"
    ]
    # an error has no stop reason from the provider, like pi 1.6's
    assert list(failed)[-4:] == ["timestamp", "errorMessage", "durationMs", "thinkingLevel"]
    assert (failed["thinkingLevel"], answered["thinkingLevel"]) == ("high", "high")
    assert answered["rawStopReason"] == "end_turn"


def test_agent_settled_closes_each_run(rpc: Any) -> None:
    process = rpc([text_turn("one"), SLOW], args=SESSION_ARGS)
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    process.request({"id": "q", "type": "prompt", "message": "again"})
    process.wait_for(lambda r: r.get("type") == "message_update")
    process.request({"id": "a", "type": "abort"})
    process.wait_for(lambda r: r.get("type") == "agent_settled")
    kinds = [r["type"] for r in process.records if r.get("type") in ("agent_end", "agent_settled")]
    assert kinds == ["agent_end", "agent_settled", "agent_end", "agent_settled"]
    settled = [r for r in process.records if r.get("type") == "agent_settled"]
    assert settled == [
        {"type": "agent_settled", "aborted": False},
        {"type": "agent_settled", "aborted": True},
    ]


def test_agent_settled_waits_for_retries(rpc: Any) -> None:
    process = rpc(
        [{"status": 500}, text_turn("ok")],
        settings={"retry": {"baseDelayMs": 1, "provider": {"maxRetries": 0}}},
    )
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    process.wait_for(lambda r: r.get("type") == "agent_settled")
    kinds = [r["type"] for r in process.records if r.get("type", "").startswith(("agent_", "auto_retry"))]
    assert kinds[-2:] == ["agent_end", "agent_settled"]
    assert kinds.count("agent_settled") == 1


def test_get_entries_in_append_order_with_a_cursor(rpc: Any) -> None:
    process = rpc([text_turn("one"), text_turn("two")], args=SESSION_ARGS)
    for n in range(2):
        process.request({"id": f"p{n}", "type": "prompt", "message": f"q{n}"})
        until_idle(process)
    data = process.request({"id": "e", "type": "get_entries"})["data"]
    assert list(data) == ["entries", "leafId"]
    entries = data["entries"]
    assert [e["type"] for e in entries] == ["model_change", "thinking_level_change", *["message"] * 4]
    assert data["leafId"] == entries[-1]["id"]
    path = Path(process.request({"id": "st", "type": "get_state"})["data"]["sessionFile"])
    on_file = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert entries == on_file
    after = process.request({"id": "s", "type": "get_entries", "since": entries[3]["id"]})["data"]
    assert after["entries"] == entries[4:]
    last = process.request({"id": "l", "type": "get_entries", "since": entries[-1]["id"]})["data"]
    assert last == {"entries": [], "leafId": entries[-1]["id"]}


def test_get_entries_bad_input(rpc: Any) -> None:
    process = rpc(args=SESSION_ARGS)
    data = process.request({"id": "e", "type": "get_entries"})["data"]
    assert [e["type"] for e in data["entries"]] == ["model_change", "thinking_level_change"]
    missing = process.request({"id": "x", "type": "get_entries", "since": "nope"})
    assert (missing["success"], missing["error"]) == (False, "Entry not found: nope")
    wrong = process.request({"id": "y", "type": "get_entries", "since": 7})
    assert wrong["error"] == 'Invalid "get_entries" command: "since" must be a string'
    assert process.request({"id": "z", "type": "get_state"})["success"]  # still serving


def test_bash_streams_its_output(rpc: Any) -> None:
    process = rpc(args=SESSION_ARGS)
    response = process.request({"id": "b1", "type": "bash", "command": "echo one; sleep 0.3; echo two"})
    assert response["data"]["output"] == "one\ntwo\n"
    updates = [r for r in process.records if r.get("type") == "bash_execution_update"]
    assert updates == [
        {"type": "bash_execution_update", "id": "b1", "delta": "one\n"},
        {"type": "bash_execution_update", "id": "b1", "delta": "two\n"},
    ]
    assert process.records.index(updates[-1]) < process.records.index(response)
    process.send({"type": "bash", "command": "printf abc"})  # no id: none in the events
    process.wait_for(lambda r: r.get("type") == "response" and "id" not in r)
    assert [r for r in process.records if r.get("type") == "bash_execution_update"][-1] == {
        "type": "bash_execution_update",
        "delta": "abc",
    }


def test_bash_output_left_out_of_context(rpc: Any) -> None:
    process = rpc([text_turn("ok")], args=SESSION_ARGS)
    process.request({"id": "b", "type": "bash", "command": "echo secret-words", "excludeFromContext": True})
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    assert "secret-words" not in json.dumps(process.server.requests[0]["body"])
    (entry,) = [
        r
        for r in process.request({"id": "m", "type": "get_messages"})["data"]["messages"]
        if r["role"] == "bashExecution"
    ]
    assert entry["excludeFromContext"] is True


def _compactable(rpc: Any, summary_turns: list[dict[str, Any]], **settings: Any) -> Any:
    """A session with two long prompts answered, ready for a manual compaction whose summary
    requests get ``summary_turns``; provider-level retries off, so the summary's own retry shows."""
    retry = {"baseDelayMs": 20, "provider": {"maxRetries": 0}, **settings}
    process = rpc(
        [text_turn("first"), text_turn("second"), *summary_turns],
        args=SESSION_ARGS,
        settings={"retry": retry, "compaction": {"keepRecentTokens": 10}},
    )
    for n in range(2):
        process.request({"id": f"p{n}", "type": "prompt", "message": "question " * 60})
        until_idle(process)
    return process


def _retry_events(process: Any) -> list[dict[str, Any]]:
    return [
        r
        for r in process.records
        if str(r.get("type", "")).startswith(("summarization_retry", "compaction_"))
    ]


def test_summary_requests_are_retried_and_say_so(rpc: Any) -> None:
    summary = text_turn("## Goal\nsummary")
    process = _compactable(rpc, [{"status": 500}, {"status": 503}, summary, summary])
    response = process.request({"id": "c", "type": "compact"})
    assert response["success"], response
    events = _retry_events(process)
    assert [e["type"] for e in events] == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]
    first = events[1]
    assert list(first) == ["type", "attempt", "maxAttempts", "delayMs", "errorMessage"]
    assert (first["attempt"], first["maxAttempts"], first["delayMs"]) == (1, 3, 20)
    assert events[3]["delayMs"] == 40 and events[3]["errorMessage"].startswith("503")
    assert events[2] == {
        "type": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "manual",
    }
    assert events[5] == {"type": "summarization_retry_finished"}


def test_summary_retries_run_out_into_one_clear_error(rpc: Any) -> None:
    process = _compactable(rpc, [{"status": 500, "repeat": True}], maxRetries=2)
    response = process.request({"id": "c", "type": "compact"})
    assert response["success"] is False and "500" in response["error"]
    kinds = [e["type"] for e in _retry_events(process)]
    assert kinds.count("summarization_retry_scheduled") == 2
    assert kinds[-2:] == ["summarization_retry_finished", "compaction_end"]
    assert process.request({"id": "s", "type": "get_state"})["data"]["isCompacting"] is False


def test_errors_that_will_not_pass_are_not_retried(rpc: Any) -> None:
    process = _compactable(rpc, [{"status": 400}])
    response = process.request({"id": "c", "type": "compact"})
    assert response["success"] is False
    assert [e["type"] for e in _retry_events(process)] == ["compaction_start", "compaction_end"]
    assert len(process.server.requests) == 3  # the summary was asked for once


def test_an_abort_during_the_wait_ends_the_retrying(rpc: Any) -> None:
    """Shutting down aborts the compaction in its 30 s wait: the retrying ends at once, and says so."""
    process = _compactable(rpc, [{"status": 500, "repeat": True}], baseDelayMs=30000)
    process.send({"id": "c", "type": "compact"})
    process.wait_for(lambda r: r.get("type") == "summarization_retry_scheduled")
    assert process.close(timeout=20) == 0
    response = next(r for r in process.records if r.get("id") == "c")
    assert response["success"] is False
    events = _retry_events(process)
    assert [e["type"] for e in events][-2:] == ["summarization_retry_finished", "compaction_end"]
    assert events[-1]["aborted"] is True


def test_summary_requests_follow_the_provider_retry_setting(rpc: Any) -> None:
    """``retry.provider.maxRetries: 0`` holds for summaries too (they used the client's 2 retries)."""
    process = _compactable(rpc, [{"status": 500, "repeat": True}], enabled=False)
    assert process.request({"id": "c", "type": "compact"})["success"] is False
    assert len(process.server.requests) == 3  # two prompts, one summary request


def _declared(process: Any, index: int) -> list[str]:
    return [t["function"]["name"] for t in process.server.requests[index]["body"].get("tools") or []]


def test_switching_sessions_brings_their_tools(rpc: Any) -> None:
    """``switch_session`` to a session that recorded its tools restores them (as pi 1.6, which
    builds the session afresh); ``new_session`` goes back to the start-up selection."""
    first = rpc([text_turn("one")], args=[*SESSION_ARGS, "--tools", "read,grep"])
    first.request({"id": "p", "type": "prompt", "message": "one"})
    until_idle(first)
    recorded = first.request({"id": "s", "type": "get_state"})["data"]["sessionFile"]
    assert first.close() == 0
    process = rpc([text_turn("two"), text_turn("three"), text_turn("four")], args=SESSION_ARGS)
    assert process.request({"id": "w", "type": "switch_session", "sessionPath": recorded})["success"]
    process.request({"id": "p1", "type": "prompt", "message": "two"})
    until_idle(process)
    assert _declared(process, 0) == ["read", "grep"]
    assert process.request({"id": "n", "type": "new_session"})["success"]
    process.request({"id": "p2", "type": "prompt", "message": "three"})
    until_idle(process)
    assert _declared(process, 1) == ["read", "bash", "edit", "write"]
    assert process.request({"id": "w2", "type": "switch_session", "sessionPath": recorded})["success"]
    process.request({"id": "p3", "type": "prompt", "message": "four"})
    until_idle(process)
    assert _declared(process, 2) == ["read", "grep"]


def test_prompt_steer_and_follow_up_say_their_disposition(rpc: Any) -> None:
    """pi 1.6's ``data.disposition``: ``started``, ``queued`` (during a run) or ``handled``."""
    process = rpc(
        [SLOW, text_turn("two"), text_turn("three")], args=SESSION_ARGS, extensions=["pi16_handles_input.py"]
    )
    started = process.request({"id": "p", "type": "prompt", "message": "hi"})
    process.wait_for(lambda r: r.get("type") == "message_update")
    queued = [
        process.request({"id": "s", "type": "steer", "message": "steer me"}),
        process.request({"id": "f", "type": "follow_up", "message": "after"}),
        process.request({"id": "q", "type": "prompt", "message": "more", "streamingBehavior": "followUp"}),
    ]
    handled = process.request({"id": "h", "type": "steer", "message": "swallow this"})
    until_idle(process)
    assert started["data"] == {"disposition": "started"}
    assert [r["data"] for r in queued] == [{"disposition": "queued"}] * 3
    assert handled["data"] == {"disposition": "handled"}
    swallowed = process.request({"id": "x", "type": "prompt", "message": "swallow this too"})
    assert swallowed["data"] == {"disposition": "handled"}


def test_tool_durations_and_will_retry(rpc: Any) -> None:
    """pi 1.6: a tool result's ``durationMs`` (in the message and ``tool_execution_end``; absent
    when the tool did not run) and ``agent_end``'s ``willRetry``."""
    process = rpc(
        [{"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "true"}}},
                     {"tool_call": {"name": "no_such_tool", "arguments": {}}}]},
         text_turn("ok"), {"status": 500}, text_turn("after the retry")],
        settings={"retry": {"baseDelayMs": 1, "provider": {"maxRetries": 0}}},
    )  # fmt: skip
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    ends = {r["toolName"]: r for r in process.records if r.get("type") == "tool_execution_end"}
    assert isinstance(ends["bash"]["durationMs"], int) and "durationMs" not in ends["no_such_tool"]
    assert list(ends["bash"]) == ["type", "toolCallId", "toolName", "result", "isError", "durationMs"]
    results = [
        r["message"]
        for r in process.records
        if r.get("type") == "message_end" and r["message"]["role"] == "toolResult"
    ]
    assert [isinstance(m.get("durationMs"), int) for m in results] == [True, False]
    assert list(results[0])[-2:] == ["durationMs", "timestamp"]
    process.request({"id": "q", "type": "prompt", "message": "again"})
    until_idle(process)
    assert [r["willRetry"] for r in process.records if r.get("type") == "agent_end"] == [False, True, False]


def test_a_streaming_assistant_message_starts_pending(rpc: Any) -> None:
    """pi 1.6: ``message_start`` of an assistant message says ``stopReason: "pending"``; its
    ``message_end``, ``get_messages`` and the session file have the terminal reason."""
    process = rpc([text_turn("one")], args=SESSION_ARGS)
    process.request({"id": "p", "type": "prompt", "message": "hi"})
    until_idle(process)
    starts = [r["message"] for r in process.records if r.get("type") == "message_start"]
    ends = [r["message"] for r in process.records if r.get("type") == "message_end"]
    assert [m.get("stopReason") for m in starts] == [None, "pending"]
    assert [m.get("stopReason") for m in ends] == [None, "stop"]
    messages = process.request({"id": "m", "type": "get_messages"})["data"]["messages"]
    assert [m.get("stopReason") for m in messages] == [None, "stop"]
    path = process.request({"id": "s", "type": "get_state"})["data"]["sessionFile"]
    assert '"pending"' not in Path(path).read_text()
