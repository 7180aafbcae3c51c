"""The async dispatcher: order, awaiting, budgets, errors, plain functions off the loop.

The semantics of each event are tested in ``test_dispatch_semantics.py``.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from support.dispatch_harness import Harness
from support.dispatch_harness import raises
from support.dispatch_harness import returns

from piko.data import events as ev
from piko.data.messages import UserMessage
from piko.platform.dispatch import Dispatcher
from piko.platform.dispatch import normalize_result
from piko.platform.dispatch import result_field
from piko.platform.manager import PikoPluginManager
from piko.platform.markers import hookimpl
from piko.platform.tracing import Tracer

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
        "messages": [], "session_id": "", "error": "e", "will_retry": False,
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
