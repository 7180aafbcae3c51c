"""piko.testing's fixtures, taken as a plugin author's test takes them (the pytest11 plugin is active here).

Each fixture is used for real: the isolated home against this process's environment, the scripted
server over HTTP in both formats, an in-process session with an extension file and with a plugin
module, and ``pi --mode rpc`` as a subprocess.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.clean_env import provider_variables

from piko.testing import text_turn
from piko.testing import tool_turn
from piko.testing.home import PikoHome
from piko.testing.rpc_client import credential_variable

GUARD_EXTENSION = """
def activate(pi):
    def shout(tool_call_id, params, signal, on_update, ctx):
        return params["text"].upper()

    pi.register_tool(
        name="shout",
        description="Upper-case a text",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=shout,
    )

    def guard(event, ctx):
        if event.tool_name == "bash":
            ctx.ui.notify("bash is not allowed here", "warning")
            return {"block": True, "reason": "no bash in tests"}

    pi.on("tool_call", guard)
    pi.register_command("hello", description="Say hello", handler=lambda args, ctx: ctx.ui.notify("hello " + args))
"""


def test_piko_home_points_piko_at_tmp_and_drops_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-developer")
    monkeypatch.setenv("PIKO_DISABLE_PLUGINS", "tools.read")
    monkeypatch.setenv("AWS_PROFILE", "prod")
    home = PikoHome(tmp_path).isolate(monkeypatch)

    assert (
        os.environ["PI_CODING_AGENT_DIR"] == str(home.agent_dir) == str(tmp_path / "home" / ".pi" / "agent")
    )
    assert os.environ["HOME"] == str(home.home)
    assert os.environ["PIKO_CACHE_DIR"] == str(home.cache_dir)
    assert not {"OPENAI_API_KEY", "PIKO_DISABLE_PLUGINS", "AWS_PROFILE"} & set(os.environ)
    assert "sk-from-the-developer" not in str(home.environment())


def test_every_variable_the_catalog_reads_counts_as_a_credential() -> None:
    assert sorted(name for name in provider_variables() if not credential_variable(name)) == []


def test_the_fixture_is_the_isolated_home(piko_home: PikoHome) -> None:
    assert os.environ["PI_CODING_AGENT_DIR"] == str(piko_home.agent_dir)
    assert not [name for name in os.environ if name.endswith("_API_KEY")]
    result = piko_home.pi("plugins", "--json")
    assert result.returncode == 0, result.stderr
    assert '"name": "tools.read"' in result.stdout


def test_llm_server_speaks_openai_and_anthropic(llm_server: Any) -> None:
    llm_server.add_turns([text_turn("Hello there."), text_turn("Hi.")])
    openai = httpx.post(llm_server.base_url + "/v1/chat/completions", json={"model": "m", "stream": True})
    anthropic = httpx.post(llm_server.base_url + "/v1/messages", json={"model": "m", "stream": True})
    assert openai.headers["content-type"] == anthropic.headers["content-type"] == "text/event-stream"
    assert '"content":"Hello "' in openai.text and "data: [DONE]" in openai.text
    assert "event: message_start" in anthropic.text and '"text":"Hi."' in anthropic.text
    assert [r["path"] for r in llm_server.requests] == ["/v1/chat/completions", "/v1/messages"]


def test_session_runs_an_extension_file(piko_session: Any, piko_home: PikoHome, llm_server: Any) -> None:
    extension = piko_home.write("guard.py", GUARD_EXTENSION)
    run = piko_session.run(
        "shout hi, then list files",
        turns=[
            tool_turn("shout", {"text": "hi"}),
            tool_turn("bash", {"command": "ls"}),
            text_turn("Done."),
        ],
        extensions=[extension],
    )

    shout, bash = run.tool_results
    assert shout.content[0].text == "HI" and not shout.is_error
    assert bash.is_error and bash.content[0].text == "no bash in tests"
    assert run.ui.notifications == [("bash is not allowed here", "warning")]
    assert run.text == "Done."
    assert run.types.count("tool_execution_end") == 2
    assert run.records[0] == {"type": "agent_start"}
    assert run.extension_errors == []
    lines = run.file_entries()
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(piko_home.project)
    assert [e.id for e in run.entries] == [line["id"] for line in lines[1:]]
    assert len(llm_server.requests) == 3
    assert "shout" in [t["function"]["name"] for t in llm_server.requests[0]["body"]["tools"]]


def test_session_runs_a_command_and_the_anthropic_model(piko_session: Any, piko_home: PikoHome) -> None:
    extension = piko_home.write("guard.py", GUARD_EXTENSION)
    run = piko_session.run("/hello world", extensions=[extension])
    assert run.ui.notifications == [("hello world", "info")]
    assert run.messages == []

    run = piko_session.run(
        "think",
        turns=[{"blocks": [{"thinking": "Let me see."}, {"text": "Yes."}]}],
        model="mock-anthropic/mock-claude",
        options={"thinking": "high"},
    )
    assert run.text == "Yes."
    assert run.assistant is not None and run.assistant.provider == "mock-anthropic"
    assert piko_session.server.requests[-1]["path"] == "/v1/messages"


def test_session_loads_a_plugin_module_and_reports_its_handler_errors(
    piko_session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "src" / "acme_guard"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from piko import hookimpl\n\n\n"
        "@hookimpl\n"
        "def piko_agent_start(event, ctx):\n"
        "    raise RuntimeError('guard broke')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    run = piko_session.run("hi", turns=[text_turn("Hello.")], plugins={"acme.guard": "acme_guard"})
    assert run.text == "Hello."
    assert run.app.pm.infos["acme.guard"].hooks == ["piko_agent_start"]
    [error] = run.extension_errors
    assert error.event == "agent_start" and "guard broke" in error.error
    sys.modules.pop("acme_guard", None)


def test_session_names_a_plugin_that_fails_to_load(piko_session: Any, piko_home: PikoHome) -> None:
    broken = piko_home.write("broken.py", "import not_a_module_anywhere\n")
    with pytest.raises(AssertionError, match="plugin 'broken' failed to load: ModuleNotFoundError"):
        piko_session.run("hi", extensions=[broken])
    with pytest.raises(TypeError, match="give a module or its name"):
        piko_session.run("hi", plugins={"odd": 42})


def test_rpc_fixture_drives_pi_in_rpc_mode(piko_rpc: Any, llm_server: Any, piko_home: PikoHome) -> None:
    extension = piko_home.write("guard.py", GUARD_EXTENSION)
    llm_server.add_turns([tool_turn("shout", {"text": "rpc"}), text_turn("Shouted.")])
    pi = piko_rpc("-e", str(extension))

    records = pi.prompt("shout rpc")
    [end] = [r for r in records if r["type"] == "tool_execution_end"]
    assert end["toolName"] == "shout" and end["result"]["content"][0]["text"] == "RPC"
    assert records[-1]["type"] == "agent_end"
    state = pi.request({"id": "s", "type": "get_state"})
    assert state["data"]["messageCount"] == 4
    assert pi.close() == 0
    assert "sk-" not in pi.stderr


def test_an_rpc_process_used_as_a_context_manager_is_killed_at_the_end(
    piko_home: PikoHome, llm_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from piko.testing import RpcProcess
    from piko.testing import agent_environment

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-the-developer")
    env = agent_environment(piko_home.agent_dir, {"PIKO_TEST_MARK": "1"})
    assert env["PI_CODING_AGENT_DIR"] == str(piko_home.agent_dir)
    assert env["PIKO_CACHE_DIR"] == str(piko_home.agent_dir / "cache")
    assert env["HOME"] == str(piko_home.home) and env["PIKO_TEST_MARK"] == "1"
    assert "ANTHROPIC_API_KEY" not in env

    piko_home.use_llm_server(llm_server)
    args = ["--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"]
    with RpcProcess(piko_home.agent_dir, piko_home.project, args) as pi:
        assert pi.request({"id": "s", "type": "get_state"})["success"] is True
    assert pi.proc.poll() is not None  # not left running after the block
