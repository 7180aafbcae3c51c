"""The pytest11 entry point of piko.testing: registered, inert until a fixture is taken, off with
``-p no:piko``, and enabled by name where plugins do not load by themselves."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from piko.testing.rpc_client import hermetic_environment

USES_HOME = """
def test_home(piko_home):
    assert piko_home.agent_dir.is_dir()
"""


def _pytest(folder: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    env = hermetic_environment()
    env.pop("PYTHONPATH", None)
    env.update(variables)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_installing_piko_registers_the_pytest_plugin() -> None:
    [plugin] = [ep for ep in entry_points(group="pytest11") if ep.name == "piko"]
    assert plugin.value == "piko.testing.plugin"


def test_loading_the_plugin_imports_nothing_of_piko_s_engine() -> None:
    code = "import sys, piko.testing.plugin; print(sorted(m for m in sys.modules if m.startswith('piko')))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['piko', 'piko.testing', 'piko.testing.plugin', 'piko.version']"


def test_a_test_takes_the_fixtures_without_an_import_and_no_piko_switches_them_off(tmp_path: Path) -> None:
    (tmp_path / "test_uses_home.py").write_text(USES_HOME)
    assert _pytest(tmp_path).returncode == 0
    off = _pytest(tmp_path, "-p", "no:piko")
    assert off.returncode == 1 and "fixture 'piko_home' not found" in off.stdout


def test_without_plugin_autoload_it_is_enabled_by_name(tmp_path: Path) -> None:
    (tmp_path / "test_uses_home.py").write_text(USES_HOME)
    off = _pytest(tmp_path, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    assert off.returncode == 1 and "fixture 'piko_home' not found" in off.stdout
    assert _pytest(tmp_path, "-p", "piko.testing.plugin", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1").returncode == 0
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["piko.testing.plugin"]\n')
    assert _pytest(tmp_path, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1").returncode == 0
