"""Fixtures of the kernel tests: an isolated home per test, fake distributions, a ``pi`` runner.

Every test gets its own ``HOME``, ``PI_CODING_AGENT_DIR``, ``PIKO_CACHE_DIR`` and working
directory under ``tmp_path``, so nothing reads or writes the user's real configuration, and the
calling shell's keys and ``PI_*``/``PIKO_*`` variables are cleared (piko.testing's
``credential_variable``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from piko.platform import discovery
from piko.testing.home import PikoHome
from piko.testing.rpc_client import hermetic_environment


class Env(PikoHome):
    """Paths of the isolated environment one test runs in: a :class:`PikoHome` whose agent dir is
    ``root/agent``, with a ``site`` for fake distributions."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, agent_dir=root / "agent")
        self.site = root / "site"  # where fake distributions are installed
        self.site.mkdir(parents=True, exist_ok=True)

    def write(self, relative: str, text: str) -> Path:
        """Write a file below the root (not the project, as :meth:`PikoHome.write`), dedented, creating folders."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    """An isolated home, agent dir, cache and project folder; the test runs in the project."""
    environment = Env(tmp_path).isolate(monkeypatch)  # keys, tokens, cloud accounts, PI_*/PIKO_* cleared
    monkeypatch.chdir(environment.project)
    return environment


# ---------------------------------------------------------------------------
# Fake distributions
# ---------------------------------------------------------------------------


def make_dist(
    site: Path,
    dist: str,
    version: str = "1.0",
    entry_points: dict[str, str] | None = None,
    modules: dict[str, str] | None = None,
    group: str = "piko",
) -> Path:
    """Install a fake distribution into ``site``: a ``*.dist-info`` with entry points, and modules.

    ``modules`` maps a module name (``"pkg.mod"`` or ``"mod"``) to its source (dedented).
    """
    info = site / f"{dist}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = [f"[{group}]", *(f"{name} = {value}" for name, value in (entry_points or {}).items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for module, source in (modules or {}).items():
        parts = module.split(".")
        folder = site.joinpath(*parts[:-1])
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(1, len(parts)):
            init = site.joinpath(*parts[:i], "__init__.py")
            if not init.exists():
                init.write_text("", encoding="utf-8")
        (folder / f"{parts[-1]}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return info


@pytest.fixture
def fake_dist(env: Env) -> Callable[..., Path]:
    """``fake_dist(dist, version, entry_points, modules)`` installs into ``env.site``."""

    def factory(dist: str, version: str = "1.0", entry_points: dict[str, str] | None = None,
                modules: dict[str, str] | None = None, group: str = "piko") -> Path:  # fmt: skip
        return make_dist(env.site, dist, version, entry_points, modules, group)

    return factory


@pytest.fixture
def only_site(env: Env, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """In-process boots discover entry points in ``env.site`` only (not the real environment).

    ``env.site`` is put on ``sys.path`` so the fake plugins import; the modules they add to
    ``sys.modules`` are removed afterwards.
    """
    real_scan = discovery.scan
    monkeypatch.setattr(discovery, "scan", lambda *a, **k: real_scan(paths=[str(env.site)], use_cache=False))
    monkeypatch.syspath_prepend(str(env.site))
    before = set(sys.modules)
    yield env.site
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        location = getattr(module, "__file__", None) or ""
        if location.startswith(str(env.root)) or name.startswith("piko_extension_"):
            del sys.modules[name]


# ---------------------------------------------------------------------------
# Running pi in a subprocess
# ---------------------------------------------------------------------------

MODULES_AT_EXIT = """
import atexit, json, os, sys
def _dump():
    with open(os.environ["PIKO_TEST_MODULES_OUT"], "w") as fh:
        json.dump(sorted(sys.modules), fh)
atexit.register(_dump)
sys.argv[0] = "pi"
from piko.app.cli import main
main()
"""


class PiResult:
    """What a ``pi`` subprocess left: exit code, stdout, stderr."""

    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def __repr__(self) -> str:
        return f"PiResult(code={self.code}, stdout={self.stdout[-2000:]!r}, stderr={self.stderr[-2000:]!r})"


@pytest.fixture
def run_pi(env: Env) -> Callable[..., PiResult]:
    """``run_pi(*args, env={...}, pythonpath=[...], input=None, cwd=None, terminal=False)`` runs ``pi``
    in a subprocess; ``terminal=True`` gives it a pseudo-terminal for stdin, stdout and stderr (what
    a user sees is then all in ``stdout``)."""

    def runner(
        *args: str,
        env: dict[str, str] | None = None,
        pythonpath: list[str | os.PathLike[str]] | None = None,
        input: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        modules_out: Path | None = None,
        timeout: float = 60,
        terminal: bool = False,
    ) -> PiResult:
        child_env = hermetic_environment()
        child_env.pop("PYTHONPATH", None)
        child_env.update(environment.variables)
        child_env["PYTHONDONTWRITEBYTECODE"] = "1"
        if pythonpath:
            child_env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
        if modules_out is not None:
            child_env["PIKO_TEST_MODULES_OUT"] = str(modules_out)
        child_env.update(env or {})
        command = [
            sys.executable,
            "-c",
            MODULES_AT_EXIT if modules_out is not None else "from piko.app.cli import main; main()",
        ]
        if terminal:
            return _run_in_terminal([*command, *args], cwd or environment.project, child_env, timeout)
        proc = subprocess.run(
            [*command, *args],
            cwd=str(cwd or environment.project),
            env=child_env,
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return PiResult(proc)

    environment = env
    return runner


def _run_in_terminal(
    command: list[str], cwd: str | os.PathLike[str], child_env: dict[str, str], timeout: float
) -> PiResult:
    """Run ``command`` on a pseudo-terminal until it exits; stdout holds all it wrote."""
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, cwd=str(cwd), env={**child_env, "TERM": "dumb"},
        stdin=follower, stdout=follower, stderr=follower, close_fds=True,
    )  # fmt: skip
    os.close(follower)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    output = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return PiResult(subprocess.CompletedProcess(command, code, output, ""))


@pytest.fixture
def app_factory(env: Env) -> Callable[..., Any]:
    """``app_factory(cwd=None)`` builds an (un-booted) :class:`piko.app.application.App` in the isolated env."""
    from piko.app.application import App

    def factory(cwd: Path | None = None) -> App:
        return App(cwd=cwd or env.project, agent_dir=env.agent_dir)

    return factory


# ---------------------------------------------------------------------------
# The example plugin package, installed once per test session
# ---------------------------------------------------------------------------

EXAMPLE_PACKAGE = Path(__file__).resolve().parents[2] / "examples" / "piko-example-plugin"


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install --target`` of a copy of the example package (no network, no build isolation)."""
    root = tmp_path_factory.mktemp("example")
    source = root / "src"
    shutil.copytree(
        EXAMPLE_PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    target = root / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (target / "piko_example_plugin-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target
