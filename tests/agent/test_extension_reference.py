"""Extensions written straight from the extension reference (``extensions.md``), run by a real ``pi``.

Each test writes the extension a pi user would write from the reference, in Python (snake_case
names, pi's option objects as dicts), and runs it through ``pi`` against the scripted server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import command_provider
from agent_harness import json_lines
from agent_harness import run_extension
from agent_harness import with_record

from piko.testing import text_turn
from piko.testing import tool_turn

# The reference's "Quick start", in Python: pi's option objects passed as dicts, camelCase keys.
QUICK_START = with_record("""
def activate(pi):
    pi.set_label("Safety + Utilities")

    async def on_start(_event, ctx):
        ctx.ui.notify(f"Extension loaded in {ctx.cwd}", "info")
    pi.on("session_start", on_start)

    async def gate(event, ctx):
        command = event.input.get("command")
        if event.tool_name == "bash" and isinstance(command, str) and "rm -rf" in command:
            return {"block": True, "reason": "Blocked by extension policy"}
    pi.on("tool_call", gate)

    async def execute(_tool_call_id, params, _signal, _on_update, _ctx):
        return {"content": [{"type": "text", "text": f"Hello, {params['name']}"}],
                "details": {"greeted": params["name"]}}

    pi.register_tool({
        "name": "hello_extension",
        "label": "Hello Extension",
        "description": "Return a greeting",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        "execute": execute,
        "renderCall": lambda args, options, theme: None,
        "renderResult": lambda result, options, theme, args: None,
        "hidden": False,
        "defaultInactive": False,
        "deferrable": False,
        "approval": "exec",
    })

    async def hello(args, ctx):
        record(command="hello-ext", args=args, pending=ctx.has_pending_messages())
    pi.register_command("hello-ext", {"description": "Show queue state", "handler": hello})
    pi.register_shortcut("ctrl+shift+h", {"description": "Say hi", "handler": lambda ctx: None})
    pi.register_flag("plan", {"description": "Start in plan mode", "type": "boolean", "default": False})
    pi.on("session_start", lambda event, ctx: record(flag=pi.get_flag("plan")))
""")


def test_quick_start_object_forms_register_a_tool_the_model_can_call(pi_env: Any, tmp_path: Path) -> None:
    turns = [tool_turn("hello_extension", {"name": "Ada"}), text_turn("done")]
    env, done, rows = run_extension(pi_env, tmp_path, QUICK_START, turns, "--mode", "json", "greet Ada")
    assert "failed to load" not in done.stderr
    assert "hello_extension" in env.tool_names(0)
    tool = next(
        t["function"]
        for t in env.server.requests[0]["body"]["tools"]
        if t["function"]["name"] == "hello_extension"
    )
    assert tool["description"] == "Return a greeting"  # not the options object
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["result"]["content"][0]["text"] == "Hello, Ada"
    assert end["result"]["details"] == {"greeted": "Ada"}
    assert {"flag": False} in rows


def test_quick_start_command_object_runs_its_handler(pi_env: Any, tmp_path: Path) -> None:
    env, _done, rows = run_extension(pi_env, tmp_path, QUICK_START, [], "-p", "/hello-ext some args")
    assert {"command": "hello-ext", "args": "some args", "pending": False} in rows
    assert env.server.requests == []  # the command ran; its options never reached the model


def test_flag_object_form_reads_the_command_line(pi_env: Any, tmp_path: Path) -> None:
    _env, _done, rows = run_extension(pi_env, tmp_path, QUICK_START, [], "--plan", "-p", "/hello-ext")
    assert {"flag": True} in rows


def test_unknown_tool_field_is_one_warning_not_a_failed_load(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    pi.register_tool({"name": "t1", "description": "d", "execute": lambda *a: "ok",
                      "futureField": 1, "anotherOne": 2})
    pi.register_command("c1", {"description": "d", "handler": lambda a, c: None, "someOption": True})
"""
    env = pi_env([])
    ext = tmp_path / "future.py"
    ext.write_text(code)
    done = env.run("-e", str(ext), "plugins", "--json")
    data = json.loads(done.stdout)
    row = next(p for p in data["plugins"] if p["name"] == "future")
    assert row["error"] is None
    assert {"piko_register_tools", "piko_register_commands"} <= set(row["hooks"])
    tool_lines = [d for d in data["diagnostics"] if "tool 't1'" in d]
    assert len(tool_lines) == 1 and "anotherOne, futureField" in tool_lines[0]
    assert any("command 'c1'" in d and "someOption" in d for d in data["diagnostics"])


def test_hidden_and_default_inactive_tools_wait_to_be_asked_for(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    pi.register_tool({"name": "shown", "description": "d", "execute": lambda *a: "ok"})
    pi.register_tool({"name": "secret", "description": "d", "execute": lambda *a: "ok", "hidden": True})
    pi.register_tool({"name": "later", "description": "d", "execute": lambda *a: "ok", "defaultInactive": True})
"""
    env, _done, _rows = run_extension(pi_env, tmp_path, code, [text_turn("ok")], "-p", "hi")
    names = env.tool_names(0)
    assert "shown" in names and "secret" not in names and "later" not in names


def test_unknown_event_names_warn_once_and_the_rest_loads(pi_env: Any, tmp_path: Path) -> None:
    code = """
import json, os
def activate(pi):
    pi.on("some_future_event", lambda event, ctx: None)
    pi.on("some_future_event", lambda event, ctx: None)
    pi.on("agent_end", lambda event, ctx: open(os.environ["PIKO_TEST_LOG"], "a").write(json.dumps({"end": 1}) + "\\n"))
"""
    _env, done, rows = run_extension(pi_env, tmp_path, code, [text_turn("ok")], "-p", "hi")
    assert done.stderr.count("some_future_event") == 1
    assert rows == [{"end": 1}]


def test_omp_branch_event_names_reach_the_fork_events() -> None:
    from piko.extensions.extension_api import EVENT_ALIASES
    from piko.extensions.extension_api import ExtensionAPI

    pi = ExtensionAPI("x")
    pi.on("session_before_branch", lambda event, ctx: None)
    pi.on("session_branch", lambda event, ctx: None)
    assert set(pi._handlers) == {EVENT_ALIASES["session_before_branch"], EVENT_ALIASES["session_branch"]}


# "Session and state patterns" and "Session-entry roles" of the reference, in Python.
BRANCH_WALKER = with_record("""
def activate(pi):
    def on_result(event, ctx):
        texts = [block.text for block in event.content if block.type == "text"]
        keyed = [block["text"] for block in event.content if block["type"] == "text"]
        record(result_texts=texts, keyed=keyed)
    pi.on("tool_result", on_result)

    def walk(event, ctx):
        pi.append_entry("com.example.state", {"n": 1})
        seen = []
        for entry in ctx.session_manager.get_branch():
            if entry.type == "custom" and entry.custom_type == "com.example.state":
                seen.append(("custom", entry.data))
            elif entry["type"] == "message":
                message = entry.message
                if message.role == "assistant":
                    calls = [b.name for b in message.content if b.type == "toolCall"]
                    seen.append(("assistant", calls))
                elif message["role"] == "toolResult":
                    seen.append(("toolResult", message.tool_call_id != "", message["toolName"]))
                else:
                    seen.append((message.role,))
        record(seen=seen)
    pi.on("agent_end", walk)
""")


def test_branch_loops_and_block_checks_of_the_reference_work(pi_env: Any, tmp_path: Path) -> None:
    turns = [tool_turn("bash", {"command": "echo hi"}), text_turn("done")]
    _env, _done, rows = run_extension(pi_env, tmp_path, BRANCH_WALKER, turns, "-p", "go")
    assert {"result_texts": ["hi\n"], "keyed": ["hi\n"]} in rows
    seen = next(row["seen"] for row in rows if "seen" in row)
    assert seen == [
        ["user"], ["assistant", ["bash"]], ["toolResult", True, "bash"], ["assistant", []],
        ["custom", {"n": 1}],
    ]  # fmt: skip


UI_WALK = Path(__file__).resolve().parents[1] / "support" / "ui_walk_extension.py"


def ui_walk_failures(log: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The failed calls of a ``/uiwalk`` run, and its closing ``{"mode", "has_ui"}`` row."""
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    calls = [row for row in rows if "method" in row]
    assert len(calls) >= 30, rows
    return [row for row in calls if not row["ok"]], rows[-1]


def test_every_ui_method_of_the_reference_is_inert_in_print_and_json_modes(
    pi_env: Any, tmp_path: Path
) -> None:
    env = pi_env([])
    for mode in (["-p"], ["--mode", "json"]):
        log = tmp_path / f"walk-{mode[-1]}.jsonl"
        done = env.run("-e", str(UI_WALK), *mode, "/uiwalk", env={"PIKO_TEST_LOG": str(log)})
        assert done.returncode == 0, done.stderr
        failures, last = ui_walk_failures(log)
        assert failures == []
        assert last == {"mode": "print" if mode == ["-p"] else "json", "has_ui": False}


# "Handler context": ctx.agent, ctx.models, is_project_trusted, run_ephemeral_turn, managed timers.
CONTEXT_APIS = with_record("""
import asyncio

def activate(pi):
    pi.on("extension_error", lambda event, ctx: record(error_event=event.event, error=event.error))

    async def probe(args, ctx):
        record(agent=[ctx.agent.kind, ctx.agent.depth], trusted=ctx.is_project_trusted())
        current = ctx.models.current()
        record(current=current.id, resolved=ctx.models.resolve("mock/mock-1").id,
               missing=ctx.models.resolve("no-such-model-anywhere"), listed=[m.id for m in ctx.models.list()],
               same_family=ctx.models.family(current) == ctx.models.family(ctx.models.resolve("mock-1")))
        deltas = []
        result = await ctx.run_ephemeral_turn({"promptText": "a side question", "tools": False,
                                               "maxTokens": 64, "onTextDelta": deltas.append})
        record(reply=result.reply_text, keyed=result["replyText"], deltas="".join(deltas))

        fired = asyncio.Event()
        ctx.set_timeout(lambda word: (record(timeout=word), fired.set()), 10, "late")
        def broken():
            raise RuntimeError("tick failed")
        ticker = ctx.set_interval(broken, 5)
        cancelled = ctx.set_timeout(lambda: record(never=True), 10)
        ctx.clear_timer(cancelled)
        await asyncio.wait_for(fired.wait(), 10)
        while not os.path.exists(LOG) or "tick failed" not in open(LOG).read():
            await asyncio.sleep(0.01)
        ctx.clear_timer(ticker)
        ctx.set_interval(lambda: None, 60_000)  # left running: shutdown clears it
        record(timers_before_shutdown=len(ctx.app.extension_timers))

    pi.register_command("probe", {"description": "ctx APIs", "handler": probe})
""")


def test_context_apis_agent_models_side_turn_and_timers(pi_env: Any, tmp_path: Path) -> None:
    turns = [text_turn("the side answer")]
    env, _done, rows = run_extension(pi_env, tmp_path, CONTEXT_APIS, turns, "-p", "/probe")
    facts = {k: v for row in rows for k, v in row.items()}
    assert facts["agent"] == ["main", 0] and facts["trusted"] is True  # nothing in the project to protect
    assert facts["current"] == "mock-1" and facts["resolved"] == "mock-1" and facts["missing"] is None
    assert "mock-1" in facts["listed"] and facts["same_family"] is True
    assert facts["reply"] == facts["keyed"] == facts["deltas"] == "the side answer"
    assert env.server.requests[0]["body"]["messages"][-1]["content"] in (
        "a side question",
        [{"type": "text", "text": "a side question"}],
    )
    assert "tools" not in env.server.requests[0]["body"]
    assert (
        env.server.requests[0]["body"].get(
            "max_tokens", env.server.requests[0]["body"].get("max_completion_tokens")
        )
        == 64
    )
    assert facts["timeout"] == "late" and "never" not in facts
    assert {"error_event": "timer", "error": "tick failed"} in rows
    assert facts["timers_before_shutdown"] == 1
    assert not any("side question" in path.read_text() for path in env.sessions())  # not recorded


# Section 8 of the reference and pi 1.6's additions: every event can be subscribed to.
DECLARED_FOR_SUBSCRIPTION = [
    "piko_agent_settled", "piko_session_info_changed", "piko_session_stop", "piko_session_compacting",
    "piko_before_provider_headers", "piko_context_with_system", "piko_ui_prompt_start",
    "piko_ui_prompt_end", "piko_cache_warming_decision", "piko_tool_approval_requested",
    "piko_tool_approval_resolved", "piko_plan_review_requested", "piko_plan_review_resolved",
    "piko_before_subagent_spawn", "piko_retry_fallback_applied", "piko_retry_fallback_succeeded",
    "piko_ttsr_triggered", "piko_todo_reminder", "piko_goal_updated", "piko_credential_disabled",
    "piko_user_python", "piko_mcp_servers_change", "piko_mcp_notification",
]  # fmt: skip

SUBSCRIBER = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]
NAMES = %r

def activate(pi):
    for name in NAMES + ["session_before_branch", "session_branch", "session.compacting"]:
        pi.on(name, (lambda n: lambda event, ctx: open(LOG, "a").write(json.dumps({"event": n}) + "\\n"))(name))
    pi.on("agent_end", lambda event, ctx: pi.set_session_name("named by the extension"))
"""


def test_every_event_of_the_reference_is_subscribable_and_settled_and_info_fire(
    pi_env: Any, tmp_path: Path
) -> None:
    names = [name.removeprefix("piko_") for name in DECLARED_FOR_SUBSCRIPTION]
    _env, done, rows = run_extension(pi_env, tmp_path, SUBSCRIBER % names, [text_turn("ok")], "-p", "hi")
    assert "no such event" not in done.stderr
    fired = [row["event"] for row in rows]
    assert fired.count("agent_settled") == 1
    assert "session_info_changed" in fired


# "Message delivery semantics" and "External input interception".
REDIRECTING_INPUT = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def activate(pi):
    def on_input(event, ctx):
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"input": event.text, "source": event.source}) + "\\n")
        pi.send_user_message("[tagged] " + event.text)
        return {"action": "handled"}
    pi.on("input", on_input)
"""


def test_a_message_sent_by_an_input_handler_does_not_come_back_to_it(pi_env: Any, tmp_path: Path) -> None:
    env, _done, rows = run_extension(pi_env, tmp_path, REDIRECTING_INPUT, [text_turn("ok")], "-p", "hi")
    assert rows == [{"input": "hi", "source": "interactive"}]
    assert env.user_texts(0)[-1] == "[tagged] hi"


SENDER = """
def activate(pi):
    async def note(args, ctx):
        await pi.send_message("plain text " + args, {"triggerTurn": True})
    pi.register_command("note", {"description": "send a note", "handler": note})
    async def aside(args, ctx):
        await pi.send_message({"customType": "aside-note", "content": "aside " + args}, {"deliverAs": "aside"})
    pi.register_command("aside", {"description": "send an aside", "handler": aside})
"""


def test_send_message_text_keeps_its_content_and_options_objects_are_read(
    pi_env: Any, tmp_path: Path
) -> None:
    env, _done, _rows = run_extension(pi_env, tmp_path, SENDER, [text_turn("ok")], "-p", "/note hello")
    assert "plain text hello" in json.dumps(env.server.requests[0]["body"]["messages"])


def test_an_aside_sent_while_idle_starts_a_turn(pi_env: Any, tmp_path: Path) -> None:
    env, _done, _rows = run_extension(pi_env, tmp_path, SENDER, [text_turn("ok")], "-p", "/aside now")
    assert len(env.server.requests) == 1
    assert "aside now" in json.dumps(env.server.requests[0]["body"]["messages"])


# "Adding passive context after a tool call" and ctx.add_additional_context.
PASSIVE_CONTEXT = """
def activate(pi):
    pi.on("tool_call", lambda event, ctx: {"additionalContext": "call-context for " + event.tool_name})
    pi.on("tool_call", lambda event, ctx: {"additionalContext": "  call-context for " + event.tool_name + " "})
    pi.on("tool_result", lambda event, ctx: {"additionalContext": "result-context"})

    def lookup(tool_call_id, params, signal, on_update, ctx):
        ctx.add_additional_context("own-context")
        return "looked up"
    pi.register_tool({"name": "lookup", "description": "look up", "execute": lookup})
"""


def test_additional_context_reaches_the_next_request_after_the_results(pi_env: Any, tmp_path: Path) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo ran"}}},
                    {"tool_call": {"name": "lookup", "arguments": {}}}]},
        text_turn("done"),
    ]  # fmt: skip
    env, done, _rows = run_extension(pi_env, tmp_path, PASSIVE_CONTEXT, turns, "--mode", "json", "go")
    ends = [e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [False, False]  # additionalContext does not block
    messages = env.server.requests[1]["body"]["messages"]
    roles = [m["role"] for m in messages]
    first_tool = roles.index("tool")
    after = [json.dumps(m["content"]) for m in messages[first_tool + 2 :]]
    assert roles[first_tool : first_tool + 2] == ["tool", "tool"]
    assert len(after) == 2
    assert "result-context" in after[0] and "call-context for bash" in after[0]
    assert after[0].index("result-context") < after[0].index("call-context for bash")
    assert after[0].count("call-context for bash") == 1  # repeats ignoring surrounding space dropped
    assert "own-context" in after[1] and after[1].index("own-context") < after[1].index("result-context")


# Registrations for the terminal's drawing, service tiers, and tools registered in session_start.
LATE_AND_DISPLAY = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def activate(pi):
    pi.register_assistant_thinking_renderer(lambda context, theme: None)
    pi.register_composer_shape({"label": "Acme Dock", "style": {"id": "acme-dock"}})
    pi.register_entry_renderer("status-card", lambda entry, options, theme: None)
    pi.register_markdown_transformer(lambda markdown, context: markdown, {"messageTypes": ["changelog"]})
    pi.register_tool_renderer("bash", {"renderCall": lambda args, theme, context: None})
    pi.set_service_tier("openai", "flex")

    def start(event, ctx):
        pi.register_tool({"name": "late_tool", "description": "registered in session_start",
                          "execute": lambda *a: "late ok"})
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"tiers": pi.get_service_tiers(), "has_pi": hasattr(pi.pi, "hookimpl")}) + "\\n")
    pi.on("session_start", start)
"""


def test_tools_registered_in_session_start_are_active_and_display_registrations_load(
    pi_env: Any, tmp_path: Path
) -> None:
    turns = [tool_turn("late_tool", {}), text_turn("ok")]
    env, done, rows = run_extension(pi_env, tmp_path, LATE_AND_DISPLAY, turns, "--mode", "json", "go")
    assert "failed to load" not in done.stderr
    assert "late_tool" in env.tool_names(0)
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["result"]["content"][0]["text"] == "late ok"
    assert rows == [{"tiers": {"openai": "flex"}, "has_pi": True}]


# "Command-backed providers": options carry signal, cwd and the stable session id.
COMMAND_PROVIDER = command_provider(
    'f"cwd={options.cwd} session={bool(options.session_id)} signal={options.signal is not None}"',
    api="local-command-api",
    model_id="local-command-model",
)


def test_a_command_backed_provider_gets_cwd_session_id_and_signal(pi_env: Any, tmp_path: Path) -> None:
    model = ("local-command", "local-command-model")
    env, done, _rows = run_extension(
        pi_env, tmp_path, COMMAND_PROVIDER, [], "-p", "hi", name="command_provider.py", model=model
    )
    assert done.stdout.strip() == f"cwd={env.work} session=True signal=True"


COMPACT_CALLBACKS = with_record("""
def activate(pi):
    async def compact_now(args, ctx):
        task = ctx.compact({"customInstructions": "focus", "onComplete": lambda r: record(done=True),
                            "onError": lambda e: record(error=str(e))})
        try:
            await task
        except Exception:
            pass
    pi.register_command("compact-now", {"description": "compact", "handler": compact_now})
""")


def test_compact_options_object_calls_its_callbacks(pi_env: Any, tmp_path: Path) -> None:
    _env, _done, rows = run_extension(pi_env, tmp_path, COMPACT_CALLBACKS, [], "-p", "/compact-now")
    assert len(rows) == 1 and "error" in rows[0] and rows[0]["error"]  # nothing to compact yet
