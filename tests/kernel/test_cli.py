"""The ``pi`` command in a subprocess: version, help, ``pi plugins``, blocking, modes, tracing, imports."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

import piko
from piko.app.cli import preparse

ROOT = Path(__file__).resolve().parents[2]

HEAVY_MODULES = ("httpx", "rich.markdown", "jsonschema", "asyncio")

MODE_PLUGIN = """
import sys
from piko import hookimpl

@hookimpl
def piko_register_modes(register):
    register("echo", run="cli_mode_impl:run_echo", description="Echo the message back")
    register("echo-async", run="cli_mode_impl:run_async", description="Echo, from a coroutine")

@hookimpl
def piko_register_flags(register):
    register("shout", description="Upper-case the echo", type="boolean")
    register("echo-suffix", description="Text to add", type="string", default="")

@hookimpl
def piko_unconfigure(config):
    sys.stderr.write("unconfigured\\n")
"""

MODE_IMPL = """
import sys

def run_echo(app):
    text = " ".join(app.options["args"]) + (app.flag_values.get("echo-suffix") or "")
    if app.flag_values.get("shout"):
        text = text.upper()
    sys.stdout.write(f"{app.options['mode']}: {text}\\n")
    return 7

async def run_async(app):
    import asyncio
    await asyncio.sleep(0)
    sys.stdout.write("async: " + " ".join(app.options["args"]) + "\\n")
    return 0
"""


@pytest.fixture
def mode_site(fake_dist, env) -> Path:
    fake_dist(
        "cli_modes",
        "0.3.0",
        {"cli-modes": "cli_mode_mod"},
        {"cli_mode_mod": MODE_PLUGIN, "cli_mode_impl": MODE_IMPL},
    )
    return env.site


def test_version_matches_pyproject() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert piko.__version__ == data["project"]["version"]


def test_version(run_pi) -> None:
    for flag in ("--version", "-v"):
        result = run_pi(flag)
        assert (result.code, result.stdout, result.stderr) == (0, "", f"{piko.__version__}\n"), result


@pytest.mark.parametrize("args", [("--version",), ("--help",)])
def test_version_and_help_stay_light(args: tuple[str, ...], run_pi, env) -> None:
    out = env.root / "modules.json"
    result = run_pi(*args, modules_out=out)
    assert result.code == 0, result
    modules = set(json.loads(out.read_text(encoding="utf-8")))
    assert "piko.app.cli" in modules
    heavy = [m for m in HEAVY_MODULES if m in modules]
    heavy += sorted(m for m in modules if m.startswith("piko.testing"))  # tests' fixtures, never pi's
    plugins = sorted(m for m in modules if m.startswith("piko.plugins."))
    assert heavy == [], (
        f"pi {' '.join(args)} imported {heavy}; plugin modules loaded: {plugins}. "
        "Find the culprit with: python -X importtime -m piko " + " ".join(args)
    )


def test_help_lists_commands_options_plugin_flags_and_modes(run_pi, mode_site, env) -> None:
    ext = env.write(
        "exts/flagger.py",
        "def activate(pi):\n    pi.register_flag('plan', description='Plan before acting')\n",
    )
    result = run_pi("--help", "-e", str(ext), pythonpath=[mode_site])
    assert result.code == 0, result
    text = result.stderr
    assert text.startswith(
        f"pi - a coding agent with read, bash, edit and write tools (piko {piko.__version__})"
    )
    assert "  pi plugins " in text
    assert "--disable-plugin <name>" in text
    flags = text.split("Plugin flags:")[1].split("\n\n")[0]
    assert "--shout " in flags and "Upper-case the echo" in flags
    assert "--echo-suffix <value>" in flags
    assert "--plan " in flags and "Plan before acting" in flags
    modes = text.split("Modes (--mode):")[1].split("\n\n")[0]
    assert "echo " in modes and "Echo the message back" in modes


def test_plugins_json_shows_origin_hooks_and_state(run_pi, mode_site, env) -> None:
    ext = env.write("exts/hello_ext.py", "def activate(pi):\n    pi.on('agent_start', lambda e: None)\n")
    result = run_pi("-e", str(ext), "plugins", "--json", pythonpath=[mode_site])
    assert result.code == 0, result
    data = json.loads(result.stdout)
    plugins = {p["name"]: p for p in data["plugins"]}
    dist = plugins["cli-modes"]
    assert (dist["origin"], dist["distribution"], dist["version"], dist["source"]) == (
        "distribution",
        "cli_modes",
        "0.3.0",
        "cli_modes 0.3.0",
    )
    assert dist["hooks"] == ["piko_register_flags", "piko_register_modes", "piko_unconfigure"]
    assert dist["blocked"] is False and dist["blockedBy"] is None and dist["error"] is None
    assert plugins["hello_ext"]["origin"] == "file" and plugins["hello_ext"]["path"] == str(ext)
    assert plugins["hello_ext"]["hooks"] == ["piko_agent_start"]
    assert plugins["core"]["origin"] == "internal"
    builtins = [p for p in data["plugins"] if p["origin"] == "built-in"]
    assert all(p["distribution"] == "piko" for p in builtins)


def test_plugins_shows_blocked_plugins(run_pi, mode_site) -> None:
    for args in (
        ("--disable-plugin", "cli-modes", "plugins", "--json"),
        ("--disable-plugin=cli-modes", "plugins", "--json"),
    ):
        result = run_pi(*args, pythonpath=[mode_site])
        assert result.code == 0, result
        (entry,) = [p for p in json.loads(result.stdout)["plugins"] if p["name"] == "cli-modes"]
        assert (entry["blocked"], entry["blockedBy"], entry["hooks"]) == (True, "--disable-plugin", [])

    result = run_pi("plugins", pythonpath=[mode_site], env={"PIKO_DISABLE_PLUGINS": "cli-modes"})
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("cli-modes ")]
    assert "cli_modes 0.3.0" in line and "blocked (PIKO_DISABLE_PLUGINS)" in line


def test_plugins_table_reports_problems(run_pi, fake_dist, env) -> None:
    fake_dist(
        "broken_dist", "1.0", {"broken": "broken_mod"}, {"broken_mod": "raise ImportError('needs libfoo')\n"}
    )
    result = run_pi("plugins", pythonpath=[env.site])
    assert result.code == 0, result
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("broken ")]
    assert "failed: ImportError: needs libfoo (broken_mod.py:1)" in line
    assert "! plugin 'broken' failed to load: ImportError: needs libfoo (broken_mod.py:1)" in result.stdout
    assert "Warning: plugin 'broken'" not in result.stderr  # the table's diagnostics say it, once


def test_plugins_reports_duplicate_tools(run_pi, fake_dist, env) -> None:
    tool = "from piko import hookimpl\n\n@hookimpl\ndef piko_register_tools(register):\n    register(name='same_tool')\n"
    fake_dist("a_dist", "1.0", {"a-tools": "a_tools"}, {"a_tools": tool})
    fake_dist("b_dist", "1.0", {"b-tools": "b_tools"}, {"b_tools": tool})
    result = run_pi("plugins", "--json", pythonpath=[env.site])
    assert (
        "plugin 'b-tools': tool 'same_tool' is already registered by plugin 'a-tools'; ignored (register it with override=True to replace it)"
        in json.loads(result.stdout)["diagnostics"]
    )


def test_essential_plugin_cannot_be_blocked(run_pi) -> None:
    result = run_pi("--disable-plugin", "core", "plugins")
    assert result.code == 1
    assert (
        result.stderr
        == "Error: plugin 'core' is essential and cannot be blocked (asked by --disable-plugin)\n"
    )
    result = run_pi("plugins", env={"PIKO_DISABLE_PLUGINS": "core"})
    assert (
        result.stderr
        == "Error: plugin 'core' is essential and cannot be blocked (asked by PIKO_DISABLE_PLUGINS)\n"
    )


def test_mode_option_runs_any_registered_mode(run_pi, mode_site) -> None:
    result = run_pi(
        "--mode", "echo", "--shout", "--echo-suffix", "!", "hello", "there", pythonpath=[mode_site]
    )
    assert (result.code, result.stdout) == (7, "echo: HELLO THERE!\n"), result
    assert result.stderr.endswith("unconfigured\n")  # piko_unconfigure runs after the mode

    result = run_pi("--mode=echo-async", "hi", pythonpath=[mode_site])
    assert (result.code, result.stdout) == (0, "async: hi\n"), result


def test_unknown_mode_lists_the_registered_ones(run_pi, mode_site) -> None:
    result = run_pi("--mode", "nope", "x", pythonpath=[mode_site])
    assert result.code == 1
    assert result.stderr.startswith("Error: mode 'nope' is not available; registered modes: ")
    assert "echo, echo-async" in result.stderr

    result = run_pi("--disable-plugin", "cli-modes", "--mode", "echo", "x", pythonpath=[mode_site])
    assert result.code == 1 and "mode 'echo' is not available" in result.stderr


def test_unknown_option(run_pi) -> None:
    result = run_pi("--no-such-flag", "x")
    assert (result.code, result.stderr) == (1, "Error: Unknown option: --no-such-flag\n")


def test_trace_to_stderr_keeps_stdout_clean(run_pi, mode_site) -> None:
    result = run_pi("plugins", "--json", pythonpath=[mode_site], env={"PIKO_TRACE": "1"})
    assert result.code == 0
    json.loads(result.stdout)  # nothing but the JSON
    lines = result.stderr.splitlines()
    assert any("hook piko_configure" in line for line in lines)
    assert any("hook piko_register_modes -> cli-modes" in line for line in lines)
    assert all(line.startswith("[piko-trace] +") for line in lines if "piko" in line and "trace" in line)

    result = run_pi("--mode", "echo", "x", pythonpath=[mode_site], env={"PIKO_TRACE": "1"})
    assert result.stdout == "echo: x\n"
    assert "[piko-trace]" in result.stderr and "hook piko_unconfigure" in result.stderr


def test_trace_to_a_file(run_pi, mode_site, env) -> None:
    trace = env.root / "trace.log"
    result = run_pi("plugins", pythonpath=[mode_site], env={"PIKO_TRACE": str(trace)})
    assert result.code == 0
    assert "[piko-trace]" not in result.stderr + result.stdout
    text = trace.read_text(encoding="utf-8")
    assert "hook piko_register_flags -> cli-modes" in text
    assert all(line.startswith("[piko-trace] +") for line in text.splitlines())


def test_trace_off_values() -> None:
    import os

    from piko.platform.tracing import Tracer

    saved = os.environ.get("PIKO_TRACE")
    try:
        for value in ("", "0"):
            os.environ["PIKO_TRACE"] = value
            assert Tracer.from_environment() is None
        os.environ["PIKO_TRACE"] = "stderr"
        tracer = Tracer.from_environment()
        assert tracer is not None and tracer.stream is sys.stderr
    finally:
        if saved is None:
            os.environ.pop("PIKO_TRACE", None)
        else:
            os.environ["PIKO_TRACE"] = saved


def test_preparse_reads_only_what_decides_loading() -> None:
    options = preparse(
        [
            "-e",
            "a.py",
            "--extension=b.py",
            "--disable-plugin",
            "x,y",
            "--disable-plugin=z",
            "-ne",
            "--model",
            "m",
            "hi",
        ]
    )
    assert options.extensions == ["a.py", "b.py"]
    assert options.disable_plugins == ["x,y", "z"]
    assert options.no_extensions is True
    assert preparse(["--", "-e", "after-dashes"]).extensions == []


def test_python_dash_m_piko(env) -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "piko", "--version"], capture_output=True, text=True, cwd=env.project
    )
    assert (result.returncode, result.stderr) == (0, f"{piko.__version__}\n")


RUN_FLAG_PLUGIN = """
from piko import hookimpl

@hookimpl
def piko_register_flags(register):
    register("shout", description="Shout a word and exit", type="optional", value_name="[word]", run=shout)

def shout(app, value, out):
    out.write((value or "nothing").upper() + "\\n")
    return 3
"""


def test_a_plugin_flag_may_run_instead_of_a_mode(run_pi, env) -> None:
    """``pi --export`` and ``pi --list-models`` work this way; so can any plugin's flag."""
    plugin = env.write("shout_plugin.py", RUN_FLAG_PLUGIN)
    given = run_pi("-e", str(plugin), "--shout", "hey")
    assert (given.code, given.stderr.strip()) == (3, "HEY"), given
    bare = run_pi("-e", str(plugin), "--shout")
    assert (bare.code, bare.stderr.strip()) == (3, "NOTHING"), bare
    shown = run_pi("-e", str(plugin), "--help")
    assert "--shout [word]" in shown.stderr


def test_without_the_export_plugin_export_is_an_unknown_option(run_pi) -> None:
    done = run_pi("--disable-plugin", "export.cli", "--export", "some.jsonl")
    assert done.code == 1
    assert "Unknown option: --export" in done.stderr
