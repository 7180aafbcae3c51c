"""Where a scope's Python packages live, what is installed there, and how pip or uv installs more.

* ``user`` scope: the environment piko runs in (``sys.executable``), as ``llm install`` does, so
  a pipx or ``uv tool`` install of piko keeps its plugins inside.
* ``project`` scope: ``<project>/.pi/python``, a small virtual environment of the project's own.
  Its installer sees piko's environment through ``PYTHONPATH``, so what piko already has (piko
  itself, httpx, ...) is not installed again; piko puts its ``site-packages`` first on the import
  path when it runs in that project, if the project is trusted.

uv is used when it is on ``PATH`` and pip has no configuration of its own (an index, find-links:
uv would not honour it), for the user scope; ``PIKO_INSTALLER=pip|uv`` decides otherwise. The
project scope always uses pip, which can resolve against piko's environment.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
from pathlib import Path

from piko.app.trust import PROJECT_PYTHON_DIR
from piko.app.trust import project_site_packages
from piko.lib import jsonio
from piko.lib.records import Record
from piko.plugins.packages.errors import PackageError
from piko.plugins.packages.run import run
from piko.plugins.packages.sources import PackageRef
from piko.plugins.packages.sources import normalize_dist_name

PIP_CONFIG_FILES = ("/etc/pip.conf", "/etc/xdg/pip/pip.conf", "~/.pip/pip.conf", "~/.config/pip/pip.conf")


class Dist(Record, kw_only=False):
    """One installed distribution (from its ``.dist-info`` folder)."""

    name: str  # normalized
    version: str
    dist_info: Path
    location: Path

    def direct_url(self) -> dict[str, object] | None:
        """PEP 610 ``direct_url.json``: where a distribution installed from a path or URL came from."""
        try:
            data = jsonio.read_json_file(self.dist_info / "direct_url.json")
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def entry_points(self, group: str) -> list[tuple[str, str]]:
        from piko.platform.discovery import parse_entry_points

        try:
            text = (self.dist_info / "entry_points.txt").read_text(encoding="utf-8")
        except OSError:
            return []
        return parse_entry_points(text, group)


def _dist_from_dir(directory: Path, entry: str) -> Dist | None:
    if entry.endswith(".dist-info"):
        stem = entry[: -len(".dist-info")]
    elif entry.endswith(".egg-info"):
        stem = entry[: -len(".egg-info")]
    else:
        return None
    name, _, version = stem.partition("-")
    return Dist(normalize_dist_name(name), version.split("-", 1)[0], directory / entry, directory)


_SCANS: dict[tuple[tuple[str, int], ...], dict[str, Dist]] = {}


def scan_distributions(paths: list[Path]) -> dict[str, Dist]:
    """Installed distributions on ``paths`` (the first of a name wins, as imports do).

    Remembered per process while no folder changes (installing or removing a distribution
    changes its folder's modification time).
    """
    key: list[tuple[str, int]] = []
    for directory in paths:
        try:
            key.append((str(directory), os.stat(directory).st_mtime_ns))
        except OSError:
            continue
    cached = _SCANS.get(tuple(key))
    if cached is not None:
        return cached
    found: dict[str, Dist] = {}
    for directory in paths:
        try:
            entries = sorted(os.listdir(directory))
        except OSError:
            continue
        for entry in entries:
            dist = _dist_from_dir(directory, entry)
            if dist is not None and dist.name not in found:
                found[dist.name] = dist
    _SCANS[tuple(key)] = found
    return found


def _same_path(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def _pip_configured() -> bool:
    if any(key.startswith("PIP_") for key in os.environ):
        return True
    venv = os.environ.get("VIRTUAL_ENV")
    candidates = [*PIP_CONFIG_FILES, *([os.path.join(venv, "pip.conf")] if venv else [])]
    candidates.append(os.path.join(sys.prefix, "pip.conf"))
    return any(os.path.isfile(os.path.expanduser(p)) for p in candidates)


def choose_installer() -> str:
    """``uv`` or ``pip`` for the user scope (see the module docstring)."""
    forced = os.environ.get("PIKO_INSTALLER", "").strip().lower()
    if forced in ("pip", "uv"):
        if forced == "uv" and not shutil.which("uv"):
            raise PackageError("PIKO_INSTALLER=uv but uv is not on PATH")
        return forced
    if shutil.which("uv") and (not _pip_configured() or not pip_available()):
        return "uv"
    return "pip"


def pip_available() -> bool:
    return importlib.util.find_spec("pip") is not None


class PythonEnv:
    """The Python environment of one scope (``user`` or ``project``)."""

    def __init__(self, scope: str, cwd: Path, *, quiet: bool = False) -> None:
        self.scope = scope
        self.cwd = cwd
        self.quiet = quiet
        self.root = cwd / ".pi" / PROJECT_PYTHON_DIR

    # -- where things are --------------------------------------------------------------------

    @property
    def python(self) -> Path:
        if self.scope != "project":
            return Path(sys.executable)
        return self.root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    def site_dir(self) -> Path | None:
        """Where this scope installs (``site-packages``)."""
        if self.scope == "project":
            return project_site_packages(self.cwd)
        return Path(sysconfig.get_paths()["purelib"])

    def search_paths(self) -> list[Path]:
        """Where installed distributions of this scope are found."""
        if self.scope == "project":
            site = self.site_dir()
            return [site] if site is not None else []
        project_site = project_site_packages(self.cwd)
        paths = []
        for entry in sys.path:
            if entry and os.path.isdir(entry) and not (project_site and _same_path(entry, project_site)):
                paths.append(Path(entry))
        return paths

    def distributions(self) -> dict[str, Dist]:
        return scan_distributions(self.search_paths())

    def find(self, ref: PackageRef, local_path: Path | None = None) -> Dist | None:
        """The installed distribution of ``ref`` (by name, or by where it was installed from)."""
        dists = self.distributions()
        if ref.name and ref.name in dists:
            return dists[ref.name]
        from urllib.parse import unquote
        from urllib.parse import urlparse

        target = local_path or ref.local_path
        wanted_url = ref.requirement if ref.requirement and "://" in ref.requirement else None
        for dist in dists.values():
            info = dist.direct_url()
            if not info or not isinstance(info.get("url"), str):
                continue
            url = str(info["url"])
            if (
                target is not None
                and url.startswith("file:")
                and _same_path(unquote(urlparse(url).path), target)
            ):
                return dist
            if wanted_url and url.split("#", 1)[0] == wanted_url.split("#", 1)[0].removeprefix("git+"):
                return dist
        return None

    # -- the project environment -------------------------------------------------------------

    def ensure(self) -> None:
        """Create ``.pi/python`` (again, when made by another Python version)."""
        if self.scope != "project" or project_site_packages(self.cwd) is not None:
            return
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.parent.mkdir(parents=True, exist_ok=True)
        import subprocess

        try:
            subprocess.run(
                [sys.executable, "-m", "venv", "--without-pip", str(self.root)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
        except (OSError, subprocess.CalledProcessError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            raise PackageError(f"Could not create {self.root}: {detail.strip()}") from None
        (self.root / ".gitignore").write_text("*\n", encoding="utf-8")

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.scope == "project":
            # the project's own packages first, then piko's environment (pip itself, piko, ...)
            site = self.site_dir()
            outer = _outer_paths(exclude=site)
            env["PYTHONPATH"] = os.pathsep.join([*([str(site)] if site else []), *outer])
            env.pop("PYTHONHOME", None)
        env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        return env

    # -- installing --------------------------------------------------------------------------

    def _command(self, action: str) -> list[str]:
        if self.scope == "project":
            if not pip_available():
                raise PackageError(
                    "Project-local Python packages need pip in piko's environment "
                    "(for example `uv tool install piko --with pip`, or `python -m ensurepip`)"
                )
            return [str(self.python), "-m", "pip", action]
        installer = choose_installer()
        if installer == "uv":
            return ["uv", "pip", action, "--python", sys.executable]
        if not pip_available():
            raise PackageError("Neither pip nor uv is available to install Python packages")
        return [sys.executable, "-m", "pip", action]

    def install(self, args: list[str], *, upgrade: bool = False) -> None:
        """``pip install [--upgrade] <args>`` in this scope."""
        self.ensure()
        command = self._command("install")
        if upgrade:
            command.append("--upgrade")
        if self.quiet and command[0] != "uv":
            command.append("--quiet")
        run([*command, *args], env=self._child_env(), quiet=self.quiet)

    def uninstall(self, names: list[str]) -> None:
        """``pip uninstall`` the distributions ``names`` from this scope."""
        if self.scope == "project" and project_site_packages(self.cwd) is None:
            return
        command = self._command("uninstall")
        if command[0] != "uv":
            command.append("--yes")
        run([*command, *names], env=self._child_env(), quiet=self.quiet)


def _outer_paths(exclude: Path | None) -> list[str]:
    """piko's own import path, less the standard library and ``exclude``."""
    stdlib = {
        os.path.realpath(p) for key in ("stdlib", "platstdlib") if (p := sysconfig.get_paths().get(key))
    }
    out: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real in stdlib or real.endswith("lib-dynload") or (exclude and _same_path(real, exclude)):
            continue
        if real not in out:
            out.append(real)
    return out


def is_python_project(root: Path) -> bool:
    """A folder pip can install: it has ``pyproject.toml`` (with a build system or project) or ``setup.py``."""
    if (root / "setup.py").is_file():
        return True
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        import tomllib

        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True  # let pip say what is wrong with it
    return "project" in data or "build-system" in data


RESOURCE_GROUPS = {
    "skills": "piko.skills",
    "prompts": "piko.prompts",
    "themes": "piko.themes",
    "extensions": "piko.extensions",
}


def _resolve_dotted_folder(dist: Dist, value: str) -> Path | None:
    """``piko_foo.skills`` (or ``piko_foo/skills``) -> the folder inside the installed package."""
    parts = [p for p in value.replace(":", ".").replace("/", ".").split(".") if p]
    if not parts:
        return None
    direct = dist.location.joinpath(*parts)
    if direct.exists():
        return direct
    try:  # an editable install: ask the import system where the top-level package lives
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location).joinpath(*parts[1:])
        if candidate.exists():
            return candidate
    return None


def dist_resources(dist: Dist) -> dict[str, list[Path]]:
    """Resource folders a distribution declares with ``piko.skills``/``piko.prompts``/... entry points."""
    out: dict[str, list[Path]] = {}
    for kind, group in RESOURCE_GROUPS.items():
        for _name, value in dist.entry_points(group):
            folder = _resolve_dotted_folder(dist, value)
            if folder is not None:
                out.setdefault(kind, []).append(folder)
    return out


def dist_details(dist: Dist) -> dict[str, object]:
    return {
        "distribution": dist.name,
        "version": dist.version,
        "location": str(dist.location),
        "plugins": [name for name, _value in dist.entry_points("piko")],
    }
