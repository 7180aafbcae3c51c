"""The packages tests' environment: a throwaway venv running piko, a local wheel index, git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


REPO = Path(__file__).resolve().parents[2]
DEV_SITE = sysconfig.get_paths()["purelib"]
EXAMPLE_PLUGIN = REPO / "examples" / "piko-example-plugin"


class PiEnv:
    """A throwaway Python environment with piko, its own agent dir, cache, home and wheel index."""

    def __init__(self, root: Path, wheelhouse: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.agent_dir = root / "agent"
        self.cache_dir = root / "cache"
        self.home = root / "home"
        self.wheelhouse = wheelhouse
        self.policy = root / "policy.json"
        for folder in (self.agent_dir, self.cache_dir, self.home):
            folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True)
        site = (
            self.venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
        )
        (site / "_piko_dev.pth").write_text(f"import site; site.addsitedir({DEV_SITE!r})\n", encoding="utf-8")
        self.site = site
        self.python = self.venv / "bin" / "python"

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(
                ("PIP_", "PI_", "PIKO_", "UV_", "VIRTUAL_ENV", "PYTHON", "NPM_CONFIG_", "npm_config_")
            )
        }
        env.update(
            HOME=str(self.home),
            PI_CODING_AGENT_DIR=str(self.agent_dir),
            PIKO_CACHE_DIR=str(self.cache_dir),
            PIKO_POLICY=str(self.policy),
            PIKO_INSTALLER="pip",
            PIP_CONFIG_FILE=os.devnull,
            PIP_NO_INDEX="1",
            PIP_FIND_LINKS=str(self.wheelhouse),
            PIP_NO_BUILD_ISOLATION="0",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
        )  # fmt: skip
        env.update(extra)
        return env

    def pi(
        self, *args: str, cwd: Path | None = None, check: bool = True, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run ``pi`` (this environment's ``python -m piko``) without a terminal."""
        result = subprocess.run(
            [str(self.python), "-m", "piko", *args],
            cwd=str(cwd or self.root),
            env=self.env(**env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"pi {' '.join(args)} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
            )
        return result

    def probe(self, cwd: Path | None = None, **env: str) -> dict[str, object]:
        """Boot piko in ``cwd`` as a mode would, and report plugins, tools and package resources."""
        code = (
            "import asyncio, json\n"
            "from piko.app.application import App\n"
            "from piko.data.events import ResourcesDiscoverEvent\n"
            "app = App().boot()\n"
            "found = asyncio.run(app.dispatcher.emit('resources_discover', ResourcesDiscoverEvent(cwd=str(app.cwd)), app.context()))\n"
            "print(json.dumps({'tools': sorted(app.registries.tools.names()),"
            " 'plugins': {n: {'blocked': i.blocked, 'blockedBy': i.blocked_by, 'error': i.error} for n, i in app.pm.infos.items()},"
            " 'skills': [p for p, _ in found['skill_paths']], 'prompts': [p for p, _ in found['prompt_paths']],"
            " 'themes': [p for p, _ in found['theme_paths']], 'notices': app.notices, 'diagnostics': app.diagnostics(),"
            " 'trusted': app.project_trusted}))\n"
        )
        result = subprocess.run(
            [str(self.python), "-c", code], cwd=str(cwd or self.root), env=self.env(**env),
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    def settings(self, project: Path | None = None) -> dict[str, object]:
        path = (project / ".pi" / "settings.json") if project else (self.agent_dir / "settings.json")
        return json.loads(path.read_text(encoding="utf-8"))

    def installed(self) -> set[str]:
        """Distributions installed into this environment itself (not the development one)."""
        return {p.name.split("-")[0].lower() for p in self.site.glob("*.dist-info")}


def git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", *args], cwd=str(cwd), env=env, check=True, capture_output=True, text=True
    ).stdout
