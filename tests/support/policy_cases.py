"""The managed policy's rules as one table, run in print, RPC and interactive mode by
``tests/packages/test_policy_modes.py`` and ``tests/interactive/test_managed_policy.py``.

Each case writes a policy (and the settings, files and extensions it needs), starts piko with the
probe extension, and checks the line that names the rule (when a rule speaks) and the facts the
probe saw at ``session_start``: the tools, the models, a setting, the plugins loaded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import define
from attrs import field

PROBE_ENV = "POLICY_PROBE"

PROBE = """
import json, os


def activate(pi):
    def started(event, ctx):
        tools = pi.get_all_tools()
        facts = {
            "tools": [t["name"] for t in tools],
            "read_description": next((t["description"] for t in tools if t["name"] == "read"), None),
            "models": sorted(f"{m.provider}/{m.id}" for m in ctx.model_registry.available_models()),
            "model": f"{ctx.model.provider}/{ctx.model.id}" if ctx.model is not None else None,
            "max_retries": ctx.app.settings.get("retry.maxRetries"),
            "plugins": sorted(n for n, i in ctx.app.pm.infos.items() if not i.blocked),
        }
        with open(os.environ["POLICY_PROBE"], "w") as out:
            json.dump(facts, out)

    pi.on("session_start", started)
"""

OVERRIDER = """
def activate(pi):
    async def run(tool_call_id, params, signal, on_update, ctx):
        return {"content": [{"type": "text", "text": "overridden"}]}

    pi.register_tool({"name": "read", "description": "OVERRIDDEN", "parameters": {"type": "object"},
                      "execute": run}, override=True)
"""


@define(kw_only=True, frozen=True)
class PolicyCase:
    """One rule: the policy, what else it needs, the line naming it, and the check of the facts."""

    name: str
    policy: dict[str, Any]
    settings: dict[str, Any] = field(factory=dict)  # the user's settings.json
    agent_files: dict[str, str] = field(factory=dict)  # files in the agent dir (mcp.json)
    extensions: dict[str, str] = field(factory=dict)  # extension file name -> source, loaded with -e
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(factory=dict)
    line: str | None = None  # with {policy}: the policy file's path
    check: Callable[[dict[str, Any]], None] | None = None
    starts: bool = True  # False: the rule stops the start (exit 1, the line on stderr)

    def expected_line(self, policy: Path) -> str | None:
        return self.line.format(policy=policy) if self.line else None

    def write(self, policy: Path, agent_dir: Path, root: Path) -> list[str]:
        """Write the policy and the case's files; the extra command-line arguments (``-e``...)."""
        policy.write_text(json.dumps(self.policy), encoding="utf-8")
        for name, text in self.agent_files.items():
            (agent_dir / name).write_text(text, encoding="utf-8")
        args: list[str] = []
        for name, source in {"policy_probe.py": PROBE, **self.extensions}.items():
            path = root / name
            path.write_text(source, encoding="utf-8")
            args += ["-e", str(path)]
        return [*args, *self.args]


def _no_bash(facts: dict[str, Any]) -> None:
    assert "bash" not in facts["tools"] and "read" in facts["tools"]


def _builtin_read(facts: dict[str, Any]) -> None:
    assert facts["read_description"] != "OVERRIDDEN"


def _only_faux_models(facts: dict[str, Any]) -> None:
    """The key makes Anthropic's models usable but for the policy; faux (explicit only) runs."""
    assert not [m for m in facts["models"] if not m.startswith("faux/")], facts["models"]
    assert str(facts["model"]).startswith("faux/")


def _forced_retries(facts: dict[str, Any]) -> None:
    assert facts["max_retries"] == 1


def _no_grep(facts: dict[str, Any]) -> None:
    assert "grep" not in facts["tools"] and "tools.grep" not in facts["plugins"]


def _grep_kept(facts: dict[str, Any]) -> None:
    assert "grep" in facts["tools"] and "tools.grep" in facts["plugins"]


KEYS = {"ANTHROPIC_API_KEY": "sk-ant-policy-test"}  # another provider that would be usable

CASES = [
    PolicyCase(
        name="tools-block", policy={"tools": {"block": ["bash"]}}, args=("--tools", "bash,read"),
        line="tool 'bash' is blocked by tools.block of the managed policy {policy}", check=_no_bash,
    ),
    PolicyCase(
        name="tool-overrides", policy={"allowOverrides": False}, extensions={"overrider.py": OVERRIDER},
        line="tool 'read' of plugin 'tools.read' not overridden: overrides are forbidden by {policy}",
        check=_builtin_read,
    ),
    PolicyCase(name="models-allow", policy={"models": {"allow": ["faux/*"]}}, env=KEYS, check=_only_faux_models),
    PolicyCase(name="providers-allow", policy={"providers": {"allow": ["faux"]}}, env=KEYS, check=_only_faux_models),
    PolicyCase(
        name="mcp-servers-allow", policy={"mcpServers": {"allow": ["docs"]}},
        agent_files={"mcp.json": json.dumps({"mcpServers": {"other": {"command": sys.executable, "args": ["-c", "pass"]}}})},
        line="MCP server 'other' is not in mcpServers.allow of the managed policy {policy}",
    ),
    PolicyCase(
        name="forced-settings", policy={"settings": {"retry": {"maxRetries": 1}}},
        settings={"retry": {"maxRetries": 7}}, check=_forced_retries,
    ),
    PolicyCase(name="forbidden-plugins", policy={"plugins": {"block": ["tools.grep"]}}, check=_no_grep),
    PolicyCase(
        name="required-plugins", policy={"plugins": {"require": ["tools.grep"]}},
        settings={"disabledPlugins": ["tools.grep"]}, check=_grep_kept,
    ),
    PolicyCase(
        name="required-plugin-missing", policy={"plugins": {"require": ["acme.audit"]}}, starts=False,
        line="plugin 'acme.audit' is required by plugins.require of the managed policy {policy} but is not loaded",
    ),
    PolicyCase(
        name="package-sources", policy={"packageSources": {"block": ["npm:*"]}},
        settings={"packages": ["npm:left-pad"]}, line="package npm:left-pad blocked by policy ({policy})",
    ),
]  # fmt: skip


def check_run(case: PolicyCase, policy: Path, probe: Path, output: str, returncode: int | None) -> None:
    """What every mode must show for ``case``: the line, the exit, the probe's facts."""
    line = case.expected_line(policy)
    if line is not None:  # compared with whitespace made single (the terminal wraps long lines)
        flat, text = " ".join(line.split()), " ".join(output.split())
        assert flat in text, f"{case.name}: {line!r} not in:\n{output}"
        assert text.count(flat) == 1, f"{case.name}: said {text.count(flat)} times:\n{output}"
    if not case.starts:
        assert returncode in (None, 1), returncode
        assert not probe.exists()
        return
    assert probe.exists(), f"{case.name}: the probe saw no session start:\n{output}"
    if case.check is not None:
        case.check(json.loads(probe.read_text()))
