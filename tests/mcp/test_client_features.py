"""What piko offers a server as an MCP client, as pi 1.6 does: roots (the session's folder);
sampling and elicitation neither declared nor served, a server's request for them declined."""

from __future__ import annotations

import json

import pytest
from mcp_support import answer
from mcp_support import call
from mcp_support import stdio_entry
from mcp_support import tool_messages

from piko.testing.rpc_client import RpcProcess

pytestmark = pytest.mark.timeout(120)
TOOLS = ["client_info", "roots", "sample", "ask"]


def turns() -> list[dict]:
    return [call(f"mcp__demo__{name}") for name in TOOLS] + [answer()]


def check(env) -> None:
    results = [tool_messages(body)[-1]["content"] for body in env.bodies()[1:]]
    assert json.loads(results[0]) == {"capabilities": {"roots": {"listChanged": True}}, "client": "pi"}
    assert json.loads(results[1]) == [{"uri": env.work.resolve().as_uri(), "name": env.work.name}]
    assert results[2] == "declined: Sampling not supported"
    assert results[3] == "declined: Elicitation not supported"


@pytest.mark.parametrize("mode", ["print", "json"])
def test_roots_are_offered_and_sampling_and_elicitation_declined(mcp_env, mode: str) -> None:
    env = mcp_env(turns())
    env.write_mcp({"demo": stdio_entry("client-features", exposure="direct")})
    done = env.prompt(*(["--mode", "json"] if mode == "json" else []), "go")
    assert done.returncode == 0, done.stderr
    check(env)


def test_in_rpc_mode_the_requests_are_declined_without_asking_the_client(mcp_env) -> None:
    env = mcp_env(turns())
    env.write_mcp({"demo": stdio_entry("client-features", exposure="direct")})
    rpc = RpcProcess(
        env.home, env.work, ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"], env.environment()
    )
    try:
        records = rpc.prompt("go", timeout=90)
    finally:
        assert rpc.close() == 0, rpc.stderr
    check(env)
    # pi 1.6 routes none of them to the user: no extension UI request was sent
    assert not [r for r in records if r.get("type") == "extension_ui_request" and r.get("method") != "notify"]
