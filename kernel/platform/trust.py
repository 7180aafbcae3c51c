"""The project trust gate: what an untrusted project may not do, and deciding whether it is trusted.

Decisions are kept by :class:`piko.config.trust_store.TrustStore`. At start-up :func:`settle`
decides for the current project, asking once on the terminal in an interactive run; a trusted
project's own Python packages (``.pi/python``, from ``pi install -l``) are then put first on the
import path (:func:`activate_project_site`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TextIO

from piko.config.settings import CODE_RUNNING_PROJECT_KEYS, PLUGIN_SELECTING_PROJECT_KEYS

# ---------------------------------------------------------------------------
# What a project would run, asking once, and the project's own Python packages
# ---------------------------------------------------------------------------

# ``.pi/python``: the project's own Python environment (``pi install -l pip:...``).
PROJECT_PYTHON_DIR = "python"


def project_code(cwd: str | os.PathLike[str], project_settings: dict[str, Any]) -> list[str]:
    """What code a project folder would make piko run, one short phrase each (empty: none)."""
    from piko.config.paths import project_dir

    pi_dir = project_dir(cwd)
    found: list[str] = []
    try:
        names = sorted(
            p.name
            for p in (pi_dir / "extensions").iterdir()
            if not p.name.startswith((".", "_")) and (p.suffix == ".py" or (p / "__init__.py").is_file())
        )
    except OSError:
        names = []
    if names:
        found.append(f"extensions in .pi/extensions/ ({', '.join(names)})")
    packages = project_settings.get("packages")
    if isinstance(packages, list) and packages:
        sources = [str(p.get("source") if isinstance(p, dict) else p) for p in packages]
        found.append(f"packages in .pi/settings.json ({', '.join(sources)})")
    for key in CODE_RUNNING_PROJECT_KEYS:
        if key != "packages" and project_settings.get(key):
            found.append(f"'{key}' in .pi/settings.json")
    if (pi_dir / PROJECT_PYTHON_DIR).is_dir() and not (isinstance(packages, list) and packages):
        found.append("Python packages in .pi/python/")
    return found


def project_plugin_settings(project_settings: dict[str, Any]) -> list[str]:
    """The project's settings that would change which plugins load, one phrase each (empty: none)."""
    found: list[str] = []
    for key in PLUGIN_SELECTING_PROJECT_KEYS:
        value = project_settings.get(key)
        if value:
            names = value if isinstance(value, list) else [value]
            found.append(f"'{key}': {', '.join(str(n) for n in names)}")
    return found


def ask(
    folder: str | os.PathLike[str],
    code: list[str],
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
    *,
    runs_code: bool = True,
) -> bool | None:
    """Ask on the terminal whether to trust ``folder``; None when there was no answer.

    ``code`` lists what trusting would allow; ``runs_code=False`` when none of it is code (only
    settings that choose which plugins load).
    """
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    folder = os.path.abspath(folder)
    if runs_code:
        lines = [f"This project can run code on your machine: {folder}"]
    else:
        lines = [f"This project's settings change which of your plugins load: {folder}"]
    lines += [f"  - {item}" for item in code]
    lines.append("Only trust projects whose files you have reviewed or whose authors you trust.")
    stderr.write("\n".join(lines) + "\n")
    question = "Trust this project and load its code? [y/N] " if runs_code else "Trust this project? [y/N] "
    while True:
        stderr.write(question)
        stderr.flush()
        try:
            answer = stdin.readline()
        except (KeyboardInterrupt, OSError):
            stderr.write("\n")
            return None
        if not answer:
            stderr.write("\n")
            return None
        answer = answer.strip().lower()
        if answer in ("y", "yes"):
            return True
        if answer in ("", "n", "no"):
            return False


def untrusted_notice(folder: str | os.PathLike[str], code: list[str]) -> str:
    """The stderr line of a run that left a project's code out."""
    folder = os.path.abspath(folder)
    return (
        f"Project code in {folder} was not loaded: this project is not trusted "
        f"({'; '.join(code)}). Run `pi trust` in {folder} to allow it"
    )


def ignored_settings_notice(folder: str | os.PathLike[str], settings_file: Path, ignored: list[str]) -> str:
    """The stderr line of a run that ignored a project's plugin-selecting settings."""
    folder = os.path.abspath(folder)
    return (
        f"Project settings in {settings_file} were ignored: this project is not trusted "
        f"({'; '.join(ignored)}). Run `pi trust` in {folder} to allow them"
    )


def project_site_packages(cwd: str | os.PathLike[str]) -> Path | None:
    """``site-packages`` of the project's ``.pi/python`` environment, if it suits this interpreter."""
    from piko.config.paths import project_dir

    root = project_dir(cwd) / PROJECT_PYTHON_DIR
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        config = (root / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in config.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info") and not value.strip().startswith(version):
            return None
    if os.name == "nt":
        site = root / "Lib" / "site-packages"
    else:
        site = root / "lib" / f"python{version}" / "site-packages"
    return site if site.is_dir() else None


def activate_project_site(cwd: str | os.PathLike[str]) -> Path | None:
    """Put the project's Python packages first on ``sys.path`` (their ``.pth`` files included)."""
    import site as site_module

    site = project_site_packages(cwd)
    if site is None or str(site) in sys.path:
        return site
    before = list(sys.path)
    site_module.addsitedir(str(site))
    added = [p for p in sys.path if p not in before]
    sys.path[:] = [*added, *before]
    return site


def settle(app: Any, *, interactive: bool, command: str | None = None) -> bool:
    """Decide at start-up whether ``app``'s project code may run, asking once when interactive.

    The question is asked only in an interactive run, when the project has code or settings that
    choose plugins and no decision was recorded (not for ``pi trust``/``pi untrust`` themselves);
    the answer is recorded. A policy with ``allowProjectCode: false`` keeps every project
    untrusted. Updates ``app.project_trusted`` and the settings, and adds the stderr notices of
    an untrusted run (what code was left out, which settings were ignored).
    """
    policy = getattr(app, "policy", None)
    allowed = policy is None or (policy.allow_project_code and not policy.failed)
    code = project_code(app.cwd, app.settings.project_data)
    plugin_settings = project_plugin_settings(app.settings.project_data)
    trusted = bool(app.project_trusted) and allowed
    gated = code + [f"{item} in .pi/settings.json" for item in plugin_settings]
    if gated and allowed and not trusted and interactive and command not in ("trust", "untrust"):
        if app.trust.decision(app.cwd) is None:
            answer = ask(app.cwd, gated, runs_code=bool(code))
            if answer is not None:
                app.trust.set(app.cwd, answer)
                trusted = answer
    if trusted != app.project_trusted:
        app.project_trusted = trusted
        app.settings.set_project_trusted(trusted)
    if not trusted and command not in ("trust", "untrust"):
        if code and allowed:
            app.notices.append(untrusted_notice(app.cwd, code))
        elif code:
            app.notices.append(
                f"Project code in {os.path.abspath(app.cwd)} was not loaded: project code is disabled by policy "
                f"({policy.source if policy is not None else 'policy'})"
            )
        if plugin_settings and allowed:
            app.notices.append(ignored_settings_notice(app.cwd, app.settings.project_path, plugin_settings))
        elif plugin_settings:
            app.notices.append(
                f"Project settings in {app.settings.project_path} were ignored ({'; '.join(plugin_settings)}): "
                f"project code is disabled by policy ({policy.source if policy is not None else 'policy'})"
            )
    return trusted
