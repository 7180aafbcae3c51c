"""Tool selection as pi 1.6 does it: ``--tools`` patterns and ``+name``/``-name`` entries,
``--exclude-tools``, ``--no-tools``, ``--no-builtin-tools``, ``defaultTools`` in both settings
files, and resumed sessions keeping their tools (each expectation checked against pi 1.6.0)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_harness import MOCK
from agent_harness import OK

HELLO_EXT = (
    "def activate(pi):\n"
    "    pi.register_tool(name='hello', label='Hello', description='Say hello',\n"
    "                     parameters={'type': 'object', 'properties': {}},\n"
    "                     execute=lambda *a: {'content': [{'type': 'text', 'text': 'hi'}]})\n"
)


@pytest.mark.parametrize(
    ("flags", "tools"),
    [
        (("--tools", "*"), ["read", "bash", "edit", "write", "grep", "find", "ls"]),
        (("--tools", "gr*,r*"), ["read", "grep"]),  # patterns: in registration order
        (("--tools", "f*,ls,e*"), ["ls", "edit", "find"]),  # names first, in their order
        (("--tools", "ls,*"), ["ls", "read", "bash", "edit", "write", "grep", "find"]),
        (("--tools", "+grep,-bash"), ["read", "edit", "write", "grep"]),
        (("-t", "-read,+ls,-ls"), ["bash", "edit", "write"]),
        (("--exclude-tools", "b*,write"), ["read", "edit"]),
        (("-xt", "*"), []),
        (("--tools", "ls", "--exclude-tools", "ls"), []),
        (("--no-tools", "--tools", "+grep"), ["grep"]),
        (("--no-builtin-tools", "--tools", "+grep"), ["grep"]),
        (("--no-tools", "--exclude-tools", "read"), []),
        (("--tools", "read", "--tools", "grep"), ["grep"]),  # the last one wins
    ],
)
def test_tool_lists(pi_env: Any, flags: tuple[str, ...], tools: list[str]) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--no-session", *flags, *MOCK, "hi")
    assert (done.returncode, done.stderr) == (0, "")
    assert env.tool_names() == tools


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("read,+grep", "tool names cannot be mixed with +name or -name entries"),
        ("+gr*", "+name and -name entries take exact tool names, not patterns: +gr*"),
    ],
)
def test_bad_tool_lists_are_refused_before_any_request(pi_env: Any, value: str, error: str) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--tools", value, *MOCK, "hi")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: --tools: {error}\n")
    assert env.server.requests == [] and env.sessions() == []


def test_unknown_names_are_reported_once_and_the_rest_runs(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--tools", "ls,nope,x*,nope", "--exclude-tools", "ls,gone", *MOCK, "hi")
    assert done.returncode == 0 and done.stdout == "ok\n"
    assert done.stderr == (
        "Warning: Unknown tool(s) in --tools: nope\nWarning: Unknown tool(s) in --exclude-tools: gone\n"
    )  # a pattern (x*) is never unknown: it may match tools registered later (MCP servers)
    assert env.tool_names() == []


def test_unknown_modifier_names_are_reported(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--tools", "+nope,-bash", *MOCK, "hi")
    assert done.stderr == "Warning: Unknown tool(s) in --tools: +nope\n"
    assert env.tool_names() == ["read", "edit", "write"]


def test_extension_tools_follow_the_selection(pi_env: Any) -> None:
    env = pi_env(OK * 4)
    ext = str(env.write("hello_ext.py", HELLO_EXT))
    for flags in (("--tools", "+grep"), ("--tools", "h*"), ("--no-tools",), ("--exclude-tools", "hel*")):
        assert env.run("-p", "--no-session", "-e", ext, *flags, *MOCK, "hi").returncode == 0
    assert [env.tool_names(i) for i in range(4)] == [
        ["read", "bash", "edit", "write", "grep", "hello"],
        ["hello"],
        [],
        ["read", "bash", "edit", "write"],
    ]


@pytest.mark.parametrize(
    ("global_tools", "project_tools", "tools"),
    [
        (["+grep"], None, ["read", "bash", "edit", "write", "grep"]),
        (["read", "-read", "+ls"], ["+find"], ["ls", "find"]),
        (["-bash", "+grep"], ["bash"], ["bash"]),  # a plain name in the project replaces
        ([], None, []),
        (None, ["+ls"], ["read", "bash", "edit", "write", "ls"]),
        (["grep"], ["-grep", "+find"], ["find"]),
    ],
)
def test_default_tools_setting(
    pi_env: Any, global_tools: list[str] | None, project_tools: list[str] | None, tools: list[str]
) -> None:
    env = pi_env(OK)
    if global_tools is not None:
        env.settings({"defaultTools": global_tools})
    if project_tools is not None:
        env.settings({"defaultTools": project_tools}, project=True)
    # -a: the project's settings count only in a trusted project
    assert env.run("-p", "--no-session", "-a", *MOCK, "hi").returncode == 0
    assert env.tool_names() == tools


def test_tools_flags_override_default_tools(pi_env: Any) -> None:
    env = pi_env(OK * 3)
    env.settings({"defaultTools": ["grep", "find"]})
    for flags in (("--tools", "+ls"), ("--tools", "read"), ("--no-builtin-tools",)):
        assert env.run("-p", "--no-session", *flags, *MOCK, "hi").returncode == 0
    assert [env.tool_names(i) for i in range(3)] == [["grep", "find", "ls"], ["read"], []]


def test_resumed_sessions_keep_their_tools(pi_env: Any) -> None:
    env = pi_env(OK * 8)
    runs = [
        (("--tools", "read,grep"), ["read", "grep"]),
        ((), ["read", "grep"]),
        (("--tools", "+ls"), ["read", "grep", "ls"]),
        ((), ["read", "grep", "ls"]),
        (("--tools", "bash"), ["bash"]),
        ((), ["bash"]),
        # pi 1.6 declares the records' replay order (kept tools first) on the run that changes
        # the tools too, not the order --tools gives (checked against pi 1.6.0)
        (("--tools", "read,bash,edit,write"), ["bash", "read", "edit", "write"]),
        ((), ["bash", "read", "edit", "write"]),
    ]
    for i, (flags, _tools) in enumerate(runs):
        resume = ("-c",) if i else ()
        done = env.run("-p", *resume, *flags, *MOCK, f"prompt {i}")
        assert done.returncode == 0, done.stderr
    assert [env.tool_names(i) for i in range(len(runs))] == [tools for _flags, tools in runs]
    assert len(env.sessions()) == 1
    records = [
        ([t["name"] for t in m.get("toolsAdded") or []], [t["name"] for t in m.get("toolsRemoved") or []])
        for e in env.session_lines() if (m := e.get("message") or {}).get("role") == "system"
    ]  # fmt: skip
    assert records == [
        (
            ["read", "grep"],
            ["bash", "edit", "find", "ls", "write"],
        ),  # declared whole (known inactive: removed)
        (["ls"], []),
        (["bash"], ["read", "grep", "ls"]),
        (["read", "edit", "write"], []),
    ]  # pi 1.6's records: patches after the first
    assert len([e for e in env.session_lines() if e.get("message", {}).get("role") == "user"]) == 8


def test_default_sessions_record_no_tools(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    assert env.run("-p", *MOCK, "one").returncode == 0
    assert env.run("-p", "-c", *MOCK, "two").returncode == 0
    assert not [e for e in env.session_lines() if (e.get("message") or {}).get("role") == "system"]
    assert env.tool_names(1) == ["read", "bash", "edit", "write"]


def test_extension_tool_changes_survive_a_resume(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    ext = env.write(
        "narrow.py",
        "def activate(pi):\n"
        "    def started(event, ctx):\n"
        "        pi.set_active_tools(['read', 'ls'])\n"
        "    pi.on('session_start', started)\n",
    )
    assert env.run("-p", "-e", str(ext), *MOCK, "one").returncode == 0
    assert env.run("-p", "-c", *MOCK, "two").returncode == 0
    assert env.tool_names(0) == env.tool_names(1) == ["read", "ls"]


def test_resume_reads_the_loadout_pi_1_6_records(pi_env: Any) -> None:
    """pi 1.6 records its tools as ``system`` messages with ``toolsAdded``/``toolsRemoved``."""
    env = pi_env(OK * 2)
    assert env.run("-p", *MOCK, "one").returncode == 0
    (path,) = env.sessions()
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])

    def system(id: str, parent: str, added: list[str], removed: list[str]) -> str:
        message: dict[str, Any] = {"role": "system", "content": "", "timestamp": 1}
        if added:
            message["toolsAdded"] = [{"name": n, "description": n, "parameters": {}} for n in added]
        if removed:
            message["toolsRemoved"] = [{"name": n} for n in removed]
        entry = {"type": "message", "id": id, "parentId": parent, "timestamp": last["timestamp"]}
        return json.dumps({**entry, "message": message})

    lines += [system("s1", last["id"], ["read", "grep"], []), system("s2", "s1", ["find"], ["read"])]
    path.write_text("\n".join(lines) + "\n")
    done = env.run("-p", "-c", *MOCK, "two")
    assert done.returncode == 0, done.stderr
    assert env.tool_names(1) == ["grep", "find"]


def test_a_record_that_removes_and_adds_a_tool_keeps_it() -> None:
    """pi 1.6 re-declares a tool whose declaration changed (removed and added in one record)."""
    from types import SimpleNamespace

    from piko.engine.tool_selection import recorded_loadout

    def system(added: list[str], removed: list[str]) -> Any:
        message = {"role": "system", "toolsAdded": [{"name": n} for n in added],
                   "toolsRemoved": [{"name": n} for n in removed]}  # fmt: skip
        return SimpleNamespace(type="message", role="system", raw={"message": message})

    loadout = recorded_loadout([system(["read", "grep"], []), system(["grep", "ls"], ["grep", "read"])])
    assert loadout is not None and loadout.active == ("grep", "ls")
