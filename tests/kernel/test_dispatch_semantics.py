"""The semantics of every event through the dispatcher.

``EVENT_CASES`` has one row per event hook (a meta-test checks it covers ``SEMANTICS``); each
row is a test of that event's semantics with real handlers registered on a real plugin manager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.dispatch_harness import SEMANTICS
from support.dispatch_harness import Harness
from support.dispatch_harness import assistant
from support.dispatch_harness import raises
from support.dispatch_harness import returns

from piko.data import events as ev
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import UserMessage
from piko.platform.manager import PikoPluginManager
from piko.platform.semantics import Semantics

# ---------------------------------------------------------------------------
# Semantics, one case per event
# ---------------------------------------------------------------------------


def notify_case(event: Any) -> Callable[[], None]:
    """Every handler runs, in registration order; what they return is ignored."""

    def check() -> None:
        h = Harness()
        hook = f"piko_{event.TYPE}"
        h.add(hook, returns({"cancel": True, "block": True, "action": "handled"}), "first")
        h.add(hook, returns("anything"), "second")
        h.add(hook, raises(RuntimeError("broken handler")), "third")
        h.add(hook, returns(None), "fourth")
        assert h.emit(event.TYPE, event) is None
        assert h.calls == ["first", "second", "third", "fourth"]
        assert [(e.extension_path, e.event, e.error) for e in h.errors] == [
            ("src:third", event.TYPE, "broken handler")
        ]

    check.semantics = Semantics.NOTIFY  # type: ignore[attr-defined]
    return check


def cancel_case(event: Any, extra: dict[str, Any] | None = None) -> Callable[[], None]:
    """The first ``{"cancel": True}`` wins and stops the walk; other results are kept."""

    def check() -> None:
        name = event.TYPE
        hook = f"piko_{name}"
        h = Harness()
        h.add(hook, returns(None), "quiet")
        h.add(hook, returns({"cancel": True}), "canceller")
        h.add(hook, returns({"cancel": False}), "late")
        assert h.emit(name, event) == {"cancel": True}
        assert h.calls == ["quiet", "canceller"]

        h = Harness()
        h.add(hook, returns(None), "quiet")
        assert h.emit(name, event) is None
        if extra:
            h.add(hook, returns(extra), "customizer")
            assert h.emit(name, event) == extra

    check.semantics = Semantics.CANCEL  # type: ignore[attr-defined]
    return check


def first_case(event: Any, value: Any) -> Callable[[], None]:
    """Handlers run until one returns something; that is the result."""

    def check() -> None:
        name = event.TYPE
        hook = f"piko_{name}"
        h = Harness()
        assert h.emit(name, event) is None
        h.add(hook, returns(None), "nothing")
        h.add(hook, raises(ValueError("skip me")), "broken")
        h.add(hook, returns(value), "answer")
        h.add(hook, returns("too late"), "late")
        assert h.emit(name, event) == value
        assert h.calls == ["nothing", "broken", "answer"]
        assert [e.extension_path for e in h.errors] == ["src:broken"]

    check.semantics = Semantics.FIRST  # type: ignore[attr-defined]
    return check


def check_project_trust() -> None:
    """The first yes or no decides; undecided, nothing and a bad answer (reported) pass it on."""
    event = ev.ProjectTrustEvent(cwd="/work", found=[".pi/settings.json"])
    h = Harness()
    assert h.emit("project_trust", event) is None
    h.add("piko_project_trust", returns({"trusted": "undecided"}), "defers")
    h.add("piko_project_trust", returns(None), "silent")
    h.add("piko_project_trust", returns({"trusted": True}), "bad")
    h.add("piko_project_trust", returns({"trusted": "no", "remember": True}), "decides")
    h.add("piko_project_trust", returns({"trusted": "yes"}), "late")
    assert h.emit("project_trust", event) == {"trusted": "no", "remember": True, "by": "src:decides"}
    assert h.calls == ["defers", "silent", "bad", "decides"]
    assert [e.extension_path for e in h.errors] == ["src:bad"]


check_project_trust.semantics = Semantics.FIRST  # type: ignore[attr-defined]


def chain(fn: Callable[[], None]) -> Callable[[], None]:
    fn.semantics = Semantics.CHAIN  # type: ignore[attr-defined]
    return fn


@chain
def check_input() -> None:
    h = Harness()
    # nothing listening: continue with the input as it is
    assert h.emit("input", ev.InputEvent(text="hi", source="rpc")) == {
        "action": "continue",
        "text": "hi",
        "images": None,
    }

    h.add("piko_input", returns({"action": "transform", "text": "  Hello  "}), "a")
    h.add("piko_input", lambda e, c: {"action": "transform", "text": e.text + " world", "images": []}, "b")
    h.add("piko_input", returns({"action": "continue"}), "c")
    h.add("piko_input", returns(None), "d")
    assert h.emit("input", ev.InputEvent(text="hi")) == {
        "action": "transform",
        "text": "Hello world",
        "images": [],
    }
    assert h.calls == ["a", "b", "c", "d"]

    h = Harness()
    h.add("piko_input", returns({"action": "transform", "text": "changed"}), "a")
    h.add("piko_input", returns({"action": "handled"}), "b")
    h.add("piko_input", returns({"action": "transform", "text": "never"}), "c")
    assert h.emit("input", ev.InputEvent(text="hi")) == {
        "action": "handled",
        "text": "changed",
        "images": None,
    }
    assert h.calls == ["a", "b"]

    h = Harness()
    h.add("piko_input", returns({"action": "continue"}))
    assert h.emit("input", ev.InputEvent(text="same"))["action"] == "continue"


@chain
def check_before_agent_start() -> None:
    h = Harness()
    event = ev.BeforeAgentStartEvent(prompt="p", system_prompt="base")
    assert h.emit("before_agent_start", event) is None

    seen: list[str] = []

    def second(e: Any, c: Any) -> Any:
        seen.append(e.system_prompt)
        return {
            "system_prompt": e.system_prompt + " +B",
            "message": {"custom_type": "b", "content": "from b"},
        }

    h.add("piko_before_agent_start", returns({"systemPrompt": "base +A"}), "a")  # camelCase works
    h.add("piko_before_agent_start", second, "b")
    h.add("piko_before_agent_start", returns({"message": {"customType": "c", "content": "from c"}}), "c")
    result = h.emit("before_agent_start", event)
    assert seen == ["base +A"]
    assert result == {
        "system_prompt": "base +A +B",
        "messages": [{"custom_type": "b", "content": "from b"}, {"customType": "c", "content": "from c"}],
    }

    h = Harness()
    h.add("piko_before_agent_start", returns({"message": {"custom_type": "x", "content": "y"}}))
    assert h.emit("before_agent_start", ev.BeforeAgentStartEvent(system_prompt="s")) == {
        "system_prompt": None,
        "messages": [{"custom_type": "x", "content": "y"}],
    }


@chain
def check_context() -> None:
    h = Harness()
    original = [UserMessage(content="one"), UserMessage(content="two")]
    assert h.emit("context", ev.ContextEvent(messages=list(original))) == original

    def keep_last(e: Any, c: Any) -> Any:
        return {"messages": [{"role": "user", "content": "wire form", "timestamp": 1}, *e.messages[1:]]}

    def drop_first(e: Any, c: Any) -> Any:
        assert isinstance(e.messages[0], UserMessage) and e.messages[0].content == "wire form"
        return e.messages[1:]  # a bare list works too

    h.add("piko_context", keep_last, "a")
    h.add("piko_context", drop_first, "b")
    h.add("piko_context", returns(None), "c")
    assert h.emit("context", ev.ContextEvent(messages=list(original))) == [original[1]]


@chain
def check_context_with_system() -> None:
    h = Harness()
    original = [UserMessage(content="one"), UserMessage(content="two")]
    event = ev.ContextWithSystemEvent(system_prompt="base", messages=list(original))
    assert h.emit("context_with_system", event) == ("base", original)
    h.add("piko_context_with_system", lambda e, c: {"systemPrompt": e.system_prompt + " +a"}, "a")
    h.add("piko_context_with_system", lambda e, c: {"messages": e.messages[1:], "system_prompt": 7}, "b")
    h.add("piko_context_with_system", returns(None), "c")
    event = ev.ContextWithSystemEvent(system_prompt="base", messages=list(original))
    assert h.emit("context_with_system", event) == ("base +a", [original[1]])


@chain
def check_before_provider_request() -> None:
    h = Harness()
    assert h.emit("before_provider_request", ev.BeforeProviderRequestEvent(payload={"a": 1})) == {"a": 1}
    h.add("piko_before_provider_request", lambda e, c: {**e.payload, "temperature": 0}, "a")
    h.add("piko_before_provider_request", returns(None), "b")
    h.add("piko_before_provider_request", lambda e, c: {**e.payload, "seen": True}, "c")
    assert h.emit("before_provider_request", ev.BeforeProviderRequestEvent(payload={"a": 1})) == {
        "a": 1,
        "temperature": 0,
        "seen": True,
    }


@chain
def check_message_end() -> None:
    h = Harness()
    message = assistant(TextContent(text="original"))
    assert h.emit("message_end", ev.MessageEndEvent(message=message)) is message

    replacement = assistant(TextContent(text="replaced"))
    h.add("piko_message_end", returns({"message": replacement}), "a")
    h.add("piko_message_end", returns({"message": UserMessage(content="wrong role")}), "b")
    h.add("piko_message_end", returns(None), "c")
    assert h.emit("message_end", ev.MessageEndEvent(message=message)) is replacement
    assert [(e.extension_path, e.error) for e in h.errors] == [
        ("src:b", "message_end handlers must return a message with the same role")
    ]

    h = Harness()
    h.add("piko_message_end", returns({"message": {"role": "user", "content": "from wire", "timestamp": 0}}))
    result = h.emit("message_end", ev.MessageEndEvent(message=UserMessage(content="x")))
    assert isinstance(result, UserMessage) and result.content == "from wire"


@chain
def check_assistant_message() -> None:
    call = ToolCall(id="t1", name="read", arguments={"path": "a"})
    message = assistant(
        ThinkingContent(thinking="hmm", thinking_signature="sig-think"),
        TextContent(text="teh answer", text_signature="sig-1"),
        TextContent(text="kept", text_signature="sig-2"),
        call,
    )
    h = Harness()
    assert h.emit("assistant_message", ev.AssistantMessageEvent(message=message)) is message

    def fix_typo(e: Any, c: Any) -> Any:
        from piko.data.wire import to_wire

        blocks = to_wire(e.message)["content"]
        for block in blocks:
            if block["type"] == "text":
                block["text"] = block["text"].replace("teh", "the")
        return {"content": blocks}

    def drop_a_block(e: Any, c: Any) -> Any:
        return {"content": [{"type": "text", "text": "only one"}]}

    def change_tool_call(e: Any, c: Any) -> Any:
        from piko.data.wire import to_wire

        blocks = to_wire(e.message)["content"]
        blocks[3]["arguments"] = {"path": "/etc/passwd"}
        return {"content": blocks}

    h.add("piko_assistant_message", fix_typo, "typo")
    h.add("piko_assistant_message", drop_a_block, "dropper")
    h.add("piko_assistant_message", change_tool_call, "sneaky")
    result = h.emit("assistant_message", ev.AssistantMessageEvent(message=message))
    assert [type(b).__name__ for b in result.content] == [
        "ThinkingContent",
        "TextContent",
        "TextContent",
        "ToolCall",
    ]
    assert result.content[0].thinking_signature == "sig-think"
    assert (result.content[1].text, result.content[1].text_signature) == ("the answer", None)
    assert (result.content[2].text, result.content[2].text_signature) == ("kept", "sig-2")
    assert result.content[3].arguments == {"path": "a"}
    assert [(e.extension_path, e.error) for e in h.errors] == [
        ("src:dropper", "assistant_message: the replacement must keep the number of content blocks"),
        ("src:sneaky", "assistant_message: only text blocks may change"),
    ]


def check_tool_call() -> None:
    h = Harness()
    event = ev.ToolCallEvent(tool_call_id="c1", tool_name="bash", input={"command": "ls"})
    assert h.emit("tool_call", event) is None

    def mutate(e: Any, c: Any) -> Any:
        e.input["command"] = "source ~/.profile\n" + e.input["command"]

    seen: list[str] = []

    def revise(e: Any, c: Any) -> Any:
        seen.append(e.input["command"])
        return {"input": {"command": "echo safe"}}

    h.add("piko_tool_call", mutate, "mutator")
    h.add("piko_tool_call", revise, "reviser")
    h.add("piko_tool_call", lambda e, c: {"block": e.input["command"] != "echo safe"}, "checker")
    h.add("piko_tool_call", returns({"block": True, "reason": "Dangerous command"}), "blocker")
    h.add("piko_tool_call", returns({"block": False}), "never")
    assert h.emit("tool_call", event) == {"block": True, "reason": "Dangerous command"}
    assert seen == ["source ~/.profile\nls"]
    assert event.input == {"command": "echo safe"}
    assert h.calls == ["mutator", "reviser", "checker", "blocker"]


check_tool_call.semantics = Semantics.BLOCK  # type: ignore[attr-defined]


def check_session_stop() -> None:
    """Advice is gathered from every handler; the first refusal outranks it; a broken handler is
    reported and lets the session stop."""
    event = ev.SessionStopEvent(session_id="s")
    h = Harness()
    assert h.emit("session_stop", event) is None
    h.add("piko_session_stop", returns({"continue": True, "additionalContext": "one"}), "advice")
    h.add("piko_session_stop", raises(RuntimeError("broken")), "broken")
    h.add("piko_session_stop", returns({"continue": True, "additional_context": "two"}), "more")
    assert h.emit("session_stop", event) == {"continue": True, "additional_context": ["one", "two"]}
    assert [e.extension_path for e in h.errors] == ["src:broken"]
    h.add("piko_session_stop", returns({"decision": "block", "reason": "red"}), "refusal")
    h.add("piko_session_stop", returns({"decision": "block", "reason": "late"}), "late")
    assert h.emit("session_stop", event) == {"block": True, "reason": "red"}


check_session_stop.semantics = Semantics.COLLECT  # type: ignore[attr-defined]


def check_session_compacting() -> None:
    """Context lines are gathered, the last prompt wins, kept data is merged."""
    event = ev.SessionCompactingEvent(session_id="s")
    h = Harness()
    assert h.emit("session_compacting", event) is None
    h.add("piko_session_compacting", returns({"context": ["a"], "preserveData": {"x": 1}}), "one")
    h.add("piko_session_compacting", returns({"context": "b", "prompt": "P1"}), "two")
    h.add("piko_session_compacting", returns({"prompt": "P2", "preserve_data": {"y": 2}}), "three")
    assert h.emit("session_compacting", event) == {
        "context": ["a", "b"],
        "prompt": "P2",
        "preserve_data": {"x": 1, "y": 2},
    }


check_session_compacting.semantics = Semantics.COLLECT  # type: ignore[attr-defined]


@chain
def check_tool_result() -> None:
    h = Harness()
    event = ev.ToolResultEvent(tool_name="read", content=[TextContent(text="raw")], details={"n": 1})
    assert h.emit("tool_result", event) is None

    seen: list[Any] = []

    def second(e: Any, c: Any) -> Any:
        seen.append(e.content)
        return {"isError": True}

    h.add("piko_tool_result", returns({"content": [{"type": "text", "text": "patched"}]}), "a")
    h.add("piko_tool_result", second, "b")
    h.add("piko_tool_result", returns(None), "c")
    patch = h.emit("tool_result", event)
    # replaced content drops the structured content (pi 1.6)
    assert patch == {"content": [TextContent(text="patched")], "structured_content": None, "is_error": True}
    assert seen == [[TextContent(text="patched")]]
    assert event.details == {"n": 1} and event.is_error is True


def check_resources_discover() -> None:
    h = Harness()
    event = ev.ResourcesDiscoverEvent(cwd="/w", reason="startup")
    assert h.emit("resources_discover", event) == {"skill_paths": [], "prompt_paths": [], "theme_paths": []}
    h.add("piko_resources_discover", returns({"skillPaths": ["/s1"], "promptPaths": ["/p1"]}), "a")
    h.add("piko_resources_discover", returns({"skill_paths": ["/s2"], "theme_paths": ["/t"]}), "b")
    assert h.emit("resources_discover", event) == {
        "skill_paths": [("/s1", "src:a"), ("/s2", "src:b")],
        "prompt_paths": [("/p1", "src:a")],
        "theme_paths": [("/t", "src:b")],
    }


check_resources_discover.semantics = Semantics.COLLECT  # type: ignore[attr-defined]


def fallback_case(event: Any) -> Callable[[], None]:
    """The first handler answering ``True`` wins; raising ones are skipped; none gives ``False``."""

    def check() -> None:
        name = event.TYPE
        hook = f"piko_{name}"
        h = Harness()
        assert h.emit(name, event) is False
        h.add(hook, raises(PermissionError("helper missing")), "broken")
        h.add(hook, returns(False), "declines")
        h.add(hook, returns("yes"), "not-true")
        assert h.emit(name, event) is False
        h.add(hook, returns(True), "writer")
        h.add(hook, returns(True), "late")
        h.calls.clear()
        assert h.emit(name, event) is True
        assert h.calls == ["broken", "declines", "not-true", "writer"]

    check.semantics = Semantics.FIRST  # type: ignore[attr-defined]
    return check


_COMPACTION = {"summary": "s", "first_kept_entry_id": "e1", "tokens_before": 10}

EVENT_CASES: dict[str, Callable[[], None]] = {
    # session lifecycle
    "piko_project_trust": check_project_trust,
    "piko_session_start": notify_case(ev.SessionStartEvent(reason="startup")),
    "piko_session_before_switch": cancel_case(
        ev.SessionBeforeSwitchEvent(reason="resume", target_session_file="/s")
    ),
    "piko_session_switch": notify_case(ev.SessionSwitchEvent(reason="new")),
    "piko_session_before_fork": cancel_case(
        ev.SessionBeforeForkEvent(entry_id="e1"), {"skip_conversation_restore": True}
    ),
    "piko_session_fork": notify_case(ev.SessionForkEvent(previous_session_file="/old")),
    "piko_session_before_compact": cancel_case(ev.SessionBeforeCompactEvent(), {"compaction": _COMPACTION}),
    "piko_session_compact": notify_case(ev.SessionCompactEvent(from_extension=True)),
    "piko_session_before_tree": cancel_case(ev.SessionBeforeTreeEvent(), {"summary": {"summary": "branch"}}),
    "piko_session_tree": notify_case(ev.SessionTreeEvent(new_leaf_id="n", old_leaf_id="o")),
    "piko_session_shutdown": notify_case(ev.SessionShutdownEvent(reason="quit")),
    # prompt and turn lifecycle
    "piko_input": check_input,
    "piko_before_agent_start": check_before_agent_start,
    "piko_context": check_context,
    "piko_before_provider_request": check_before_provider_request,
    "piko_after_provider_response": notify_case(
        ev.AfterProviderResponseEvent(status=429, headers={"retry-after": "1"})
    ),
    "piko_agent_start": notify_case(ev.AgentStartEvent()),
    "piko_agent_end": notify_case(ev.AgentEndEvent(messages=[])),
    "piko_turn_start": notify_case(ev.TurnStartEvent(turn_index=0, timestamp=1)),
    "piko_turn_end": notify_case(ev.TurnEndEvent(turn_index=0)),
    "piko_message_start": notify_case(ev.MessageStartEvent(message=UserMessage(content="x"))),
    "piko_message_update": notify_case(ev.MessageUpdateEvent()),
    "piko_message_end": check_message_end,
    "piko_assistant_message": check_assistant_message,
    # tools
    "piko_tool_call": check_tool_call,
    "piko_tool_result": check_tool_result,
    "piko_tool_execution_start": notify_case(ev.ToolExecutionStartEvent(tool_name="read", args={})),
    "piko_tool_execution_update": notify_case(ev.ToolExecutionUpdateEvent(tool_name="bash")),
    "piko_tool_execution_end": notify_case(ev.ToolExecutionEndEvent(tool_name="read", is_error=True)),
    # model, commands, resources
    "piko_model_select": notify_case(ev.ModelSelectEvent(source="cycle")),
    "piko_thinking_level_select": notify_case(ev.ThinkingLevelSelectEvent(level="high")),
    "piko_user_bash": first_case(
        ev.UserBashEvent(command="ls", cwd="/"),
        {"result": {"output": "x", "exitCode": 0, "cancelled": False}},
    ),
    "piko_resources_discover": check_resources_discover,
    # reliability
    "piko_auto_compaction_start": notify_case(ev.AutoCompactionStartEvent(reason="overflow")),
    "piko_auto_compaction_end": notify_case(ev.AutoCompactionEndEvent(aborted=True)),
    "piko_auto_retry_start": notify_case(ev.AutoRetryStartEvent(attempt=1, delay_ms=2000)),
    "piko_auto_retry_end": notify_case(ev.AutoRetryEndEvent(success=True, attempt=2)),
    "piko_extension_error": notify_case(
        ev.ExtensionErrorEvent(extension_path="/x.py", event="input", error="e")
    ),
    # declared for subscription (extensions.md section 8, pi 1.6)
    "piko_agent_settled": notify_case(ev.AgentSettledEvent()),
    "piko_session_info_changed": notify_case(ev.SessionInfoChangedEvent(name="n")),
    "piko_session_stop": check_session_stop,
    "piko_mcp_notification": notify_case(ev.McpNotificationEvent(server="s", method="m")),
    "piko_mcp_servers_change": notify_case(ev.McpServersChangeEvent(servers=[{"name": "x"}])),
    "piko_session_compacting": check_session_compacting,
    "piko_before_provider_headers": notify_case(ev.BeforeProviderHeadersEvent(headers={"x": "1"})),
    "piko_context_with_system": check_context_with_system,
    "piko_ui_prompt_start": notify_case(ev.UiPromptStartEvent(method="confirm")),
    "piko_ui_prompt_end": notify_case(ev.UiPromptEndEvent(method="confirm", cancelled=True)),
    "piko_cache_warming_decision": notify_case(ev.CacheWarmingDecisionEvent(action="stop")),
    "piko_tool_approval_requested": notify_case(ev.ToolApprovalRequestedEvent(tool_name="bash")),
    "piko_tool_approval_resolved": notify_case(ev.ToolApprovalResolvedEvent(tool_name="bash", approved=True)),
    "piko_plan_review_requested": notify_case(ev.PlanReviewRequestedEvent(review_id="r")),
    "piko_plan_review_resolved": notify_case(ev.PlanReviewResolvedEvent(review_id="r", choice="keep")),
    "piko_before_subagent_spawn": notify_case(ev.BeforeSubagentSpawnEvent(agent="explore")),
    "piko_retry_fallback_applied": notify_case(ev.RetryFallbackAppliedEvent(from_model="a", to_model="b")),
    "piko_retry_fallback_succeeded": notify_case(ev.RetryFallbackSucceededEvent(model="b")),
    "piko_ttsr_triggered": notify_case(ev.TtsrTriggeredEvent()),
    "piko_todo_reminder": notify_case(ev.TodoReminderEvent(attempt=1)),
    "piko_goal_updated": notify_case(ev.GoalUpdatedEvent(goal="g")),
    "piko_credential_disabled": notify_case(ev.CredentialDisabledEvent(provider="p")),
    "piko_user_python": first_case(ev.UserPythonEvent(code="1+1"), {"result": {"output": "2"}}),
    # services fired through the dispatcher
    "piko_compaction_prepare": first_case(
        ev.CompactionRequest(reason="threshold"), {"first_kept_entry_id": "e9"}
    ),
    "piko_summarize_branch": first_case(
        ev.BranchSummaryRequest(), {"summary": "left a branch", "details": None}
    ),
    "piko_compact": first_case(ev.CompactionRequest(), _COMPACTION),
    "piko_export_html": first_case(ev.ExportRequest(output_path="/tmp/x.html"), "/tmp/x.html"),
    "piko_file_write_fallback": fallback_case(ev.FileWriteRequest(dst="/etc/hosts", content="x")),
    "piko_file_delete_fallback": fallback_case(ev.FileDeleteRequest(dst="/etc/hosts")),
    "piko_workspace_read_text": first_case(ev.WorkspaceReadRequest(path="/w/a.txt"), "held text"),
    "piko_workspace_write_text": fallback_case(ev.WorkspaceWriteRequest(path="/w/a.txt", content="x")),
}


def test_every_dispatched_event_has_a_semantics_case() -> None:
    assert set(EVENT_CASES) == {f"piko_{name}" for name in SEMANTICS}


@pytest.mark.parametrize("hook", sorted(EVENT_CASES))
def test_event_semantics(hook: str) -> None:
    case = EVENT_CASES[hook]
    assert case.semantics is SEMANTICS[hook.removeprefix("piko_")]  # type: ignore[attr-defined]
    case()


def test_event_classes_match_their_names() -> None:
    pm = PikoPluginManager()
    for name in SEMANTICS:
        if getattr(pm.hook, f"piko_{name}").spec.argnames[0] == "request":
            continue  # service hooks get request objects, not events
        cls = ev.EVENT_CLASSES[name]
        assert cls.TYPE == name
        cls()  # every event can be built with defaults
