"""The async dispatcher: order, awaiting, budgets, errors, and the semantics of every event.

``EVENT_CASES`` has one row per event hook (a meta-test checks it covers ``SEMANTICS``); each
row is a test of that event's semantics with real handlers registered on a real plugin manager.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from piko.data import events as ev
from piko.data.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from piko.platform.dispatch import Dispatcher, normalize_result, result_field
from piko.platform.manager import PikoPluginManager
from piko.platform.markers import hookimpl
from piko.platform.semantics import Semantics, declared
from piko.platform.tracing import Tracer

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

SEMANTICS = {name: spec.semantics for name, spec in declared().items()}


class Harness:
    """A plugin manager, a dispatcher over it, and a log of which handler ran."""

    def __init__(self, budget_ms: float = 30000.0) -> None:
        self.pm = PikoPluginManager()
        self.errors: list[ev.ExtensionErrorEvent] = []
        self.dispatcher = Dispatcher(self.pm, budget_ms=lambda name: budget_ms, sources=lambda p: f"src:{p}")
        self.dispatcher.error_listeners.append(self.errors.append)
        self.calls: list[str] = []

    def add(self, hook: str, fn: Callable[[Any, Any], Any], name: str | None = None, **opts: Any) -> str:
        """Register a plugin whose ``hook`` implementation logs its name and returns ``fn(first, ctx)``."""
        plugin_name = name or f"p{len(self.pm.list_name_plugin())}"
        spec_args = tuple(getattr(self.pm.hook, hook).spec.argnames)
        calls = self.calls

        if spec_args[0] == "request":

            def impl(request: Any, ctx: Any) -> Any:
                calls.append(plugin_name)
                return fn(request, ctx)

        else:

            def impl(event: Any, ctx: Any) -> Any:  # type: ignore[misc]
                calls.append(plugin_name)
                return fn(event, ctx)

        self.pm.register(SimpleNamespace(**{hook: hookimpl(**opts)(impl)}), plugin_name)
        return plugin_name

    def emit(self, name: str, event: Any, ctx: Any = None) -> Any:
        return asyncio.run(self.dispatcher.emit(name, event, ctx))


def returns(value: Any) -> Callable[[Any, Any], Any]:
    return lambda event, ctx: value


def raises(exc: BaseException) -> Callable[[Any, Any], Any]:
    def handler(event: Any, ctx: Any) -> Any:
        raise exc

    return handler


def assistant(*blocks: Any) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), provider="faux", model="m")


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
    assert patch == {"content": [TextContent(text="patched")], "is_error": True}
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


# ---------------------------------------------------------------------------
# Walking handlers
# ---------------------------------------------------------------------------


def test_registration_order_then_tryfirst_and_trylast() -> None:
    h = Harness()
    h.add("piko_agent_start", returns(None), "late", trylast=True)
    h.add("piko_agent_start", returns(None), "one")
    h.add("piko_agent_start", returns(None), "early", tryfirst=True)
    h.add("piko_agent_start", returns(None), "two")
    h.emit("agent_start", ev.AgentStartEvent())
    assert h.calls == ["early", "one", "two", "late"]


def test_coroutines_are_awaited_and_sync_handlers_may_return_awaitables() -> None:
    h = Harness()

    async def slow_transform(e: Any, c: Any) -> Any:
        await asyncio.sleep(0.01)
        return {"action": "transform", "text": e.text + " async"}

    async def later(text: str) -> Any:
        return {"action": "transform", "text": text + " awaitable"}

    h.add("piko_input", slow_transform)
    h.add("piko_input", lambda e, c: later(e.text))
    assert h.emit("input", ev.InputEvent(text="x"))["text"] == "x async awaitable"


def test_implementations_may_take_fewer_arguments() -> None:
    pm = PikoPluginManager()
    seen: list[Any] = []

    class OnlyEvent:
        @hookimpl
        def piko_turn_start(self, event: Any) -> None:
            seen.append(("event", event.turn_index))

    class OnlyCtx:
        @hookimpl
        def piko_turn_start(self, ctx: Any) -> None:
            seen.append(("ctx", ctx))

    class Nothing:
        @hookimpl
        def piko_turn_start(self) -> None:
            seen.append(("nothing",))

    class Reversed:
        @hookimpl
        def piko_turn_start(self, ctx: Any, event: Any) -> None:
            seen.append(("reversed", ctx, event.turn_index))

    for i, plugin in enumerate((OnlyEvent(), OnlyCtx(), Nothing(), Reversed())):
        pm.register(plugin, f"p{i}")
    asyncio.run(Dispatcher(pm).emit("turn_start", ev.TurnStartEvent(turn_index=3), "CTX"))
    assert seen == [("event", 3), ("ctx", "CTX"), ("nothing",), ("reversed", "CTX", 3)]


def test_handler_list_is_cached_until_the_plugin_set_changes() -> None:
    h = Harness()
    assert not h.dispatcher.has_handlers("agent_end")
    first = h.add("piko_agent_end", returns(None))
    assert h.dispatcher.has_handlers("agent_end")
    assert h.dispatcher.handlers("agent_end") is h.dispatcher.handlers("agent_end")
    h.pm.unregister(name=first)
    assert not h.dispatcher.has_handlers("agent_end")
    h.add("piko_agent_end", returns(None), "blocked-later")
    h.pm.set_blocked("blocked-later")
    assert not h.dispatcher.has_handlers("agent_end")


def test_unknown_event_name_has_no_handlers() -> None:
    h = Harness()
    assert h.dispatcher.handlers("no_such_event") == []
    assert h.emit("no_such_event", object()) is None


def test_results_may_be_objects_or_camel_case_mappings() -> None:
    assert normalize_result({"systemPrompt": "x", "skipConversationRestore": True}) == {
        "system_prompt": "x",
        "skip_conversation_restore": True,
    }
    assert normalize_result(SimpleNamespace(block=True, reason="r", _private=1)) == {
        "block": True,
        "reason": "r",
    }
    assert normalize_result(ev.AgentEndEvent(messages=[], error="e")) == {
        "messages": [], "error": "e", "will_retry": False,
    }  # fmt: skip
    assert normalize_result(None) is None
    assert normalize_result(5) == {"value": 5}
    assert result_field({"isError": True}, "is_error") is True
    assert result_field(None, "x", "default") == "default"

    h = Harness()
    h.add("piko_tool_call", returns(SimpleNamespace(block=True, reason="as an object")))
    assert h.emit("tool_call", ev.ToolCallEvent(tool_name="x")) == {"block": True, "reason": "as an object"}


# ---------------------------------------------------------------------------
# Errors and budgets
# ---------------------------------------------------------------------------


def test_raising_handler_is_reported_as_extension_error_and_the_walk_goes_on() -> None:
    h = Harness()
    reported: list[ev.ExtensionErrorEvent] = []
    h.add("piko_extension_error", lambda e, c: reported.append(e), "watcher")
    h.add("piko_before_provider_request", raises(KeyError("model")), "broken")
    h.add("piko_before_provider_request", returns({"patched": True}), "fine")
    assert h.emit("before_provider_request", ev.BeforeProviderRequestEvent(payload={})) == {"patched": True}
    (error,) = reported
    assert (error.extension_path, error.event, error.error) == (
        "src:broken",
        "before_provider_request",
        "'model'",
    )
    assert error.stack is not None and "KeyError" in error.stack
    assert h.errors == reported  # error listeners hear it too


def test_overrunning_handler_is_reported_and_skipped() -> None:
    h = Harness(budget_ms=50)

    async def hang(e: Any, c: Any) -> Any:
        await asyncio.sleep(10)

    h.add("piko_context", hang, "slow")
    h.add("piko_context", returns({"messages": []}), "fast")
    assert h.emit("context", ev.ContextEvent(messages=[UserMessage(content="x")])) == []
    (error,) = h.errors
    assert (error.extension_path, error.event) == ("src:slow", "context")
    assert error.error == "handler did not finish within its 0.05 s budget"
    assert error.stack is None


def test_tool_call_fails_closed_when_a_handler_raises() -> None:
    h = Harness()
    h.add("piko_tool_call", raises(RuntimeError("policy server down")), "policy")
    h.add("piko_tool_call", returns(None), "after")
    result = h.emit("tool_call", ev.ToolCallEvent(tool_name="bash", input={"command": "ls"}))
    assert result == {"block": True, "reason": "Blocked: the tool_call handler of src:policy failed"}
    assert h.calls == ["policy"]
    assert h.errors[0].error == "policy server down"


def test_tool_call_fails_closed_when_a_handler_overruns() -> None:
    h = Harness(budget_ms=30)

    async def hang(e: Any, c: Any) -> Any:
        await asyncio.sleep(10)

    h.add("piko_tool_call", hang, "slow-policy")
    result = h.emit("tool_call", ev.ToolCallEvent(tool_name="bash"))
    assert result["block"] is True
    assert "slow-policy" in result["reason"]
    assert h.errors[0].error == "handler did not finish within its 0.03 s budget"


def test_a_failing_extension_error_handler_is_logged_not_re_dispatched(capsys) -> None:
    h = Harness()
    h.add("piko_extension_error", raises(RuntimeError("error handler broke")), "bad-watcher")
    h.add("piko_agent_start", raises(RuntimeError("first failure")), "broken")
    h.emit("agent_start", ev.AgentStartEvent())
    err = capsys.readouterr().err
    assert "piko: extension_error handler of src:bad-watcher failed: error handler broke" in err
    assert [e.error for e in h.errors] == ["first failure"]


def test_a_failing_error_listener_does_not_hide_the_error(capsys) -> None:
    h = Harness()

    def broken_listener(error: Any) -> None:
        raise RuntimeError("listener broke")

    h.dispatcher.error_listeners.insert(0, broken_listener)
    h.add("piko_agent_start", raises(RuntimeError("boom")), "broken")
    h.emit("agent_start", ev.AgentStartEvent())
    assert "piko: error listener failed: listener broke" in capsys.readouterr().err
    assert [e.error for e in h.errors] == ["boom"]


def test_budgets_come_from_settings(env, only_site, app_factory) -> None:
    env.write(
        "agent/settings.json",
        '{"extensionHandlers": {"timeoutMs": 40, "toolCallTimeoutMs": 60, "shutdownTimeoutMs": 80}}',
    )
    env.write(
        "exts/slow.py",
        """
        import asyncio

        def activate(pi):
            async def hang(event, ctx):
                await asyncio.sleep(10)
            for name in ("agent_start", "tool_call", "session_shutdown"):
                pi.on(name, hang)
        """,
    )
    from piko.app.application import BootOptions

    app = app_factory().boot(BootOptions(extensions=[str(env.root / "exts" / "slow.py")]))
    errors: list[ev.ExtensionErrorEvent] = []
    app.dispatcher.error_listeners.append(errors.append)

    async def fire() -> Any:
        await app.dispatcher.emit("agent_start", ev.AgentStartEvent())
        result = await app.dispatcher.emit("tool_call", ev.ToolCallEvent(tool_name="bash"))
        await app.dispatcher.emit("session_shutdown", ev.SessionShutdownEvent())
        return result

    result = asyncio.run(fire())
    assert [e.error for e in errors] == [
        "handler did not finish within its 0.04 s budget",
        "handler did not finish within its 0.06 s budget",
        "handler did not finish within its 0.08 s budget",
    ]
    # extension errors name the extension's file
    assert {e.extension_path for e in errors} == {str(env.root / "exts" / "slow.py")}
    assert result == {
        "block": True,
        "reason": f"Blocked: the tool_call handler of {env.root / 'exts' / 'slow.py'} failed",
    }


def test_default_budgets() -> None:
    from piko.config.settings import DEFAULTS

    assert DEFAULTS["extensionHandlers"] == {
        "timeoutMs": 30000,
        "toolCallTimeoutMs": 30000,
        "shutdownTimeoutMs": 2000,
    }
    assert Dispatcher(PikoPluginManager())._budget_ms("anything") == 30000.0


def test_dispatched_events_are_traced() -> None:
    h = Harness()
    stream = io.StringIO()
    h.dispatcher.tracer = Tracer(stream)
    h.add("piko_tool_call", returns({"block": True, "reason": "no"}), "guard")
    h.add("piko_agent_start", raises(RuntimeError("bad")), "broken")
    h.emit("tool_call", ev.ToolCallEvent(tool_name="bash"))
    h.emit("agent_start", ev.AgentStartEvent())
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[piko-trace] +") and "event tool_call -> guard (" in lines[0]
    assert lines[0].endswith("{'block': True, 'reason': 'no'}")
    assert "event agent_start -> broken (" in lines[1] and lines[1].endswith("'raised RuntimeError: bad'")


# ---------------------------------------------------------------------------
# Plain-function handlers run off the loop; aborts cancel; garbage fails closed
# ---------------------------------------------------------------------------


def _blocking(release: threading.Event, seen: list[str] | None = None) -> Callable[[Any, Any], Any]:
    def handler(event: Any, ctx: Any) -> Any:
        if seen is not None:
            seen.append("started")
        release.wait(60)  # a handler that blocks (released at the end of the test)
        return {"block": False}

    return handler


def test_a_blocking_plain_handler_is_held_to_its_budget_and_fails_closed() -> None:
    release = threading.Event()
    h = Harness(budget_ms=50)
    h.add("piko_tool_call", _blocking(release), "stuck-policy")
    try:
        result = asyncio.run(
            asyncio.wait_for(h.dispatcher.emit("tool_call", ev.ToolCallEvent(tool_name="bash")), 20)
        )
    finally:
        release.set()
    assert result == {"block": True, "reason": "Blocked: the tool_call handler of src:stuck-policy failed"}
    assert [e.error for e in h.errors] == ["handler did not finish within its 0.05 s budget"]


def test_the_event_loop_keeps_running_while_a_plain_handler_blocks() -> None:
    """The handler waits for something only the loop does: inline, this would never end."""
    release = threading.Event()
    h = Harness()
    h.add("piko_input", lambda e, c: release.wait(20) and {"text": "after the loop ran"}, "waiter")

    async def scenario() -> Any:
        asyncio.get_running_loop().call_later(0.05, release.set)
        return await h.dispatcher.emit("input", ev.InputEvent(text="x"))

    assert asyncio.run(asyncio.wait_for(scenario(), 20))["text"] == "after the loop ran"


@pytest.mark.parametrize("kind", ["async", "plain"])
def test_abort_cancels_a_pending_tool_call_handler_at_once(kind: str) -> None:
    from piko.lib.abort import AbortController

    release = threading.Event()
    cancelled: list[str] = []

    async def hang(e: Any, c: Any) -> Any:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append("cancelled")
            raise

    h = Harness(budget_ms=60000)  # abort must not wait for the budget
    h.add("piko_tool_call", hang if kind == "async" else _blocking(release), "slow-policy")
    controller = AbortController()

    async def scenario() -> Any:
        asyncio.get_running_loop().call_later(0.1, controller.abort)
        event = ev.ToolCallEvent(tool_name="bash")
        return await h.dispatcher.emit("tool_call", event, signal=controller.signal)

    try:
        result = asyncio.run(asyncio.wait_for(scenario(), 20))
    finally:
        release.set()
    assert result == {"block": True, "reason": "Operation aborted"}
    assert h.errors == []  # an abort is no fault of the extension
    if kind == "async":
        assert cancelled == ["cancelled"]


@pytest.mark.parametrize(
    ("garbage", "problem"),
    [
        ("allow", "a str ('allow'), not None or {block, reason, input, additional_context}"),
        (7, "a int (7), not None or {block, reason, input, additional_context}"),
        (True, "a bool (True), not None or {block, reason, input, additional_context}"),
        ({"blocked": True}, "unknown fields blocked, not None or {block, reason, input, additional_context}"),
        ({"block": "yes"}, "block as a str, not None or {block, reason, input, additional_context}"),
    ],
)
def test_a_tool_call_handler_returning_garbage_fails_closed_naming_it(garbage: Any, problem: str) -> None:
    h = Harness()
    h.add("piko_tool_call", returns(garbage), "confused")
    h.add("piko_tool_call", returns(None), "after")
    result = h.emit("tool_call", ev.ToolCallEvent(tool_name="bash"))
    assert result == {
        "block": True,
        "reason": f"Blocked: the tool_call handler of src:confused returned {problem}",
    }
    assert [(e.extension_path, e.error) for e in h.errors] == [
        ("src:confused", f"tool_call handler returned {problem}")
    ]
    assert h.calls == ["confused"]


@pytest.mark.parametrize("garbage", ["be brief", {"message": 5}, {"messages": ["hi"]}, {"systemPrompt": 3}])
def test_a_before_agent_start_result_of_the_wrong_type_names_the_extension(garbage: Any) -> None:
    h = Harness()
    h.add("piko_before_agent_start", returns(garbage), "confused")
    h.add("piko_before_agent_start", returns({"system_prompt": "kept"}), "fine")
    event = ev.BeforeAgentStartEvent(prompt="p", system_prompt="base")
    assert h.emit("before_agent_start", event) == {"system_prompt": "kept", "messages": []}
    (error,) = h.errors
    assert error.extension_path == "src:confused" and error.event == "before_agent_start"
    assert error.error.startswith("before_agent_start handler returned ") and error.error.endswith(
        "; ignored"
    )


def test_stream_rate_plain_handlers_run_on_the_loop_thread() -> None:
    """A thread hop per delta would cost more than the handlers, and the message is built on the loop."""
    threads: list[int] = []
    h = Harness()
    h.add("piko_message_update", lambda e, c: threads.append(threading.get_ident()), "cheap")
    h.emit("message_update", SimpleNamespace())
    assert threads == [threading.get_ident()]


@pytest.mark.parametrize("how", ["sleeps", "spins", "swallows exceptions"])
def test_a_stream_rate_plain_handler_holding_the_loop_is_stopped_and_silenced(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from piko.platform import dispatch

    monkeypatch.setattr(dispatch, "INLINE_LIMIT_S", 0.2)
    calls: list[str] = []

    def hold(e: Any, c: Any) -> None:
        calls.append("held")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if how == "sleeps":
                time.sleep(30)
            elif how == "swallows exceptions":
                try:
                    time.sleep(30)
                except Exception:
                    continue
            # "spins": a pure Python loop

    h = Harness()
    h.add("piko_message_update", hold, "greedy")
    h.add("piko_message_update", lambda e, c: calls.append("next"), "fine")

    async def scenario() -> None:
        for _ in range(3):
            await h.dispatcher.emit("message_update", SimpleNamespace())

    asyncio.run(asyncio.wait_for(scenario(), 20))
    assert calls == ["held", "next", "next", "next"]
    assert [(e.extension_path, e.error) for e in h.errors] == [
        (
            "src:greedy",
            "handler held the event loop for more than 0.2 s and was stopped; it gets no more message_update events",
        )
    ]


def test_a_plain_handler_reaches_the_session_through_the_loop() -> None:
    """``ctx`` methods called from a handler's thread run on the event loop's thread."""
    loop_thread: list[int] = []

    class Ctx:
        def where(self) -> int:
            return threading.get_ident()

    h = Harness()
    h.add("piko_agent_start", lambda e, c: loop_thread.append(c.where()), "caller")

    async def scenario() -> int:
        await h.dispatcher.emit("agent_start", ev.AgentStartEvent(), Ctx())
        return threading.get_ident()

    assert asyncio.run(scenario()) == loop_thread[0]


def test_waiting_on_the_user_does_not_spend_the_budget_but_handler_time_does() -> None:
    from piko.platform.dispatch import paused_budget

    h = Harness(budget_ms=50)

    async def asks_then_decides(e: Any, c: Any) -> Any:
        with paused_budget():  # a dialog the user answers after four budgets
            await asyncio.sleep(0.2)
        return {"block": True, "reason": "user said no"}

    async def asks_then_dawdles(e: Any, c: Any) -> Any:
        with paused_budget():
            await asyncio.sleep(0.01)
        await asyncio.sleep(10)  # its own time overruns

    h.add("piko_tool_call", asks_then_decides, "gate")
    assert h.emit("tool_call", ev.ToolCallEvent(tool_name="bash", input={})) == {
        "block": True,
        "reason": "user said no",
    }
    assert h.errors == []
    h2 = Harness(budget_ms=50)
    h2.add("piko_tool_call", asks_then_dawdles, "slow")
    assert h2.emit("tool_call", ev.ToolCallEvent(tool_name="bash", input={}))["block"] is True
    assert h2.errors[0].error == "handler did not finish within its 0.05 s budget"


def test_returning_false_from_a_before_event_cancels_it() -> None:
    h = Harness()
    h.add("piko_session_before_switch", returns(False), "refuses")
    h.add("piko_session_before_switch", returns(None), "later")
    assert h.emit("session_before_switch", ev.SessionBeforeSwitchEvent(reason="new")) == {"cancel": True}
    assert h.calls == ["refuses"]


def test_session_shutdown_handlers_run_concurrently() -> None:
    """The first handler finishes only once the second one ran: in a sequential walk it would overrun."""
    h = Harness(budget_ms=5000)
    second_ran = asyncio.Event()

    async def waits_for_the_other(e: Any, c: Any) -> None:
        await second_ran.wait()

    async def sets(e: Any, c: Any) -> None:
        second_ran.set()

    h.add("piko_session_shutdown", waits_for_the_other, "first")
    h.add("piko_session_shutdown", sets, "second")
    h.emit("session_shutdown", ev.SessionShutdownEvent(reason="quit"))
    assert h.errors == [] and h.calls == ["first", "second"]
