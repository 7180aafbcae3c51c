"""docs/plugins.md's recipe for installing a plugin for an end-to-end test, run in the README's venv.

The venv is made as the README says (``python -m venv``, ``pip install .``, no test extra), so
it has the setuptools of ``ensurepip`` (65 on Python 3.11, which cannot build wheels alone) and
nothing else of the test extra. The recipe's two commands are taken from the doc and run with
their paths swapped for the test's; the example package must then show up in ``pi plugins``.
Packages come from the configured index (file:// here, no network beyond it).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from piko.testing.rpc_client import hermetic_environment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "piko-example-plugin"


def recipe() -> list[list[str]]:
    """The commands of the recipe's ``sh`` block (the one that installs ``./my-plugin``)."""
    docs = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", docs, re.DOTALL)
    [block] = [b for b in blocks if "./my-plugin" in b and "--target" in b]
    return [shlex.split(line) for line in block.strip().splitlines()]


@pytest.mark.slow  # a venv with piko and its dependencies installed as the README says: about a minute
def test_the_install_recipe_works_in_the_readmes_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = hermetic_environment()
    env.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120, env=env)
    bin_dir = venv / "bin"
    install = subprocess.run(
        [str(bin_dir / "pip"), "install", "--quiet", str(ROOT)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    plugin = tmp_path / "my-plugin"
    shutil.copytree(EXAMPLE, plugin, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site, agent = tmp_path / "site", tmp_path / "agent"

    install_step, run_step = recipe()
    assert install_step[:2] == ["pip", "install"] and run_step[-3:] == ["pi", "plugins", "--json"]
    swap = {"/tmp/site": str(site), "./my-plugin": str(plugin)}
    command = [str(bin_dir / "pip"), *(swap.get(arg, arg) for arg in install_step[1:])]
    built = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert built.returncode == 0, built.stdout + built.stderr

    variables = dict(item.split("=", 1) for item in run_step[:-3])
    assert variables == {"PYTHONPATH": "/tmp/site", "PI_CODING_AGENT_DIR": "/tmp/agent"}
    run_env = {**env, "PYTHONPATH": str(site), "PI_CODING_AGENT_DIR": str(agent),
               "PIKO_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}  # fmt: skip
    listed = subprocess.run(
        [str(bin_dir / "pi"), "plugins", "--json"], capture_output=True, text=True, timeout=120, env=run_env
    )
    assert listed.returncode == 0, listed.stderr
    plugins = {p["name"]: p for p in json.loads(listed.stdout)["plugins"]}
    assert plugins["example"]["origin"] == "distribution"
    assert plugins["example"]["error"] is None and not plugins["example"]["blocked"]
    assert plugins["example"]["version"] == "0.1.0"
