"""``--tools`` and ``--exclude-tools`` with MCP tools: exact names select or drop them, unreported
(the plugin's ``piko_tool_registers_later``); without MCP the same names are unknown as before."""

from __future__ import annotations

import pytest
from mcp_support import answer
from mcp_support import stdio_entry
from mcp_support import tool_names

pytestmark = pytest.mark.timeout(120)
UNKNOWN = "Unknown tool(s) in"


def test_an_exact_mcp_name_in_tools_selects_it_without_a_warning(mcp_env) -> None:
    env = mcp_env([answer(), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct"), "other": stdio_entry(exposure="deferred")})
    done = env.prompt("--tools", "read,mcp__demo__echo,mcp__other__echo,tool_search", "go")
    assert done.returncode == 0, done.stderr
    assert UNKNOWN not in done.stderr
    # a deferred tool named in --tools is still reached through tool_search only (as in pi 1.6)
    assert tool_names(env.bodies()[0]) == ["read", "mcp__demo__echo", "tool_search"]
    done = env.prompt("--tools", "read,mcp__demo__nope", "go")
    assert done.returncode == 0, done.stderr
    assert UNKNOWN not in done.stderr  # it may yet appear (pi 1.6 does not report it either)
    assert tool_names(env.bodies()[1]) == ["read"]


def test_exclude_tools_drops_mcp_tools(mcp_env) -> None:
    env = mcp_env([answer(), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    done = env.prompt("--exclude-tools", "mcp__demo__echo", "go")
    assert done.returncode == 0, done.stderr
    assert UNKNOWN not in done.stderr
    names = tool_names(env.bodies()[0])
    assert "mcp__demo__echo" not in names and "mcp__demo__get_thing" in names and "read" in names
    assert env.prompt("--exclude-tools", "mcp__*", "go").returncode == 0
    assert not any(n.startswith("mcp__") for n in tool_names(env.bodies()[1]))


@pytest.mark.parametrize("how", ["--no-mcp", "blocked"])
def test_piko_tool_registers_later_is_silent_without_mcp(mcp_env, how: str) -> None:
    env = mcp_env([answer()])
    env.write_mcp({"demo": stdio_entry(exposure="direct")})
    args = ["--no-mcp"] if how == "--no-mcp" else []
    blocked = {"PIKO_DISABLE_PLUGINS": "mcp"} if how == "blocked" else {}
    done = env.prompt(*args, "--tools", "read,mcp__demo__echo", "go", env=blocked)
    assert done.returncode == 0, done.stderr
    assert "Unknown tool(s) in --tools: mcp__demo__echo" in done.stderr
    assert tool_names(env.bodies()[0]) == ["read"]
