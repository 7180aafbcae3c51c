"""When something a plugin gives is missing, piko says which plugin and why, in one line.

A blocked plugin is not imported, so what it registers is known from an earlier run (piko
remembers who registered what in its cache). A policy that allows one provider says so when
another is asked for, instead of warning about every built-in on every run. A mode that raises
ends in one line and exit 1 (the traceback only with ``PIKO_TRACE``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GATEWAY = """
from piko import hookimpl, Model

@hookimpl
def piko_register_providers(register):
    register("acme-gateway", {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions",
                              "apiKey": "k", "models": [{"id": "acme-1"}]})

@hookimpl
def piko_register_modes(register):
    register("acme-mode", "acme_gateway:run", description="Acme's mode")

def run(app):
    raise RuntimeError("the acme mode broke")
"""


def _install(fake_dist) -> None:
    fake_dist("acme_gateway", "1.0", {"acme.gateway": "acme_gateway"}, {"acme_gateway": GATEWAY})


def test_a_provider_and_a_mode_of_a_blocked_plugin_say_where_they_come_from(run_pi, env, fake_dist) -> None:
    _install(fake_dist)
    assert run_pi("plugins", pythonpath=[env.site]).code == 0  # a run that saw the plugin's registrations
    blocked = ["--disable-plugin", "acme.gateway"]
    provider = run_pi(
        *blocked, "-p", "--provider", "acme-gateway", "--model", "acme-1", "hi", pythonpath=[env.site]
    )
    assert provider.code == 1
    assert (
        "provider acme-gateway comes from plugin acme.gateway, blocked by --disable-plugin" in provider.stderr
    )
    mode = run_pi(*blocked, "--mode", "acme-mode", "hi", pythonpath=[env.site])
    assert mode.code == 1
    assert "mode acme-mode comes from plugin acme.gateway, blocked by --disable-plugin" in mode.stderr


def test_a_mode_that_raises_is_one_line_and_exit_1(run_pi, env, fake_dist) -> None:
    _install(fake_dist)
    done = run_pi("--mode", "acme-mode", "hi", pythonpath=[env.site])
    assert done.code == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "Error: mode 'acme-mode' (acme.gateway) failed: RuntimeError: the acme mode broke"
    )
    assert "Traceback" not in done.stderr
    traced = run_pi("--mode", "acme-mode", "hi", pythonpath=[env.site], env={"PIKO_TRACE": "1"})
    assert "Traceback" in traced.stderr and traced.code == 1


def test_a_policy_allowing_one_provider_warns_about_none_and_explains_the_others(
    run_pi, env, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"providers": {"allow": ["faux"]}}))
    policy_env = {"PIKO_POLICY": str(policy)}
    ok = run_pi("-p", "--provider", "faux", "hello", env=policy_env)
    assert ok.code == 0, ok
    assert "policy" not in ok.stderr
    refused = run_pi("-p", "--provider", "openai", "--model", "gpt-4o", "hello", env=policy_env)
    assert refused.code == 1
    assert f"provider openai is blocked by policy ({policy})" in refused.stderr


UNMARKED = """
from piko import hookimpl

def piko_register_tools(register):  # forgot @hookimpl
    register(name="never")
"""


def test_mistakes_are_reported_once_each(run_pi, env, fake_dist) -> None:
    fake_dist("acme_forgetful", "1.0", {"acme.forgetful": "acme_forgetful"}, {"acme_forgetful": UNMARKED})
    done = run_pi(
        "--disable-plugin",
        "tools.reed",
        "plugins",
        "--json",
        pythonpath=[env.site],
        env={"PIKO_DISABLE_PLUGINS": "nope"},
    )
    diagnostics = json.loads(done.stdout)["diagnostics"]
    assert "--disable-plugin names no plugin 'tools.reed' (see `pi plugins` for the names)" in diagnostics
    assert "PIKO_DISABLE_PLUGINS names no plugin 'nope' (see `pi plugins` for the names)" in diagnostics
    assert (
        "plugin 'acme.forgetful': piko_register_tools is not marked with @hookimpl, so piko never calls it"
        in diagnostics
    )
    assert len(diagnostics) == len(set(diagnostics))


def test_models_json_unknown_keys_and_an_unset_key_variable(run_pi, env) -> None:
    models = {
        "providers": {
            "acme": {
                "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "ACME_GATEWAY_KEY",
                "models": [{"id": "acme-1", "contextwindow": 8000}],
            }
        }
    }  # fmt: skip
    (env.agent_dir / "models.json").write_text(json.dumps(models))
    done = run_pi("-p", "--provider", "acme", "--model", "acme-1", "hi")
    assert done.code == 1
    assert "models.json: unknown key providers.acme.models.0.contextwindow (ignored;" in done.stderr
    assert "the environment variable ACME_GATEWAY_KEY is not set" in done.stderr


# ---------------------------------------------------------------------------
# A plugin author's walk-through: what a blocked, broken or refused plugin looks like
# ---------------------------------------------------------------------------


def _tool_and_provider_plugin(module: str, tool: str, description: str, provider: str) -> str:
    """The source of plugin module ``module``: one tool (answering "acme") and one provider."""
    return f"""
from piko import hookimpl

@hookimpl
def piko_register_tools(register):
    register(name={tool!r}, description={description!r}, execute="{module}:execute")

@hookimpl
def piko_register_providers(register):
    register({provider!r}, {{"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                  "apiKey": "k", "models": [{{"id": "acme-1"}}]}})

def execute(tool_call_id, params, signal, on_update, ctx):
    return "acme"
"""


ACME_TOOLS = _tool_and_provider_plugin("acme_tools", "acme_tool", "Acme's tool", "acme")

BROKEN_COMMANDS = """
from piko import hookimpl

@hookimpl
def piko_register_commands(register):
    raise RuntimeError("no database")
"""

DUPLICATE_READ = """
from piko import hookimpl

@hookimpl
def piko_register_tools(register):
    register(name="read", description="acme's read", execute="acme_dup:execute")

def execute(tool_call_id, params, signal, on_update, ctx):
    return "acme"
"""

BROKEN_IMPORT = "import acme_module_that_is_not_there\n"


def _blocked(env, how: str, tmp_path: Path) -> tuple[list[str], dict[str, str], str]:
    """Arguments and variables that block ``acme.tools`` the way ``how`` says, and what piko calls it."""
    if how == "flag":
        return ["--disable-plugin", "acme.tools"], {}, "--disable-plugin"
    if how == "env":
        return [], {"PIKO_DISABLE_PLUGINS": "acme.tools"}, "PIKO_DISABLE_PLUGINS"
    if how == "settings":
        (env.agent_dir / "settings.json").write_text(json.dumps({"disabledPlugins": ["acme.tools"]}))
        return [], {}, "settings disabledPlugins"
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"plugins": {"block": ["acme.tools"]}}))
    return [], {"PIKO_POLICY": str(policy)}, "policy"


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("Warning:", "Error:"))]


@pytest.mark.parametrize("how", ["flag", "env", "settings", "policy"])
def test_a_tool_of_a_blocked_plugin_says_which_plugin_and_by_what(
    run_pi, env, fake_dist, tmp_path: Path, how: str
) -> None:
    fake_dist("acme_tools", "1.0", {"acme.tools": "acme_tools"}, {"acme_tools": ACME_TOOLS})
    assert run_pi("plugins", pythonpath=[env.site]).code == 0  # a run that saw the registrations
    args, variables, by = _blocked(env, how, tmp_path)
    done = run_pi(
        *args, "-p", "--provider", "faux", "--tools", "read,acme_tool,nosuch", "hi",
        pythonpath=[env.site], env=variables,
    )  # fmt: skip
    assert done.code == 0, done
    assert _warnings(done.stderr) == [
        "Warning: Unknown tool(s) in --tools: nosuch",
        f"Warning: tool acme_tool comes from plugin acme.tools, blocked by {by}",
    ]


def test_pi_plugins_in_a_terminal_prints_each_diagnostic_once(run_pi, env, fake_dist) -> None:
    fake_dist("acme_broken", "1.0", {"acme.broken": "acme_broken"}, {"acme_broken": BROKEN_IMPORT})
    fake_dist("acme_typo", "1.0", {"acme.typo": "acme_typo"},
              {"acme_typo": "from piko import hookimpl\n@hookimpl\ndef piko_tool_cal(event):\n    pass\n"})  # fmt: skip
    done = run_pi("--disable-plugin", "nope", "plugins", pythonpath=[env.site], terminal=True)
    assert done.code == 0, done
    for message in (
        "plugin 'acme.broken' failed to load: ModuleNotFoundError",
        "plugin 'acme.typo' not loaded: unknown hook piko_tool_cal",
        "--disable-plugin names no plugin 'nope'",
    ):
        assert done.stdout.count(message) == 1, done.stdout
    assert "acme.broken " in done.stdout and "failed: ModuleNotFoundError" in done.stdout
    piped = run_pi("--disable-plugin", "nope", "plugins", "--json", pythonpath=[env.site])
    assert piped.stderr == ""  # the JSON's diagnostics say it
    assert (
        "--disable-plugin names no plugin 'nope' (see `pi plugins` for the names)"
        in json.loads(piped.stdout)["diagnostics"]
    )


def test_a_failing_command_registration_hook_is_reported_once_on_print_runs(run_pi, env, fake_dist) -> None:
    fake_dist("acme_db", "1.0", {"acme.db": "acme_db"}, {"acme_db": BROKEN_COMMANDS})
    line = "Warning: plugin 'acme.db': piko_register_commands failed: RuntimeError: no database"
    for mode in (["-p"], ["--mode", "json"]):
        done = run_pi(*mode, "--provider", "faux", "hi", pythonpath=[env.site])
        assert done.code == 0, done
        assert done.stderr.splitlines().count(line) == 1, done
    listed = run_pi("plugins", "--check", pythonpath=[env.site])
    assert listed.code == 1
    row = next(row for row in listed.stdout.splitlines() if row.startswith("acme.db "))
    assert "failed: piko_register_commands failed: RuntimeError: no database" in row


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(["--provider", "acme"], id="provider"),
        pytest.param(["--provider", "acme", "--model", "acme-1"], id="provider-and-model"),
        pytest.param(["--model", "acme/acme-1"], id="model"),
        pytest.param(["--models", "acme/*"], id="models"),
        pytest.param([], id="settings-default"),
    ],
)
def test_a_provider_of_a_blocked_plugin_is_one_line(run_pi, env, fake_dist, how: list[str]) -> None:
    fake_dist("acme_tools", "1.0", {"acme.tools": "acme_tools"}, {"acme_tools": ACME_TOOLS})
    assert run_pi("plugins", pythonpath=[env.site]).code == 0
    if not how:
        (env.agent_dir / "settings.json").write_text(
            json.dumps({"defaultProvider": "acme", "defaultModel": "acme-1"})
        )
    done = run_pi(
        "--disable-plugin", "acme.tools", "-p", *how, "hi", pythonpath=[env.site],
        env={"PIKO_DISABLE_PLUGINS": "providers.faux"},  # no model at all is left: the help would show
    )  # fmt: skip
    assert done.code == 1
    assert done.stderr.splitlines() == [
        "Error: provider acme comes from plugin acme.tools, blocked by --disable-plugin"
    ], done


def test_a_plugin_whose_only_registration_was_refused_is_not_active(run_pi, env, fake_dist) -> None:
    fake_dist("acme_dup", "1.0", {"acme.dup": "acme_dup"}, {"acme_dup": DUPLICATE_READ})
    cause = (
        "tool 'read' is already registered by plugin 'tools.read'; ignored "
        "(register it with override=True to replace it)"
    )
    listed = run_pi("plugins", "--check", pythonpath=[env.site])
    assert listed.code == 1
    row = next(row for row in listed.stdout.splitlines() if row.startswith("acme.dup "))
    assert f"refused: {cause}" in row
    report = json.loads(run_pi("plugins", "--json", pythonpath=[env.site]).stdout)
    acme = next(p for p in report["plugins"] if p["name"] == "acme.dup")
    assert acme["refused"] == [cause]
    assert acme["status"] == f"refused: {cause}"
    assert (
        run_pi("plugins", "--check", pythonpath=[env.site], env={"PIKO_DISABLE_PLUGINS": "acme.dup"}).code
        == 0
    )


PARTLY_REFUSED = _tool_and_provider_plugin("acme_part", "acme_count", "Acme's counter", "anthropic")


def test_a_plugin_with_one_registration_refused_and_others_taken_says_both(run_pi, env, fake_dist) -> None:
    fake_dist("acme_part", "1.0", {"acme.part": "acme_part"}, {"acme_part": PARTLY_REFUSED})
    listed = run_pi("plugins", "--check", pythonpath=[env.site])
    assert listed.code == 1
    row = next(row for row in listed.stdout.splitlines() if row.startswith("acme.part "))
    assert "active, refused providers.anthropic" in row
    assert (
        "! plugin 'acme.part': provider 'anthropic' is already registered by plugin 'providers.catalog'; "
        "ignored (register it with override=True to replace it)"
    ) in listed.stdout.splitlines()
