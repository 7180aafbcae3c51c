"""``pi --mode acp``: piko as an ACP agent, driven by the ACP SDK's client over a real subprocess."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import acp
import pytest
from support.acp_client import ARGS
from support.acp_client import PI
from support.acp_client import RecordingClient
from support.acp_client import acp_agent
from support.llm_server import LLMServer
from support.pi_dirs import make_pi_dirs

from piko.testing import hermetic_environment

GATE = """
def activate(pi):
    async def gate(event, ctx):
        if event.tool_name == "bash":
            if not await ctx.ui.confirm("Run bash?", event.input.get("command", "")):
                return {"block": True, "reason": "Blocked by the user"}
    pi.on("tool_call", gate)
"""


def write_call(path: str, content: str) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": "write", "arguments": {"path": path, "content": content}}}]}


def bash_call(command: str) -> dict[str, Any]:
    return {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": command}}}]}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def prompt_once(
    home: Path, work: Path, client: RecordingClient, text: str, *args: str, **options: Any
) -> Any:
    """One new session and one prompt over a fresh ``pi --mode acp`` (``args``/``options`` go to
    :func:`acp_agent`): the prompt's answer."""

    async def scenario() -> Any:
        async with acp_agent(home, work, client, *args, **options) as (conn, _):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            return await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(text)])

    return run(scenario())


@pytest.fixture
def world(tmp_path: Path) -> Any:
    class World:
        def start(self, turns: list[Any]) -> tuple[Path, Path, LLMServer]:
            self.server = LLMServer(turns).start()
            home, work = make_pi_dirs(tmp_path / f"run{id(turns)}", self.server)
            return home, work, self.server

        def stop(self) -> None:
            self.server.stop()

    made = World()
    yield made
    if hasattr(made, "server"):
        made.stop()


def test_a_turn_with_a_tool_call_streams_text_and_a_diff(world) -> None:
    home, work, _ = world.start(
        [write_call("hello.txt", "hi there\n"), {"blocks": [{"text": "Wrote the file."}]}]
    )
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client) as (conn, _):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            return session, await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("write it")]
            )

    session, answer = run(scenario())
    assert answer.stop_reason == "end_turn"
    assert (work / "hello.txt").read_text() == "hi there\n"
    (start,) = client.of("tool_call")
    assert (start.kind, start.title, start.status) == ("edit", "write hello.txt", "in_progress")
    assert start.locations[0].path == str(work / "hello.txt")
    (done,) = client.of("tool_call_update")
    assert done.status == "completed" and done.tool_call_id == start.tool_call_id
    (diff,) = done.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff",
        str(work / "hello.txt"),
        None,
        "hi there\n",
    )
    assert client.text() == "Wrote the file."
    assert client.of("available_commands_update")
    assert session.session_id


def test_cancel_mid_stream_ends_the_turn_as_cancelled(world) -> None:
    slow = {"blocks": [{"text": " ".join(f"word{i}" for i in range(200))}], "delay_s": 0.05}
    home, work, _ = world.start([slow])
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client) as (conn, process):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=[acp.text_block("talk")])
            )
            while not client.of("agent_message_chunk"):
                await asyncio.sleep(0.01)
            await conn.cancel(session_id=session.session_id)
            answer = await turn
            return answer, process.returncode

    answer, code = run(scenario())
    assert answer.stop_reason == "cancelled"
    assert code is None  # still serving
    assert 0 < len(client.of("agent_message_chunk")) < 200


@pytest.mark.parametrize(("answer", "ran"), [("allow", True), ("reject", False), (None, False)])
def test_an_extension_gate_becomes_a_permission_request(world, answer: str | None, ran: bool) -> None:
    home, work, _ = world.start([bash_call("echo ran > proof.txt"), {"blocks": [{"text": "ok"}]}])
    gate = work.parent / "gate.py"
    gate.write_text(GATE)
    client = RecordingClient()
    client.answers = [answer]

    assert prompt_once(home, work, client, "go", "-e", str(gate)).stop_reason == "end_turn"
    (request,) = client.permission_requests
    assert [o.option_id for o in request["options"]] == ["allow", "reject"]
    assert "echo ran > proof.txt" in request["tool_call"].title
    (started,) = client.of("tool_call")
    assert request["tool_call"].tool_call_id == started.tool_call_id
    assert (work / "proof.txt").exists() is ran
    (done,) = client.of("tool_call_update")
    assert done.status == ("completed" if ran else "failed")


def test_a_session_is_loaded_by_id_replayed_and_continued(world) -> None:
    home, work, server = world.start(
        [{"blocks": [{"text": "First answer."}]}, {"blocks": [{"text": "Second."}]}]
    )
    first, second = RecordingClient(), RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, first) as (conn, _):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            for config_id, value in (("model", "mock-anthropic/mock-claude"), ("thought_level", "high")):
                await conn.set_config_option(config_id=config_id, session_id=session.session_id, value=value)
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("remember lemons")])
        async with acp_agent(home, work, second) as (conn, _):
            loaded = await conn.load_session(cwd=str(work), session_id=session.session_id, mcp_servers=[])
            while len(second.of("agent_message_chunk")) < 1:  # the client handles notifications as tasks
                await asyncio.sleep(0.01)
            replayed = [u for u in second.updates if u.session_update != "available_commands_update"]
            answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("and now?")])
        return session.session_id, replayed, answer, loaded

    session_id, replayed, answer, loaded = run(scenario())
    current = [(o.id, o.current_value) for o in loaded.config_options]
    assert current == [("model", "mock-anthropic/mock-claude"), ("thought_level", "high")]  # from the file
    kinds = [u.session_update for u in replayed]
    assert kinds[:2] == ["user_message_chunk", "agent_message_chunk"]
    assert replayed[0].content.text == "remember lemons" and replayed[1].content.text == "First answer."
    assert answer.stop_reason == "end_turn" and second.text() == "First answer.Second."
    last_request = json.dumps(server.requests[-1]["body"])
    assert "remember lemons" in last_request and "First answer." in last_request
    files = list((home / "sessions").rglob("*.jsonl"))
    assert len(files) == 1 and session_id in files[0].name


def test_an_unknown_session_is_an_error_and_the_agent_keeps_serving(world) -> None:
    home, work, _ = world.start([{"blocks": [{"text": "still here"}]}])
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client) as (conn, _):
            with pytest.raises(acp.RequestError) as failure:
                await conn.load_session(cwd=str(work), session_id="no-such-session", mcp_servers=[])
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
            return failure.value, answer

    error, answer = run(scenario())
    assert "no-such-session" in str(error.data) or "not found" in str(error).lower()
    assert answer.stop_reason == "end_turn" and client.text() == "still here"


def test_bad_json_rpc_input_is_answered_with_errors(world) -> None:
    home, work, _ = world.start([])
    env = hermetic_environment()
    env.update(
        PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent.parent)
    )
    lines = [
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such/method", "params": {}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": 5}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 1}}),
    ]
    done = subprocess.run(
        [PI, *ARGS],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=60,
    )
    answers = {r.get("id"): r for r in map(json.loads, done.stdout.splitlines()) if "id" in r}
    assert answers[1]["error"]["code"] == -32601
    assert answers[2]["error"]["code"] in (-32602, -32603)
    assert answers[3]["result"]["agentInfo"]["name"] == "piko"
    assert done.returncode == 0


def test_a_failed_model_request_is_an_error_answer(world) -> None:
    home, work, _ = world.start([{"status": 400, "error_body": {"error": {"message": "bad model day"}}}])
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client) as (conn, process):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            with pytest.raises(acp.RequestError) as failure:
                await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
            return failure.value, process.returncode

    error, code = run(scenario())
    assert "bad model day" in json.dumps(error.data)
    assert code is None


def test_a_transcript_of_a_driven_session(world, tmp_path: Path) -> None:
    """Writes the updates of a two-turn session as JSON lines (``PIKO_ACP_TRANSCRIPT`` names the file)."""
    import os

    home, work, _ = world.start(
        [
            {
                "blocks": [
                    {"thinking": "Look first."},
                    {"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}},
                ]
            },
            {"blocks": [{"text": "The notes say hello world."}]},
        ]
    )
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client) as (conn, _):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            return await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("what do my notes say?")]
            )

    assert run(scenario()).stop_reason == "end_turn"
    transcript = client.transcript()
    kinds = [u["sessionUpdate"] for u in transcript if u["sessionUpdate"] != "available_commands_update"]
    assert kinds[0] == "agent_thought_chunk" and "tool_call" in kinds and kinds[-1] == "agent_message_chunk"
    read = next(u for u in transcript if u["sessionUpdate"] == "tool_call")
    assert (read["kind"], read["title"]) == ("read", "read notes.txt")
    done = next(u for u in transcript if u["sessionUpdate"] == "tool_call_update")
    assert "hello world" in done["content"][0]["content"]["text"]
    out = Path(os.environ.get("PIKO_ACP_TRANSCRIPT") or tmp_path / "transcript.jsonl")
    out.write_text("".join(json.dumps(u) + "\n" for u in transcript))


def test_file_tools_go_through_a_client_that_offers_files(world) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]},
        {"blocks": [{"tool_call": {"name": "edit", "arguments": {"path": "notes.txt", "edits": [{"oldText": "UNSAVED", "newText": "EDITED"}]}}}]},
        write_call("fresh.txt", "new file\n"),
        {"blocks": [{"text": "all through the editor"}]},
    ]  # fmt: skip
    home, work, _ = world.start(turns)
    client = RecordingClient()
    notes = str(work / "notes.txt")
    client.buffers[notes] = "hello world\nUNSAVED line in the editor\n"

    assert prompt_once(home, work, client, "work", files=True).stop_reason == "end_turn"
    results = [u for u in client.of("tool_call_update")]
    assert "UNSAVED line in the editor" in results[0].content[0].content.text  # the buffer, not the disk
    assert client.writes == [
        (notes, "hello world\nEDITED line in the editor\n"),
        (str(work / "fresh.txt"), "new file\n"),
    ]
    assert (work / "notes.txt").read_text() == "hello world\nsecond line\n"  # the editor owns the file now
    assert not (work / "fresh.txt").exists()
    (diff,) = results[1].content
    assert (diff.type, diff.new_text) == ("diff", "hello world\nEDITED line in the editor\n")


FAST = """
def activate(pi):
    async def fast(args, ctx):
        await pi.set_model("mock/mock-1")
    pi.register_command("fast", description="Back to the fast model", handler=fast)
"""


def test_model_and_thinking_level_are_config_options(world) -> None:
    home, work, server = world.start([{"blocks": [{"text": "thought hard"}]}])
    extension = work.parent / "fast.py"
    extension.write_text(FAST)
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client, "-e", str(extension)) as (conn, _):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            sid = session.session_id
            switched = await conn.set_config_option(
                config_id="model", session_id=sid, value="mock-anthropic/mock-claude"
            )
            thinking = await conn.set_config_option(config_id="thought_level", session_id=sid, value="high")
            with pytest.raises(acp.RequestError) as bad:
                await conn.set_config_option(config_id="thought_level", session_id=sid, value="galaxy-brain")
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("think")])
            before = len(client.of("config_option_update"))
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/fast")])
            while len(client.of("config_option_update")) == before:
                await asyncio.sleep(0.01)
            return session, switched, thinking, bad.value, answer, before

    session, switched, thinking, bad, answer, before = run(scenario())
    model, level = session.config_options
    assert (model.id, model.category, model.current_value) == ("model", "model", "mock/mock-1")
    assert {"mock/mock-1", "mock-anthropic/mock-claude"} <= {o.value for o in model.options}
    assert (level.category, level.current_value, [o.value for o in level.options]) == (
        "thought_level", "off", ["off"],
    )  # fmt: skip
    assert switched.config_options[0].current_value == "mock-anthropic/mock-claude"
    assert "high" in [o.value for o in switched.config_options[1].options]
    assert thinking.config_options[1].current_value == "high"
    assert "galaxy-brain" in json.dumps(bad.data)
    assert answer.stop_reason == "end_turn" and client.text() == "thought hard"
    request = server.requests[-1]
    assert request["path"].endswith("/messages") and request["body"]["model"] == "mock-claude"
    assert "thinking" in request["body"]
    assert before == 0  # the client's own changes are answered, not echoed
    (update,) = client.of("config_option_update")
    assert update.config_options[0].current_value == "mock/mock-1"
    assert update.config_options[1].current_value == "off"


def tool_results(request: dict[str, Any]) -> list[str]:
    """The tool results an openai-completions request carries, as the model reads them."""
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("terminal", [True, False])
def test_bash_runs_in_a_client_terminal_with_the_result_piko_gives(world, terminal: bool) -> None:
    home, work, server = world.start(
        [
            bash_call("echo out; echo err >&2; pwd > where.txt; exit 3"),
            bash_call("printf 'a\\nb\\n'"),
            {"blocks": [{"text": "done"}]},
        ]
    )
    client = RecordingClient()

    assert prompt_once(home, work, client, "run", terminal=terminal).stop_reason == "end_turn"
    assert (work / "where.txt").read_text().strip() == str(work)
    results = tool_results(server.requests[1]) + tool_results(server.requests[2])[1:]
    assert results == ["out\nerr\n\n\nCommand exited with code 3", "a\nb\n"]  # piko's bash, to the byte
    if not terminal:
        assert client.terminal_calls == []
        return
    assert [m for m, _ in client.terminal_calls] == ["create", "wait", "output", "release"] * 2
    starts, updates = client.of("tool_call"), client.of("tool_call_update")
    assert [u.status for u in updates] == [None, "failed", None, "completed"]
    for start, shown, done, term in zip(
        starts, updates[0::2], updates[1::2], ["term-1", "term-2"], strict=True
    ):
        assert shown.tool_call_id == done.tool_call_id == start.tool_call_id and start.kind == "execute"
        assert [(c.type, c.terminal_id) for c in shown.content] == [("terminal", term)]
        assert [(c.type, c.terminal_id) for c in done.content] == [("terminal", term)]
    assert "Command exited with code 3" in updates[1].raw_output["text"]


@pytest.mark.parametrize("terminal", [True, False])
def test_a_command_that_times_out_is_killed(world, terminal: bool) -> None:
    home, work, server = world.start(
        [
            {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo started; sleep 30", "timeout": 1}}}]},
            {"blocks": [{"text": "gave up"}]},
        ]
    )  # fmt: skip
    client = RecordingClient()

    assert prompt_once(home, work, client, "run", terminal=terminal).stop_reason == "end_turn"
    assert tool_results(server.requests[1]) == ["started\n\n\nCommand timed out after 1 seconds"]
    expected = ["create", "wait", "kill", "output", "release"] if terminal else []
    assert [m for m, _ in client.terminal_calls] == expected


def test_cancel_kills_the_command_in_the_client_terminal(world) -> None:
    home, work, _ = world.start([bash_call("sleep 30"), {"blocks": [{"text": "never"}]}])
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(home, work, client, terminal=True) as (conn, process):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=[acp.text_block("run")])
            )
            while ("wait", "term-1") not in client.terminal_calls:
                await asyncio.sleep(0.01)
            await conn.cancel(session_id=session.session_id)
            return await turn, process.returncode

    answer, code = run(scenario())
    assert answer.stop_reason == "cancelled" and code is None
    assert [m for m, _ in client.terminal_calls] == ["create", "wait", "kill", "output", "release"]
    assert client.terminals["term-1"].process.returncode is not None


def test_a_client_that_cannot_open_a_terminal_gets_bash_in_piko(world) -> None:
    home, work, server = world.start([bash_call("echo here"), {"blocks": [{"text": "ok"}]}])
    client = RecordingClient()
    client.refuse_terminals = True

    assert prompt_once(home, work, client, "run", terminal=True).stop_reason == "end_turn"
    assert tool_results(server.requests[1]) == ["here\n"]
    (done,) = client.of("tool_call_update")
    assert done.status == "completed" and done.content[0].content.text == "here\n"


@pytest.mark.parametrize("key", [None, "sk-from-the-editor"])
def test_auth_methods_name_the_providers_that_need_a_key(world, key: str | None) -> None:
    home, work, _ = world.start([])
    client = RecordingClient()

    async def scenario() -> Any:
        env = {"ANTHROPIC_API_KEY": key} if key else {}
        async with acp_agent(home, work, client, env=env) as (conn, _):
            outcomes = {}
            for method in ("env:anthropic", "env:mock", "password"):
                try:
                    await conn.authenticate(method_id=method)
                    outcomes[method] = "ok"
                except acp.RequestError as exc:
                    outcomes[method] = exc.code
            session = await conn.new_session(cwd=str(work), mcp_servers=[])  # still serving
            return outcomes, session

    outcomes, session = run(scenario())
    methods = {m.id: m for m in client.initialized.auth_methods}
    assert "env:mock" not in methods  # models.json gives mock its key
    assert outcomes["password"] == -32602 and outcomes["env:mock"] == -32602
    if key is None:
        anthropic = methods["env:anthropic"]
        assert anthropic.type == "env_var" and [v.name for v in anthropic.vars] == ["ANTHROPIC_API_KEY"]
        assert outcomes["env:anthropic"] == -32000  # auth_required: the variable is not set
    else:
        assert "env:anthropic" not in methods and outcomes["env:anthropic"] == "ok"
    assert session.session_id


def test_a_prompt_for_a_model_without_a_key_asks_for_authentication(world) -> None:
    home, work, _ = world.start([])
    client = RecordingClient()

    async def scenario() -> Any:
        async with acp_agent(
            home, work, client, "--provider", "anthropic", "--model", "claude-sonnet-4-5"
        ) as (
            conn,
            process,
        ):
            session = await conn.new_session(cwd=str(work), mcp_servers=[])
            with pytest.raises(acp.RequestError) as refused:
                await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
            return refused.value, process.returncode

    error, code = run(scenario())
    assert error.code == -32000 and "ANTHROPIC_API_KEY" in error.data["message"]
    assert error.data["authMethods"] == ["env:anthropic"] and code is None


PLANNER = """
def activate(pi):
    def started(event, ctx):
        pi.events.emit("plan", {"entries": [
            {"content": "Read the notes", "status": "in_progress", "priority": "high"}, "Answer"]})
    def read(event, ctx):
        pi.events.emit("plan", "not a plan")
        pi.events.emit("plan", [{"content": "Read the notes", "completed": True}, {"text": "Answer", "status": "active"}])
    pi.on("agent_start", started)
    pi.on("tool_result", read)
"""


def test_an_extension_plan_on_the_event_bus_becomes_plan_updates(world) -> None:
    home, work, _ = world.start(
        [
            {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]},
            {"blocks": [{"text": "hello"}]},
        ]
    )
    planner = work.parent / "planner.py"
    planner.write_text(PLANNER)
    client = RecordingClient()

    assert prompt_once(home, work, client, "plan it", "-e", str(planner)).stop_reason == "end_turn"
    plans = [[(e.content, e.status, e.priority) for e in u.entries] for u in client.of("plan")]
    assert plans == [
        [("Read the notes", "in_progress", "high"), ("Answer", "pending", "medium")],
        [("Read the notes", "completed", "medium"), ("Answer", "in_progress", "medium")],
    ]
    kinds = [u.session_update for u in client.updates]
    assert kinds.index("plan") < kinds.index("tool_call") < len(kinds) - 1 - kinds[::-1].index("plan")
