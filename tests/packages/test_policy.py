"""The managed policy file: plugins, providers, package sources and project code; fails closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pkg_env import PiEnv

from piko.config.policy import Policy
from piko.config.policy import load_policy
from piko.config.policy import parse_policy


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def test_parse_and_rules() -> None:
    policy = parse_policy(
        {
            "plugins": {"allow": ["acme.*"], "block": ["tools.bash", "acme.bad"]},
            "providers": {"block": ["openai*"]},
            "packageSources": {"allow": ["pip:acme-*", "git:git.acme.com/*"], "block": ["pip:acme-evil"]},
            "allowProjectCode": False,
        },
        "/etc/piko/policy.json",
    )
    assert policy.blocks_plugin("tools.bash", builtin=True)
    assert not policy.blocks_plugin("tools.read", builtin=True)  # allowlists are for third-party plugins
    assert not policy.blocks_plugin("acme.tools", builtin=False)
    assert policy.blocks_plugin("acme.bad", builtin=False)
    assert policy.blocks_plugin("someone.else", builtin=False)
    assert not policy.allows_provider("openai-codex") and policy.allows_provider("anthropic")
    assert policy.allows_source("pip:acme-tools", "pip:acme-tools>=2")
    assert not policy.allows_source("pip:acme-evil")
    assert not policy.allows_source("npm:acme-skills")
    assert policy.allows_source("git:git.acme.com/team/tools")
    assert policy.allow_project_code is False


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "must be a JSON object"),
        ({"plugin": {}}, "unknown key(s) plugin"),
        ({"plugins": {"allow": "x"}}, "plugins.allow must be a list of strings"),
        ({"plugins": {"deny": []}}, "unknown key(s) in 'plugins': deny"),
        ({"allowProjectCode": "no"}, "must be true or false"),
    ],
)
def test_malformed_policies_are_refused(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_policy(data)


def test_files_combine_strictly_and_broken_ones_fail_closed(tmp_path: Path) -> None:
    first, second, broken = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    _write(first, {"plugins": {"allow": ["a*", "b*"], "block": ["x"]}})
    _write(second, {"plugins": {"allow": ["b*"]}, "allowProjectCode": False})
    broken.write_text("{not json", encoding="utf-8")
    combined = load_policy([first, second, tmp_path / "missing.json"])
    assert combined.paths == [str(first), str(second)]
    assert combined.blocks_plugin("alpha", builtin=False)  # allowed by one file only
    assert not combined.blocks_plugin("beta", builtin=False)
    assert combined.blocks_plugin("x", builtin=True)
    assert combined.allow_project_code is False
    assert load_policy([]) == Policy()
    failed = load_policy([broken])
    assert failed.failed and failed.errors[0].startswith(f"{broken}: ")
    assert failed.blocks_plugin("anything", builtin=False) and not failed.blocks_plugin(
        "tools.read", builtin=True
    )
    assert not failed.allows_source("pip:x")


def test_policy_blocks_plugins_that_settings_cannot_unblock(pienv: PiEnv) -> None:
    pienv.pi("install", "pip:piko-hello")
    pienv.pi("install", "pip:piko-other")
    _write(pienv.policy, {"plugins": {"allow": ["hello"], "block": ["tools.ls"]}})
    plugins = {p["name"]: p for p in json.loads(pienv.pi("plugins", "--json").stdout)["plugins"]}
    assert plugins["other"]["blocked"] and plugins["other"]["blockedBy"] == "policy"
    assert plugins["tools.ls"]["blockedBy"] == "policy"
    assert not plugins["hello"]["blocked"] and not plugins["tools.read"]["blocked"]
    table = pienv.pi("plugins").stdout
    assert any(line.startswith("other ") and "blocked (policy)" in line for line in table.splitlines())
    # neither settings, the environment nor pi config can bring it back
    probe = pienv.probe(PIKO_PLUGINS="other,hello")
    assert probe["plugins"]["other"]["blockedBy"] == "policy" and "other_tool" not in probe["tools"]
    refused = pienv.pi("config", "enable", "other", check=False)
    assert refused.returncode == 1 and f"blocked by policy ({pienv.policy})" in refused.stderr
    # a policy block wins over a settings block in what pi plugins shows
    _write(
        pienv.agent_dir / "settings.json",
        {"packages": ["pip:piko-hello", "pip:piko-other"], "disabledPlugins": ["other"]},
    )
    assert pienv.probe()["plugins"]["other"]["blockedBy"] == "policy"


def test_policy_blocks_package_sources(pienv: PiEnv) -> None:
    _write(pienv.policy, {"packageSources": {"allow": ["pip:piko-*"], "block": ["pip:piko-other"]}})
    refused = pienv.pi("install", "pip:piko-other", check=False)
    assert refused.returncode == 1
    assert (
        refused.stderr.strip().splitlines()[-1]
        == f"Error: pip:piko-other is blocked by policy ({pienv.policy})"
    )
    assert not (pienv.agent_dir / "settings.json").exists()
    assert (
        pienv.pi("install", "git:github.com/acme/tools", check=False)
        .stderr.strip()
        .endswith("blocked by policy (" + str(pienv.policy) + ")")
    )
    pienv.pi("install", "pip:piko-hello")
    # a source listed in settings before the policy arrived is neither installed nor loaded
    _write(pienv.agent_dir / "settings.json", {"packages": ["pip:piko-hello", "pip:piko-other"]})
    probe = pienv.probe()
    assert "other_tool" not in probe["tools"] and "piko_other" not in pienv.installed()
    assert f"package pip:piko-other blocked by policy ({pienv.policy})" in probe["diagnostics"]
    assert "! package pip:piko-other blocked by policy" in pienv.pi("plugins").stdout
    assert "pip:piko-other (not installed, blocked by policy)" in pienv.pi("list").stdout


def test_policy_can_forbid_project_code(pienv: PiEnv) -> None:
    project = pienv.root / "proj"
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "x.py").write_text("", encoding="utf-8")
    pienv.pi("trust", cwd=project)
    _write(pienv.policy, {"allowProjectCode": False})
    probe = pienv.probe(cwd=project)
    assert probe["trusted"] is False and "x" not in probe["plugins"]
    assert any("project code is disabled by policy" in n for n in probe["notices"])
    refused = pienv.pi("trust", cwd=project, check=False)
    assert refused.returncode == 1 and "Error: project code is disabled by policy" in refused.stderr


def test_broken_policy_file_fails_closed(pienv: PiEnv) -> None:
    pienv.pi("install", "pip:piko-hello")
    pienv.policy.write_text('{"plugins": ', encoding="utf-8")
    result = pienv.pi("plugins")
    assert any(
        line.startswith("hello ") and "blocked (policy)" in line for line in result.stdout.splitlines()
    )
    assert (  # in the table's diagnostics (pi plugins prints them there only)
        "third-party plugins, package sources and project code are disabled until it is fixed"
        in result.stdout
    )
    assert any(line.startswith("tools.read ") and "active" in line for line in result.stdout.splitlines())


# -- managed policy: tools, models, MCP servers, forced settings, `pi policy show` (issue 21) --


def test_new_sections_name_the_rule_and_the_file(tmp_path: Path) -> None:
    company, team = tmp_path / "company.json", tmp_path / "team.json"
    _write(company, {"tools": {"block": ["bash"]}, "models": {"allow": ["acme/*", "anthropic/claude-*"]}})
    _write(
        team,
        {"mcpServers": {"allow": ["docs", "npx -y @acme/*"]}, "settings": {"defaultProjectTrust": "never"}},
    )
    policy = load_policy([company, team])
    assert not policy.allows_tool("bash") and policy.allows_tool("read")
    assert (
        policy.violation("tools", "bash")
        == f"tool 'bash' is blocked by tools.block of the managed policy {company}"
    )
    assert policy.allows_model("anthropic", "claude-sonnet-4-5") and not policy.allows_model(
        "openai", "gpt-5"
    )
    assert policy.violation("models", "openai/gpt-5") == (
        f"model 'openai/gpt-5' is not in models.allow of the managed policy {company}"
    )
    assert policy.allows_mcp_server("docs") and policy.allows_mcp_server("x", "npx -y @acme/search")
    assert not policy.allows_mcp_server("other", "npx -y evil")
    assert policy.settings == {"defaultProjectTrust": "never"} and policy.settings_from == {
        "defaultProjectTrust": str(team)
    }
    with pytest.raises(ValueError, match="'settings' must be an object"):
        parse_policy({"settings": ["x"]})


def test_a_blocked_tool_is_never_registered(pienv: PiEnv) -> None:
    _write(pienv.policy, {"tools": {"block": ["bash", "ed*"]}})
    probe = pienv.probe()
    assert "bash" not in probe["tools"] and "edit" not in probe["tools"] and "read" in probe["tools"]
    done = pienv.pi("--provider", "faux", "--tools", "bash,read", "-p", "hi")
    assert f"tool 'bash' is blocked by tools.block of the managed policy {pienv.policy}" in done.stderr
    assert done.stderr.count("tool 'bash' is blocked") == 1  # once


def test_models_outside_the_allowlist_cannot_be_chosen(pienv: PiEnv) -> None:
    _write(pienv.policy, {"models": {"allow": ["faux/*"]}})
    line = f"model 'anthropic/claude-sonnet-4-5' is not in models.allow of the managed policy {pienv.policy}"
    refused = pienv.pi(
        "--model", "anthropic/claude-sonnet-4-5", "-p", "hi", check=False, ANTHROPIC_API_KEY="sk-x"
    )
    assert refused.returncode == 1 and line in refused.stderr
    custom = pienv.pi(
        "--provider", "anthropic", "--model", "my-own", "-p", "hi", check=False, ANTHROPIC_API_KEY="sk-x"
    )
    assert custom.returncode == 1 and "anthropic/my-own" in custom.stderr and "models.allow" in custom.stderr
    listed = pienv.pi("--list-models", ANTHROPIC_API_KEY="sk-x").stdout
    assert "claude" not in listed
    assert pienv.pi("--provider", "faux", "-p", "hi").returncode == 0


def test_forced_settings_win_over_user_and_project_settings(pienv: PiEnv) -> None:
    _write(pienv.agent_dir / "settings.json", {"retry": {"maxRetries": 7}, "theme": "light"})
    _write(pienv.policy, {"settings": {"retry": {"maxRetries": 1}}})
    code = (
        "from piko.app.application import App\n"
        "app = App().boot(); app.settings.override('retry.maxRetries', 9)\n"
        "print(app.settings.get('retry.maxRetries'), app.settings.get('theme'), app.settings.is_forced('retry.maxRetries'))\n"
    )
    import subprocess

    done = subprocess.run(
        [str(pienv.python), "-c", code], env=pienv.env(), capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["1", "light", "True"], done.stderr


def test_pi_policy_show_lists_each_rule_with_its_file(pienv: PiEnv) -> None:
    assert "No managed policy" in pienv.pi("policy", "show").stdout
    _write(pienv.policy, {"tools": {"block": ["bash"]}, "settings": {"defaultProjectTrust": "never"}})
    shown = pienv.pi("policy", "show").stdout
    assert f"Managed policy from: {pienv.policy}" in shown
    assert any(
        "tools.block" in line and "bash" in line and str(pienv.policy) in line for line in shown.splitlines()
    )
    data = json.loads(pienv.pi("policy", "show", "--json").stdout)
    assert data["rules"]["tools"] == [{"rule": "block", "patterns": ["bash"], "file": str(pienv.policy)}]
    assert data["settings"] == [{"key": "defaultProjectTrust", "value": "never", "file": str(pienv.policy)}]


def test_a_broken_policy_stops_every_mode_with_one_line(pienv: PiEnv) -> None:
    pienv.policy.write_text('{"tools": ', encoding="utf-8")
    for args in (
        ["--provider", "faux", "-p", "hi"],
        ["--provider", "faux", "--mode", "rpc"],
        ["--provider", "faux"],
    ):
        refused = pienv.pi(*args, check=False)
        assert refused.returncode == 1, args
        errors = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
        assert (
            len(errors) == 1
            and "the managed policy cannot be used" in errors[0]
            and str(pienv.policy) in errors[0]
        )
    assert "unusable" in pienv.pi("policy", "show").stdout  # the diagnosis still works


def test_policy_rules_hold_in_rpc_mode(pienv: PiEnv) -> None:
    import subprocess

    _write(pienv.policy, {"models": {"allow": ["faux/*"]}, "tools": {"block": ["bash"]}})
    commands = [
        {"id": "1", "type": "get_available_models"},
        {"id": "2", "type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        {"id": "3", "type": "get_state"},
    ]
    done = subprocess.run(
        [str(pienv.python), "-m", "piko", "--provider", "faux", "--no-session", "--mode", "rpc"],
        input="".join(json.dumps(c) + "\n" for c in commands), capture_output=True, text=True,
        env=pienv.env(ANTHROPIC_API_KEY="sk-x"), cwd=pienv.root, timeout=60,
    )  # fmt: skip
    answers = {r["id"]: r for r in map(json.loads, done.stdout.splitlines()) if r.get("type") == "response"}
    assert {m["provider"] for m in answers["1"]["data"]["models"]} <= {"faux"}
    assert answers["2"]["success"] is False
    assert answers["3"]["data"]["model"]["provider"] == "faux"
    assert "tool 'bash' is blocked by tools.block" in done.stderr


def test_required_plugins_load_despite_settings_and_a_missing_one_stops_the_start(pienv: PiEnv) -> None:
    """``plugins.require``: settings and flags cannot switch a required plugin off, and a required
    plugin that is not installed stops every mode with one line naming the rule and the file."""
    _write(pienv.policy, {"plugins": {"require": ["tools.grep"]}})
    _write(pienv.agent_dir / "settings.json", {"disabledPlugins": ["tools.grep"]})
    probe = pienv.probe()
    assert "grep" in probe["tools"]
    assert "tools.grep" in pienv.pi("policy", "show").stdout
    shown = json.loads(pienv.pi("policy", "show", "--json").stdout)
    assert shown["rules"]["plugins"] == [
        {"rule": "require", "patterns": ["tools.grep"], "file": str(pienv.policy)}
    ]
    _write(pienv.policy, {"plugins": {"require": ["acme.audit"]}})
    line = f"plugin 'acme.audit' is required by plugins.require of the managed policy {pienv.policy} but is not loaded"
    for args in (["--provider", "faux", "-p", "hi"], ["--provider", "faux", "--mode", "rpc"]):
        refused = pienv.pi(*args, check=False)
        assert refused.returncode == 1, args
        assert [x for x in refused.stderr.splitlines() if x.startswith("Error:")] == [f"Error: {line}"]
    with pytest.raises(ValueError, match="unknown key"):
        parse_policy({"tools": {"require": ["bash"]}})
