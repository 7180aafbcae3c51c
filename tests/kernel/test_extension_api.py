"""The ``activate(pi)`` extension API: what a factory registers becomes one pluggy plugin."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from piko import ExtensionRuntimeNotInitializedError
from piko.app.application import App
from piko.app.application import BootOptions
from piko.data import events as ev
from piko.extensions.context import ExtensionContext
from piko.extensions.extension_api import ExtensionAPI
from piko.extensions.extension_api import adapt_handler
from piko.platform.semantics import declared
from piko.platform.semantics import subscribable_events

FULL_EXTENSION = """
import asyncio
from piko import hookimpl

calls = []
load_errors = []

@hookimpl
def piko_tool_call(event, ctx):
    calls.append("module hook")

def activate(pi):
    pi.set_label("Safety + Utilities")

    def guard(event, ctx):
        calls.append("guard")
        if "rm -rf" in event.input.get("command", ""):
            return {"block": True, "reason": "Blocked by extension policy"}

    async def late(event):
        await asyncio.sleep(0)
        calls.append("late")

    pi.on("tool_call", guard)
    pi.on("tool_call", late)
    pi.on("session_start", lambda: calls.append("no-arg handler"))

    pi.register_tool(
        name="hello_extension",
        label="Hello Extension",
        description="Return a greeting",
        parameters={"type": "object", "properties": {"name": {"type": "string"}}},
        execute=lambda tool_call_id, params, signal, on_update, ctx: {"content": [{"type": "text", "text": "Hello, " + params["name"]}]},
    )
    pi.register_command("hello-ext", description="Show queue state", handler=lambda args, ctx: "queue")
    pi.register_flag("plan", description="Plan before acting", type="boolean", default=False)
    pi.register_flag("persona", description="Persona name", type="string", default="pirate")
    pi.register_shortcut("ctrl+shift+h", description="Say hi", handler=lambda ctx: None)
    pi.register_provider("local-llm", {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions",
                         "apiKey": "LOCAL_KEY", "models": [{"id": "tiny", "contextWindow": 4096}]})
    pi.register_message_renderer("my-note", lambda message, options, theme: "note")
    pi.register_file_write_fallback(lambda request: True)
    pi.register_file_delete_fallback(lambda request, ctx: False)

    for action in (lambda: pi.send_message({"custom_type": "x", "content": "y"}),
                   lambda: pi.send_user_message("hi"), lambda: pi.append_entry("state", {}),
                   lambda: pi.set_session_name("n"), pi.get_session_name, pi.get_active_tools,
                   pi.get_all_tools, lambda: pi.set_active_tools(["read"]), pi.get_commands,
                   pi.get_thinking_level, lambda: pi.set_thinking_level("high"),
                   lambda: pi.set_label("entry-1", "label")):
        try:
            action()
        except Exception as exc:
            load_errors.append(type(exc).__name__ + ": " + str(exc))
"""


@pytest.fixture
def loaded(env, only_site, app_factory) -> tuple[App, Any, Path]:
    path = env.write("exts/full.py", FULL_EXTENSION)
    app = app_factory().boot(BootOptions(extensions=[str(path)]))
    return app, sys.modules["piko_extension_full"], path


def test_everything_registered_is_one_plugin(loaded) -> None:
    app, _module, _path = loaded
    info = app.pm.infos["full"]
    assert info.error is None and info.label == "Safety + Utilities"
    assert info.hooks == [
        "piko_file_delete_fallback",
        "piko_file_write_fallback",
        "piko_register_commands",
        "piko_register_flags",
        "piko_register_message_renderers",
        "piko_register_providers",
        "piko_register_shortcuts",
        "piko_register_tools",
        "piko_session_start",
        "piko_tool_call",
    ]
    assert len([p for n, p in app.pm.list_name_plugin() if n == "full"]) == 1

    tool = app.registries.tools.get("hello_extension")
    assert (tool.plugin, tool.label, tool.default_active) == ("full", "Hello Extension", True)
    result = tool.execute("id", {"name": "piko"}, None, None, None)
    assert result["content"][0]["text"] == "Hello, piko"
    assert app.registries.commands.get("hello-ext").handler("", None) == "queue"
    assert {f.name: f.default for f in app.registries.flags} == {"plan": False, "persona": "pirate"}
    assert app.registries.shortcuts.get("ctrl+shift+h").plugin == "full"
    assert app.registries.message_renderers.get("my-note").renderer(None, None, None) == "note"
    model = app.model_registry.load().find("local-llm", "tiny")
    assert model is not None and model.context_window == 4096
    assert app.model_registry.provider("local-llm").plugin == "full"


def test_session_actions_raise_while_loading(loaded) -> None:
    _app, module, _path = loaded
    assert len(module.load_errors) == 12
    for line in module.load_errors:
        assert line.startswith("ExtensionRuntimeNotInitializedError: pi.")
        assert "is available once the session runs" in line


def test_event_handlers_run_module_hook_first_then_in_order(loaded) -> None:
    app, module, _path = loaded

    async def fire() -> Any:
        await app.dispatcher.emit("session_start", ev.SessionStartEvent())
        safe = await app.dispatcher.emit(
            "tool_call", ev.ToolCallEvent(tool_name="bash", input={"command": "ls"})
        )
        unsafe = await app.dispatcher.emit(
            "tool_call", ev.ToolCallEvent(tool_name="bash", input={"command": "rm -rf /"})
        )
        return safe, unsafe

    safe, unsafe = asyncio.run(fire())
    assert safe is None
    assert unsafe == {"block": True, "reason": "Blocked by extension policy"}
    assert module.calls == ["no-arg handler", "module hook", "guard", "late", "module hook", "guard"]
    assert [h.source for h in app.dispatcher.handlers("tool_call")] == [str(loaded[2])] * 3


def test_file_fallbacks_from_the_api(loaded) -> None:
    app, _module, _path = loaded
    request = ev.FileWriteRequest(dst="/x", content="y")
    assert asyncio.run(app.dispatcher.emit("file_write_fallback", request)) is True
    assert asyncio.run(app.dispatcher.emit("file_delete_fallback", ev.FileDeleteRequest(dst="/x"))) is False


def test_get_flag_reads_the_command_line_then_the_default(env) -> None:
    app = App(cwd=env.project, agent_dir=env.agent_dir)
    api = ExtensionAPI("flags", app=app)
    api.register_flag("--plan", description="x", type="boolean", default=False)
    api.register_flag("persona", type="string", default="pirate")
    assert api.get_flag("plan") is False and api.get_flag("--persona") == "pirate"
    app.flag_values = {"plan": True, "persona": "robot"}
    assert api.get_flag("plan") is True and api.get_flag("persona") == "robot"
    assert api.get_flag("unknown") is None
    with pytest.raises(ValueError, match="flag 'bad': type must be 'boolean' or 'string'"):
        api.register_flag("bad", type="number")


def test_on_warns_once_about_unknown_events_and_ignores_them(caplog: pytest.LogCaptureFixture) -> None:
    api = ExtensionAPI("x")
    api.on("tool_cal", lambda e: None)
    api.on("tool_cal", lambda e: None)
    warned = [r.getMessage() for r in caplog.records if "tool_cal" in r.getMessage()]
    assert len(warned) == 1 and "did you mean 'tool_call'?" in warned[0]
    assert "tool_cal" not in api._handlers
    for name in subscribable_events():
        api.on(name, lambda e: None)


def test_subscribable_events_are_the_notify_chain_cancel_and_block_events() -> None:
    SEMANTICS = declared()

    services = {"compact", "compaction_prepare", "summarize_branch", "export_html",
                "file_write_fallback", "file_delete_fallback", "workspace_read_text", "workspace_write_text"}  # fmt: skip
    assert set(subscribable_events()) == set(SEMANTICS) - services


def test_event_bus_is_shared_between_extensions(env, only_site, app_factory) -> None:
    sender = env.write("exts/sender.py", "def activate(pi):\n    pi.events.emit('ready', {'n': 1})\n")
    receiver = env.write(
        "exts/a_receiver.py",
        "got = []\n\ndef activate(pi):\n    pi.events.on('ready', got.append)\n",
    )
    app = app_factory().boot(BootOptions(extensions=[str(receiver), str(sender)]))
    assert sys.modules["piko_extension_a_receiver"].got == [{"n": 1}]
    off = app.event_bus.on("ready", lambda data: (_ for _ in ()).throw(RuntimeError("bad subscriber")))
    app.event_bus.emit("ready", {"n": 2})  # a raising subscriber does not stop the others
    assert sys.modules["piko_extension_a_receiver"].got == [{"n": 1}, {"n": 2}]
    off()
    off()  # twice is harmless


def test_exec_runs_a_program_during_load(env, only_site, app_factory) -> None:
    path = env.write(
        "exts/runner.py",
        """
        import asyncio
        results = []

        async def activate(pi):
            results.append(await pi.exec(sys_executable(), ["-c", "print('out'); import sys; sys.exit(3)"]))

        def sys_executable():
            import sys
            return sys.executable
        """,
    )
    app_factory().boot(BootOptions(extensions=[str(path)]))
    (result,) = sys.modules["piko_extension_runner"].results
    assert (result.stdout, result.code, result.killed) == ("out\n", 3, False)


def test_exec_timeout_kills(env) -> None:
    api = ExtensionAPI("x")
    result = asyncio.run(api.exec(sys.executable, ["-c", "import time; time.sleep(30)"], timeout=0.2))
    assert result.killed is True and result.code != 0


def test_exec_takes_pis_options_object_with_milliseconds(env, tmp_path) -> None:
    api = ExtensionAPI("x")
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    result = asyncio.run(api.exec(sleeper[0], sleeper[1:], {"timeout": 200}))
    assert result.killed is True and result.code != 0
    where = asyncio.run(
        api.exec(sys.executable, ["-c", "import os; print(os.getcwd())"], {"cwd": str(tmp_path)})
    )
    assert where.stdout.strip() == str(tmp_path)
    with pytest.raises(TypeError, match="unknown options shell"):
        asyncio.run(api.exec(sys.executable, [], {"shell": True}))


def test_registrations_after_start_up_take_effect(env, only_site, app_factory) -> None:
    path = env.write(
        "exts/late.py",
        """
        api = []

        def activate(pi):
            api.append(pi)
        """,
    )
    app = app_factory().boot(BootOptions(extensions=[str(path)]))
    pi = sys.modules["piko_extension_late"].api[0]
    assert not app.dispatcher.has_handlers("agent_end")
    seen: list[Any] = []
    pi.on("agent_end", lambda event: seen.append(event.messages))
    pi.register_command("late-cmd", handler=lambda a, c: None)
    asyncio.run(app.dispatcher.emit("agent_end", ev.AgentEndEvent(messages=["m"])))
    assert seen == [["m"]]
    assert "late-cmd" in app.registries.commands
    assert app.pm.infos["late"].hooks == ["piko_agent_end", "piko_register_commands"]


def test_label_and_entry_label(env) -> None:
    api = ExtensionAPI("x")
    api.set_label("Nice name")
    assert api.label == "Nice name"
    with pytest.raises(ExtensionRuntimeNotInitializedError, match=r"pi\.set_label\(\) is available once"):
        api.set_label("entry-1", "bookmark")


def test_adapt_handler_arities() -> None:
    assert adapt_handler(lambda e, c: (e, c))(1, 2) == (1, 2)
    assert adapt_handler(lambda e: e)(1, 2) == 1
    assert adapt_handler(lambda: "none")(1, 2) == "none"
    assert adapt_handler(lambda *args: args)(1, 2) == (1, 2)
    assert adapt_handler(print) is print  # builtins without a signature pass through


def test_provider_settings_are_checked() -> None:
    api = ExtensionAPI("x")
    with pytest.raises(ValueError, match=r"plugin 'x': provider 'p': unknown field\(s\) colour; expected"):
        api.register_provider("p", {"baseUrl": "http://127.0.0.1:1", "colour": "red"})


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ("acme-1", r"provider 'p': models is a str; expected a list of piko\.Model objects or dicts"),
        ([{"id": 5}], r"provider 'p': models\[0\]\.id is a int; expected a non-empty string"),
        ([{"name": "no id"}], r"provider 'p': models\[0\]\.id is a NoneType; expected a non-empty string"),
    ],
)
def test_a_provider_of_the_wrong_shape_names_the_field_and_what_was_expected(
    models: Any, message: str
) -> None:
    api = ExtensionAPI("x")
    with pytest.raises(ValueError, match=rf"plugin 'x': {message}"):
        api.register_provider(
            "p", {"baseUrl": "http://127.0.0.1:1", "api": "openai-completions", "models": models}
        )


def test_context_without_a_session(env) -> None:
    app = App(cwd=env.project, agent_dir=env.agent_dir)
    ctx = app.context()
    assert isinstance(ctx, ExtensionContext)
    assert ctx.cwd == str(env.project)
    assert ctx.has_ui is False and ctx.mode == "print"
    assert ctx.is_idle() is True and ctx.has_pending_messages() is False
    assert ctx.model is None and ctx.get_context_usage() is None
    assert ctx.model_registry is app.model_registry
    ctx.abort()  # nothing to abort
    for action in (lambda: ctx.session_manager, ctx.shutdown, ctx.compact, ctx.get_system_prompt):
        with pytest.raises(ExtensionRuntimeNotInitializedError, match="is available once the session runs"):
            action()
    with pytest.raises(ExtensionRuntimeNotInitializedError):
        asyncio.run(ctx.new_session())
    assert asyncio.run(ctx.ui.confirm("Sure?")) is False
    assert asyncio.run(ctx.ui.select("Pick", ["a"])) is None
