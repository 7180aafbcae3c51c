"""Real ``pi`` runs with real MCP servers: a model turn calls an MCP tool and the next request has its result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp_support import answer
from mcp_support import call
from mcp_support import stdio_entry
from mcp_support import tool_messages
from mcp_support import tool_names
from mcp_support import turn_end_dump

pytestmark = pytest.mark.timeout(120)


def test_direct_tool_result_reaches_the_next_request(mcp_env):
    env = mcp_env([call("mcp__demo__echo", {"text": "hi there"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("call echo")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done."
    first, second = env.bodies()
    assert "mcp__demo__echo" in tool_names(first)
    assert "mcp__demo__get_thing" in tool_names(first)  # "." becomes "_"
    assert tool_messages(second)[0]["content"] == "echo: hi there"


def test_json_mode_shows_the_mcp_tool_execution(mcp_env):
    env = mcp_env([call("mcp__demo__echo", {"text": "json"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.run("--mode", "json", "--provider", "mock", "--model", "mock-1", "go")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    ends = [e for e in events if e.get("type") == "tool_execution_end"]
    assert ends and ends[0]["toolName"] == "mcp__demo__echo"
    assert ends[0]["result"]["content"] == [{"type": "text", "text": "echo: json"}]
    assert ends[0]["isError"] is False
    # pi 1.6: the whole CallToolResult (without _meta) is the result's structuredContent
    structured = ends[0]["result"]["structuredContent"]
    assert (
        structured["content"] == [{"type": "text", "text": "echo: json"}] and structured["isError"] is False
    )
    assert "_meta" not in structured and "meta" not in structured


def test_is_error_result_is_a_tool_error(mcp_env):
    env = mcp_env([call("mcp__demo__fail", {"reason": "no disk"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    result = tool_messages(env.bodies()[1])[0]
    assert "no disk" in json.dumps(result)


def test_big_result_is_cut_in_the_middle_and_saved(mcp_env):
    env = mcp_env([call("mcp__demo__big", {"size": 60000}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    text = tool_messages(env.bodies()[1])[0]["content"]
    assert text.startswith("Warning: truncated output (original token count: 15000)")
    assert "chars truncated\u2026" in text
    assert "line 000000" in text and "line 004999" in text
    path = text.rsplit("[Full output: ", 1)[1].split(" (read it", 1)[0]
    with open(path, encoding="utf-8") as saved:
        assert len(saved.read()) == 60000


def test_image_result_is_forwarded(mcp_env):
    env = mcp_env([call("mcp__demo__picture"), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    body = json.dumps(env.bodies()[1])
    assert "a pixel" in body
    assert "data:image/png;base64," in body


def test_deferred_tool_is_declared_after_tool_search(mcp_env):
    env = mcp_env(
        [call("tool_search", {"query": "echo"}), call("mcp__demo__echo", {"text": "found"}), answer()]
    )
    env.write_mcp({"demo": stdio_entry(exposure="deferred", description="Things for tests")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    first, second, third = env.bodies()
    assert "tool_search" in tool_names(first)
    assert "mcp__demo__echo" not in tool_names(first)
    system = first["messages"][0]["content"]
    assert "<mcp_servers>" in system and "- mcp__demo (tool_search): Things for tests" in system
    assert "Loaded 1 tool" in tool_messages(second)[0]["content"]
    assert "mcp__demo__echo" in tool_names(second)
    assert tool_messages(third)[-1]["content"] == "echo: found"


def test_tool_exposure_patterns_hide_and_expose(mcp_env):
    env = mcp_env([answer()])
    env.write_mcp(
        {"demo": stdio_entry(exposure="hidden", toolExposure={"echo": "direct", "get*": "deferred"})}
    )
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    names = tool_names(env.bodies()[0])
    assert "mcp__demo__echo" in names
    assert "mcp__demo__fail" not in names and "mcp__demo__get_thing" not in names
    assert "tool_search" in names


def test_tools_option_keeps_mcp_tools_unless_an_entry_names_them(mcp_env):
    env = mcp_env([answer(), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    assert env.prompt("--tools", "read", "go").returncode == 0
    assert env.prompt("--tools", "read,mcp__demo__ec*", "go").returncode == 0
    first, second = env.bodies()
    assert "read" in tool_names(first) and "mcp__demo__fail" in tool_names(first)
    assert set(tool_names(second)) == {"read", "mcp__demo__echo"}


def test_no_mcp_and_blocking_leave_piko_as_without_servers(mcp_env, tmp_path):
    everything = (
        "{'commands': pi.get_commands(), 'tools': [t['name'] for t in pi.get_all_tools()],"
        " 'active': pi.get_active_tools()}"
    )
    ext = turn_end_dump(tmp_path / "dump.py", everything, sort_keys=True)
    env = mcp_env([answer(), answer(), answer(), answer()])
    seen = []

    def run(*args: str):
        out = tmp_path / f"dump{len(seen)}.json"
        done = env.prompt(*args, "-e", str(ext), "go", env={"OUT": str(out)})
        seen.append(json.loads(out.read_text()))
        return done

    blocked = run("--disable-plugin", "mcp")  # piko as it is without the plugin
    no_config = run()
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    no_mcp = run("--no-mcp")
    blocked_with_servers = run("--disable-plugin", "mcp")
    for done in (blocked, no_config, no_mcp, blocked_with_servers):
        assert done.returncode == 0, done.stderr
        assert done.stderr == blocked.stderr
    assert all(dump == seen[0] for dump in seen)
    bodies = env.bodies()
    assert all(body == bodies[0] for body in bodies)


def test_project_servers_load_only_in_a_trusted_project(mcp_env):
    env = mcp_env([answer(), answer()])
    env.write_mcp({"proj": stdio_entry(exposure="direct")}, project=True)
    assert env.prompt("go").returncode == 0
    env.trust()
    assert env.prompt("go").returncode == 0
    untrusted, trusted = env.bodies()
    assert not any(n.startswith("mcp__") for n in tool_names(untrusted))
    assert "mcp__proj__echo" in tool_names(trusted)


def test_a_failing_server_leaves_the_others_working(mcp_env):
    env = mcp_env([call("mcp__demo__echo", {"text": "still"}), answer()])
    env.write_mcp({
        "broken": stdio_entry("crash-on-start", exposure="direct"),
        "hangs": stdio_entry("hang-initialize", exposure="direct", timeout=2),
        "demo": stdio_entry(exposure="direct"),
        "bad": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    })  # fmt: skip
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    assert 'server "bad": legacy SSE transport is not supported' in done.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "echo: still"


def test_annotations_reach_extensions(mcp_env, tmp_path):
    mcp_tools = "[t for t in pi.get_all_tools() if t['name'].startswith('mcp__')]"
    ext = turn_end_dump(tmp_path / "show_tools.py", mcp_tools)
    out = tmp_path / "tools.json"
    env = mcp_env([answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("-e", str(ext), "go", env={"OUT": str(out)})
    assert done.returncode == 0, done.stderr
    tools = {t["name"]: t for t in json.loads(out.read_text())}
    assert tools["mcp__demo__echo"]["annotations"] == {"readOnlyHint": True}
    assert tools["mcp__demo__echo"]["source"] == "mcp"


def test_http_server_tool_call(mcp_env, http_server):
    url = http_server()
    env = mcp_env([call("mcp__web__echo", {"text": "over http"}), answer()])
    env.write_mcp({"web": {"url": url, "exposure": "direct", "headers": {"X-Token": "${DEMO_TOKEN}"}}})
    done = env.prompt("go", env={"DEMO_TOKEN": "t0k"})
    assert done.returncode == 0, done.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "echo: over http"


def test_resources_are_listed_and_read(mcp_env):
    env = mcp_env([
        call("list_mcp_resources", {}),
        call("read_mcp_resource", {"server": "demo", "uri": "demo://readme"}),
        call("read_mcp_resource", {"server": "demo", "uri": "demo://blob.bin"}),
        call("list_mcp_resource_templates", {"server": "demo"}),
        answer(),
    ])  # fmt: skip
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    bodies = env.bodies()
    listing = json.loads(tool_messages(bodies[1])[-1]["content"])
    assert {r["uri"] for r in listing["resources"]} >= {"demo://readme", "demo://blob.bin"}
    assert all(r["server"] == "demo" for r in listing["resources"])
    assert tool_messages(bodies[2])[-1]["content"] == "Read me first."
    assert "saved to" in tool_messages(bodies[3])[-1]["content"]
    templates = json.loads(tool_messages(bodies[4])[-1]["content"])
    assert templates["server"] == "demo"
    assert templates["resourceTemplates"][0]["uriTemplate"] == "demo://item/{item_id}"


def test_tool_list_change_adds_tools(mcp_env):
    env = mcp_env([call("mcp__demo__grow"), call("mcp__demo__extra"), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    bodies = env.bodies()
    assert "mcp__demo__extra" not in tool_names(bodies[0])
    assert "mcp__demo__extra" in tool_names(bodies[1])
    assert tool_messages(bodies[2])[-1]["content"] == "extra!"


def test_server_logging_goes_to_mcp_log(mcp_env):
    env = mcp_env([call("mcp__demo__shout", {"text": "hey"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    log = (env.home / "mcp.log").read_text()
    assert "[demo] info" in log and "shouting hey" in log


def test_slow_tool_with_progress_outlives_its_timeout(mcp_env):
    env = mcp_env([call("mcp__demo__slow", {"seconds": 8}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct", timeout=4)})  # also bounds initialize
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "slept 8.0"


def test_silent_slow_tool_times_out_and_the_session_goes_on(mcp_env):
    env = mcp_env(
        [call("mcp__demo__sleepy", {"seconds": 30}), call("mcp__demo__echo", {"text": "after"}), answer()]
    )
    env.write_mcp({"demo": stdio_entry(exposure="direct", timeout=4)})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    bodies = env.bodies()
    assert "did not answer within 4 s" in tool_messages(bodies[1])[-1]["content"]
    assert tool_messages(bodies[2])[-1]["content"] == "echo: after"


def test_without_servers_the_sdk_is_never_imported(mcp_env, tmp_path):
    mcp_modules = (
        "sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'piko.plugins.mcp.')))"
    )
    ext = turn_end_dump(tmp_path / "modules.py", mcp_modules)
    out = tmp_path / "modules.json"
    env = mcp_env([answer(), answer()])
    assert env.prompt("-e", str(ext), "go", env={"OUT": str(out)}).returncode == 0
    # only to see there is no mcp.json
    assert json.loads(out.read_text()) == ["piko.plugins.mcp.config_files"]
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    assert env.prompt("-e", str(ext), "go", env={"OUT": str(out)}).returncode == 0
    assert "mcp.client.session" in json.loads(out.read_text())


def test_server_notifications_reach_extensions_on_the_event_bus(mcp_env, tmp_path):
    ext = tmp_path / "listen.py"
    out = tmp_path / "notes.jsonl"
    ext.write_text(
        "import json, os\n"
        "def activate(pi):\n"
        "    def on_note(data):\n"
        "        with open(os.environ['OUT'], 'a') as f:\n"
        "            f.write(json.dumps(data) + '\\n')\n"
        "    pi.events.on('mcp_notification', on_note)\n"
    )
    env = mcp_env([call("mcp__demo__shout", {"text": "hey"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("-e", str(ext), "go", env={"OUT": str(out)})
    assert done.returncode == 0, done.stderr
    notes = [json.loads(line) for line in out.read_text().splitlines()]
    logged = [n for n in notes if n["method"] == "notifications/message"]
    assert logged and logged[0]["server"] == "demo" and logged[0]["params"]["data"] == "shouting hey"


def test_failed_servers_are_reported_once(mcp_env):
    env = mcp_env([answer(), answer()])
    env.write_mcp(
        {"broken": stdio_entry("crash-on-start", exposure="direct"), "demo": stdio_entry(exposure="direct")}
    )
    done = env.run("-p", "--provider", "mock", "--model", "mock-1", "--continue", "go")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [  # one line, no traceback of the SDK's
        'Warning: MCP server "broken" failed: Connection closed (stderr: fatal: missing API key)'
    ]


def test_stdio_cwd_env_and_home_expansion(mcp_env):
    env = mcp_env([call("mcp__demo__where"), answer()])
    (env.work / "sub").mkdir()
    home = env.home.parent  # $HOME of the run
    (home / "servers").mkdir()
    (home / "servers" / "demo.py").write_text(Path(stdio_entry()["args"][0]).read_text())
    env.write_mcp({"demo": {"command": sys.executable, "args": ["~/servers/demo.py"], "cwd": "sub",
                            "env": {"DEMO_VALUE": "v-${DEMO_SECRET}"}, "exposure": "direct"}})  # fmt: skip
    done = env.prompt("go", env={"DEMO_SECRET": "s3"})
    assert done.returncode == 0, done.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == f"{env.work / 'sub'} v-s3"


def test_mcp_calls_go_through_tool_call_and_tool_result(mcp_env, tmp_path):
    ext = tmp_path / "gate.py"
    ext.write_text(
        "def activate(pi):\n"
        "    def gate(event, ctx):\n"
        "        if event.tool_name == 'mcp__demo__shout':\n"
        "            return {'block': True, 'reason': 'shouting is not allowed'}\n"
        "    def patch(event, ctx):\n"
        "        if event.tool_name == 'mcp__demo__echo':\n"
        "            return {'content': [{'type': 'text', 'text': 'patched ' + event.content[0].text}]}\n"
        "    pi.on('tool_call', gate)\n"
        "    pi.on('tool_result', patch)\n"
    )
    env = mcp_env([call("mcp__demo__shout", {"text": "x"}), call("mcp__demo__echo", {"text": "y"}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("-e", str(ext), "go")
    assert done.returncode == 0, done.stderr
    bodies = env.bodies()
    assert "shouting is not allowed" in tool_messages(bodies[1])[-1]["content"]
    assert not (env.home / "mcp.log").exists()  # the server was never asked to shout
    assert tool_messages(bodies[2])[-1]["content"] == "patched echo: y"


def test_tools_loaded_by_tool_search_stay_declared_on_the_branch(mcp_env):
    env = mcp_env([call("tool_search", {"query": "echo"}), answer(), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="deferred")})
    assert env.prompt("go").returncode == 0
    done = env.prompt("--continue", "again")
    assert done.returncode == 0, done.stderr
    resumed = env.bodies()[2]
    assert "mcp__demo__echo" in tool_names(resumed)


def test_a_managed_policy_allowlist_decides_which_servers_start(mcp_env, tmp_path):
    env = mcp_env([answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct"), "other": stdio_entry(exposure="direct")})
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"mcpServers": {"allow": ["demo"]}}))
    done = env.prompt("go", env={"PIKO_POLICY": str(policy)})
    assert done.returncode == 0, done.stderr
    assert f"MCP server 'other' is not in mcpServers.allow of the managed policy {policy}" in done.stderr
    names = tool_names(env.bodies()[0])
    assert "mcp__demo__echo" in names and not any(n.startswith("mcp__other__") for n in names)
