"""Extensions intercepting each event of a real ``pi -p`` run (an ``-e`` file, the scripted server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import OK
from agent_harness import json_lines
from agent_harness import run_extension
from agent_harness import run_logging_extension
from agent_harness import with_record

from piko.testing import text_turn
from piko.testing import tool_turn

RECORDER = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def record(name, data=None):
    with open(LOG, "a") as fh:
        fh.write(json.dumps({"event": name, "data": data}) + "\\n")

def activate(pi):
    for name in ["session_start", "agent_start", "agent_end", "turn_start", "turn_end", "message_start",
                 "message_update", "message_end", "tool_execution_start", "tool_execution_update",
                 "tool_execution_end", "before_agent_start", "context", "before_provider_request",
                 "after_provider_response", "tool_call", "tool_result", "input", "assistant_message",
                 "session_shutdown", "model_select", "resources_discover"]:
        pi.on(name, (lambda n: lambda event, ctx: record(n))(name))
"""


def test_every_event_reaches_an_extension_in_order(pi_env: Any, tmp_path: Path) -> None:
    events = [row["event"] for row in run_logging_extension(pi_env, tmp_path, RECORDER)]
    assert events[:2] == ["resources_discover", "session_start"]
    first_prompt = events.index("input")
    assert events[first_prompt:first_prompt + 7] == [
        "input", "before_agent_start", "agent_start", "turn_start", "message_start", "message_end", "context",
    ]  # fmt: skip
    assert "before_provider_request" in events and "after_provider_response" in events
    assert events.index("before_provider_request") < events.index("after_provider_response")
    tool = events.index("tool_execution_start")
    assert events[tool : tool + 2] == ["tool_execution_start", "tool_call"]
    assert events.index("tool_result") < events.index("tool_execution_end")
    assert events.count("assistant_message") == 2
    assert events[-2:] == ["agent_end", "session_shutdown"]


def _run_with(pi_env: Any, tmp_path: Path, code: str, turns: list[dict[str, Any]], *args: str) -> Any:
    ext = tmp_path / "ext.py"
    ext.write_text(code)
    env = pi_env(turns)
    return env, env.run("--mode", "json", "-e", str(ext), "--provider", "mock", "--model", "mock-1", *args)


def test_tool_call_block_reaches_the_model_as_an_error(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    def gate(event, ctx):
        if event.tool_name == "bash" and "rm" in event.input["command"]:
            return {"block": True, "reason": "Blocked by policy"}
    pi.on("tool_call", gate)
"""
    turns = [tool_turn("bash", {"command": "rm -rf build"}), text_turn("ok")]
    env, done = _run_with(pi_env, tmp_path, code, turns, "clean up")
    assert done.returncode == 0, done.stderr
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert end["result"]["content"][0]["text"] == "Blocked by policy"
    second = env.server.requests[1]["body"]["messages"][-1]
    assert second["role"] == "tool" and "Blocked by policy" in json.dumps(second)


def test_tool_call_handler_that_raises_blocks_the_call(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    def broken(event, ctx):
        raise RuntimeError("policy service down")
    pi.on("tool_call", broken)
"""
    turns = [tool_turn("bash", {"command": "echo hi"}), text_turn("ok")]
    env, done = _run_with(pi_env, tmp_path, code, turns, "go")
    events = json_lines(done.stdout)
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert "Blocked" in end["result"]["content"][0]["text"]
    assert "policy service down" in done.stderr
    assert not (env.work / "hi").exists()


def test_tool_call_may_revise_input_and_tool_result_may_patch(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    def revise(event, ctx):
        event.input["command"] = "echo revised"
    def patch(event, ctx):
        return {"content": [{"type": "text", "text": "patched: " + event.content[0].text}]}
    pi.on("tool_call", revise)
    pi.on("tool_result", patch)
"""
    turns = [tool_turn("bash", {"command": "echo original"}), text_turn("ok")]
    _env, done = _run_with(pi_env, tmp_path, code, turns, "go")
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["result"]["content"][0]["text"] == "patched: revised\n"


def test_context_and_payload_and_system_prompt_changes_reach_the_provider(
    pi_env: Any, tmp_path: Path
) -> None:
    code = """
from piko import UserMessage, TextContent
def activate(pi):
    pi.on("before_agent_start", lambda event, ctx: {"system_prompt": event.system_prompt + "\\nALWAYS ANSWER IN FRENCH"})
    pi.on("context", lambda event, ctx: {"messages": event.messages + [UserMessage(content=[TextContent(text="(injected)")], timestamp=1)]})
    def payload(event, ctx):
        body = dict(event.payload)
        body["temperature"] = 0.25
        return body
    pi.on("before_provider_request", payload)
"""
    env, done = _run_with(pi_env, tmp_path, code, [text_turn("bonjour")], "hello")
    assert done.returncode == 0, done.stderr
    body = env.server.requests[0]["body"]
    assert body["temperature"] == 0.25
    assert body["messages"][0]["content"].endswith("ALWAYS ANSWER IN FRENCH")
    assert body["messages"][-1]["content"][0]["text"] == "(injected)"
    # the injected message is for this request only: it is not in the session
    assert "(injected)" not in json.dumps(env.session_lines())


def test_input_transform_and_handled(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    def shout(event, ctx):
        if event.text == "skip me":
            return {"action": "handled"}
        return {"action": "transform", "text": event.text.upper()}
    pi.on("input", shout)
"""
    env, _done = _run_with(pi_env, tmp_path, code, [text_turn("ok")], "hello there")
    assert env.server.requests[0]["body"]["messages"][-1]["content"][0]["text"] == "HELLO THERE"
    env2, done2 = _run_with(pi_env, tmp_path, code, [text_turn("never")], "skip me")
    assert done2.returncode == 0
    assert env2.server.requests == []


def test_message_end_and_assistant_message_rewrite_what_is_saved(pi_env: Any, tmp_path: Path) -> None:
    code = """
def activate(pi):
    def fix(event, ctx):
        return {"content": [{"type": "text", "text": b.text.replace("teh", "the")} if b.TYPE == "text" else b for b in event.message.content]}
    pi.on("assistant_message", fix)
"""
    env, done = _run_with(pi_env, tmp_path, code, [text_turn("teh answer")], "q")
    end = [e for e in json_lines(done.stdout) if e["type"] == "message_end"][-1]
    assert end["message"]["content"][0]["text"] == "the answer"
    saved = [e for e in env.session_lines() if e["type"] == "message"][-1]
    assert saved["message"]["content"][0]["text"] == "the answer"


def test_extension_tool_and_command_and_flag(pi_env: Any, tmp_path: Path) -> None:
    code = """
from piko import ToolResult, TextContent
def activate(pi):
    pi.register_flag("shout", description="Upper-case the greeting", type="boolean", default=False)
    async def greet(tool_call_id, params, signal, on_update, ctx):
        text = "Hello, " + params["name"]
        return ToolResult(content=[TextContent(text=text.upper() if pi.get_flag("shout") else text)])
    pi.register_tool(name="greet", label="Greet", description="Greet someone",
                     parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                     execute=greet)
"""
    turns = [tool_turn("greet", {"name": "Ada"}), text_turn("done")]
    ext = tmp_path / "ext.py"
    ext.write_text(code)
    env = pi_env(turns)
    done = env.run(
        "--mode", "json", "-e", str(ext), "--shout", "--provider", "mock", "--model", "mock-1", "greet Ada"
    )
    assert done.returncode == 0, done.stderr
    assert "greet" in [t["function"]["name"] for t in env.server.requests[0]["body"]["tools"]]
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["result"]["content"][0]["text"] == "HELLO, ADA"


def test_invalid_tool_arguments_become_an_error_result(pi_env: Any) -> None:
    turns = [tool_turn("read", {"offset": 3}), text_turn("sorry")]
    env = pi_env(turns)
    done = env.run("--mode", "json", "--provider", "mock", "--model", "mock-1", "read")
    assert done.returncode == 0, done.stderr
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    text = end["result"]["content"][0]["text"]
    assert text.startswith('Validation failed for tool "read":')
    assert "path" in text


def test_edit_accepts_the_older_argument_shape(pi_env: Any) -> None:
    """pi 0.73.1 advertises ``edits[]`` but still takes top-level ``oldText``/``newText``."""
    turns = [tool_turn("edit", {"path": "notes.txt", "oldText": "second", "newText": "2nd"}), text_turn("ok")]
    env = pi_env(turns)
    done = env.run("--mode", "json", "--provider", "mock", "--model", "mock-1", "edit")
    end = next(e for e in json_lines(done.stdout) if e["type"] == "tool_execution_end")
    assert end["isError"] is False, end
    assert end["result"]["content"][0]["text"] == "Successfully replaced 1 block(s) in notes.txt."
    assert (env.work / "notes.txt").read_text() == "hello world\n2nd line\n"


RUNTIME_ACTIONS = with_record("""
from piko import ToolResult, TextContent

def activate(pi):
    try:
        pi.send_message({"custom_type": "early", "content": "x"})
    except Exception as exc:
        record(load_error=type(exc).__name__, message=str(exc))

    def on_start(event, ctx):
        pi.set_session_name("named by extension")
        pi.append_entry("com.example.state", {"count": 1})
        pi.set_active_tools(["read", "note"])
        record(active=pi.get_active_tools(), all=sorted(t["name"] for t in pi.get_all_tools()),
            thinking=pi.get_thinking_level(), name=pi.get_session_name(), cwd=ctx.cwd,
            idle=ctx.is_idle(), pending=ctx.has_pending_messages(), has_ui=ctx.has_ui,
            prompt_has_note="note" in ctx.get_system_prompt())
    pi.on("session_start", on_start)

    async def note(tool_call_id, params, signal, on_update, ctx):
        pi.send_message({"custom_type": "note", "content": "remember: " + params["text"], "display": True},
                        deliver_as="nextTurn")
        usage = ctx.get_context_usage()
        record(usage_keys=sorted(usage) if usage else None, entries=len(ctx.session_manager.get_entries()))
        return ToolResult(content=[TextContent(text="noted")])

    pi.register_tool(name="note", label="Note", description="Take a note",
                     parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                     execute=note)

    def on_end(event, ctx):
        record(ended=True)
    pi.on("agent_end", on_end)
""")


def test_runtime_actions_reach_the_session(pi_env: Any, tmp_path: Path) -> None:
    turns = [tool_turn("note", {"text": "buy milk"}), text_turn("done"), text_turn("second answer")]
    env, done, records = run_extension(
        pi_env, tmp_path, RUNTIME_ACTIONS, turns, "-p", "take a note", "and again", name="actions.py"
    )
    assert records[0]["load_error"] == "ExtensionRuntimeNotInitializedError"
    assert "while the extension loads" in records[0]["message"]
    start = records[1]
    assert start["active"] == ["read", "note"]
    assert {"read", "bash", "edit", "write", "note"} <= set(start["all"])
    assert start["name"] == "named by extension" and start["idle"] is True and start["has_ui"] is False
    assert start["prompt_has_note"] is False  # note has no prompt snippet
    assert records[2].get("usage_keys") == ["contextWindow", "percent", "tokens"], (records, done.stderr)
    # only read and note were offered to the model
    assert sorted(t["function"]["name"] for t in env.server.requests[0]["body"]["tools"]) == ["note", "read"]
    # the nextTurn message rides along with the next prompt, not the current turn
    second_turn = json.dumps(env.server.requests[1]["body"]["messages"])
    third_turn = json.dumps(env.server.requests[2]["body"]["messages"])
    assert "remember: buy milk" not in second_turn
    assert "remember: buy milk" in third_turn
    lines = env.session_lines()
    assert {"type": "session_info", "name": "named by extension"}.items() <= next(
        e for e in lines if e["type"] == "session_info"
    ).items()
    custom = next(e for e in lines if e["type"] == "custom")
    assert custom["customType"] == "com.example.state" and custom["data"] == {"count": 1}
    assert any(e["type"] == "custom_message" and e["customType"] == "note" for e in lines)


def test_get_commands_lists_what_rpc_lists(pi_env: Any, tmp_path: Path) -> None:
    """pi.get_commands(): extension commands, templates ("prompt"), every skill, with sourceInfo."""
    code = """
import json, os

def activate(pi):
    pi.register_command("hello", description="Say hello", handler=lambda args, ctx: None)
    def dump(event, ctx):
        with open(os.environ["PIKO_TEST_LOG"], "w") as fh:
            json.dump(pi.get_commands(), fh)
    pi.on("session_start", dump)
"""
    ext = tmp_path / "ext.py"
    ext.write_text(code)
    env = pi_env([text_turn("ok")], settings={"enableSkillCommands": False})
    env.trust()
    env.write(".pi/prompts/review.md", "---\ndescription: Review it\n---\nReview $1\n")
    env.write(".pi/skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy up\n---\nBody\n")
    log = tmp_path / "commands.json"
    done = env.run(
        "-p", "-e", str(ext), "--provider", "mock", "--model", "mock-1", "hi", env={"PIKO_TEST_LOG": str(log)}
    )
    assert done.returncode == 0, done.stderr
    commands = json.loads(log.read_text())
    assert [(c["name"], c["source"]) for c in commands] == [
        ("hello", "extension"), ("review", "prompt"), ("skill:tidy", "skill"),
    ]  # fmt: skip
    assert commands[0]["sourceInfo"] == {
        "path": str(ext),
        "source": "local",
        "scope": "user",
        "origin": "top-level",
    }
    assert commands[2]["sourceInfo"]["baseDir"] == str(env.work / ".pi/skills/tidy")


def test_an_extensions_print_goes_to_stderr_in_json_mode(pi_env: Any, tmp_path: Path) -> None:
    """stdout of ``--mode json`` holds JSON lines only, whatever an extension prints (as in RPC)."""
    chatty = (
        "def activate(pi):\n"
        "    print('loading chatty')\n"
        "    pi.on('session_start', lambda event, ctx: print('session started'))\n"
        "    pi.on('turn_end', lambda event, ctx: print('turn ended'))\n"
    )
    _env, done, _rows = run_extension(pi_env, tmp_path, chatty, OK, "--mode", "json", "go", name="chatty.py")
    for line in done.stdout.splitlines():
        json.loads(line)
    assert "session started" in done.stderr and "turn ended" in done.stderr
