"""The ``<mcp_servers>`` section of the system prompt: once per prompt, last, kept under a custom
or forced prompt, and rewritten in place when it changes (pi 1.6 does the same for every model
without ``compat.supportsMidConvoSystemMessages``, which piko does not implement)."""

from __future__ import annotations

import json
import sys

import pytest
from mcp_support import DEMO_SERVER
from mcp_support import answer
from mcp_support import call

pytestmark = pytest.mark.timeout(120)
SUMMARY = "- mcp__demo (tool_search): Demo tools for the piko tests."


def slow_demo() -> dict[str, object]:
    """The demo server, deferred, starting a second late (so the first prompt likely misses it)."""
    return {
        "command": "sh",
        "args": ["-c", f"sleep 1; exec {sys.executable} {DEMO_SERVER}"],
        "exposure": "deferred",
    }


def system_prompts(env) -> list[str]:
    return [body["messages"][0]["content"] for body in env.bodies()]


def test_the_section_is_rewritten_not_repeated_across_prompts(mcp_env) -> None:
    # the first prompt's tool_search waits for the server, so the later prompts know its summary
    env = mcp_env([call("tool_search", {"query": "echo"}), answer(), answer(), answer()])
    env.write_mcp({"demo": slow_demo()})
    done = env.prompt("first", "second", "third")
    assert done.returncode == 0, done.stderr
    prompts = system_prompts(env)
    assert len(prompts) == 4
    for prompt in prompts:
        assert prompt.count("<mcp_servers>") == 1 and prompt.rstrip().endswith("</mcp_servers>")
    assert SUMMARY in prompts[2] and SUMMARY in prompts[3]
    assert prompts[2] == prompts[3]


def test_the_section_follows_a_custom_appended_or_forced_prompt(mcp_env, tmp_path) -> None:
    ext = tmp_path / "also_appends.py"
    ext.write_text(
        "def activate(pi):\n"
        "    pi.on('before_agent_start', lambda event, ctx: {'system_prompt': event.system_prompt + '\\nEXTENSION.'})\n"
    )
    env = mcp_env([answer(), answer(), answer()])
    env.write_mcp({"demo": slow_demo()})
    (env.home / "SYSTEM.md").write_text("CUSTOM PROMPT.")
    (env.home / "APPEND_SYSTEM.md").write_text("APPENDED TEXT.")
    assert env.prompt("-e", str(ext), "one", "two").returncode == 0
    assert env.prompt("--system-prompt", "FORCED.", "three").returncode == 0
    custom, again, forced = system_prompts(env)
    for prompt in (custom, again):
        assert prompt.startswith("CUSTOM PROMPT.\n\nAPPENDED TEXT.")
        assert prompt.count("<mcp_servers>") == 1 and prompt.count("EXTENSION.") == 1
    assert forced.startswith("FORCED.") and forced.rstrip().endswith("</mcp_servers>")


def section_for(tmp_path, servers: dict[str, dict[str, object]]) -> str | None:
    from piko.plugins.mcp.config import load_config
    from piko.plugins.mcp.runtime import McpRuntime

    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    config = load_config(tmp_path, tmp_path, False)
    return McpRuntime(None, config, cwd=str(tmp_path), agent_dir=str(tmp_path), options={}).servers_section()


def test_the_section_fits_in_4096_characters(tmp_path) -> None:
    entry = {"command": "x", "exposure": "deferred"}
    few = section_for(
        tmp_path, {"a": {**entry, "description": "d" * 400}, "b": {**entry, "description": "  "}}
    )
    assert few is not None
    assert "- mcp__a (tool_search): " + "d" * 249 + "…\n" in few
    assert "- mcp__b (tool_search)\n" in few  # a blank description is no summary
    many = section_for(
        tmp_path, {f"server-{i:03d}": {**entry, "description": "word " * 60} for i in range(200)}
    )
    assert many is not None
    body = many.removeprefix("<mcp_servers>\n").removesuffix("\n</mcp_servers>")
    assert len(body) <= 4096
    lines = body.splitlines()
    assert lines[-1].startswith("- … ") and lines[-1].endswith(
        " more servers; find their tools with tool_search"
    )
    kept = len(lines) - 2
    assert int(lines[-1].split()[2]) == 200 - kept
    assert all(line.startswith("- mcp__server_") and ": " not in line for line in lines[1:-1])
    some = section_for(tmp_path, {f"s{i}": {**entry, "description": "word " * 60} for i in range(40)})
    assert some is not None and len(some) <= 4096 + len("<mcp_servers>\n\n</mcp_servers>")
    assert some.count("- mcp__s") == 40 and some.count("…") == 40  # all kept, summaries shortened
