"""The project trust gate: which project inputs wait for trust, and deciding whether a project is trusted.

Decisions are kept by :class:`piko.config.trust_store.TrustStore` (``~/.pi/agent/trust.json``).
At start-up :func:`settle` decides for the current project in pi 1.6's order: ``--approve`` /
``--no-approve``; a project without protected inputs (:func:`protected_inputs`) is trusted unless
a saved decision says no; the ``project_trust`` event (user-level and ``-e`` plugins, the first
yes or no wins); the closest saved decision; the global ``defaultProjectTrust`` setting
(``ask``, ``always``, ``never``); and, only when ``ask`` and the run is interactive, one question
on the terminal. Print, JSON and RPC runs never wait: they skip the protected inputs and say so
once. A trusted project's own Python packages (``.pi/python``, from ``pi install -l``) are then
put first on the import path (:func:`activate_project_site`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from typing import TextIO

from piko.config.settings import CODE_RUNNING_PROJECT_KEYS
from piko.config.settings import PLUGIN_SELECTING_PROJECT_KEYS
from piko.config.trust_store import TrustFileError
from piko.config.trust_store import canonical
from piko.lib.records import Record
from piko.lib.records import field

# ---------------------------------------------------------------------------
# What waits for trust
# ---------------------------------------------------------------------------

# ``.pi/python``: the project's own Python environment (``pi install -l pip:...``).
PROJECT_PYTHON_DIR = "python"

# What in a project's ``.pi`` folder waits for trust (pi 1.6's list, and piko's ``python``).
PROTECTED_PI_ENTRIES = (
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    PROJECT_PYTHON_DIR,
)

DEFAULT_PROJECT_TRUST = ("ask", "always", "never")

# Subcommands that neither ask about trust nor say what they skipped: trust itself, credentials.
QUIET_COMMANDS = ("trust", "untrust", "auth", "login", "logout")


def protected_inputs(
    cwd: str | os.PathLike[str], project_settings: dict[str, Any] | None = None
) -> list[str]:
    """What the project in ``cwd`` would load once trusted, one phrase each (empty: nothing).

    The ``.pi`` entries of :data:`PROTECTED_PI_ENTRIES` and every ``.agents/skills`` in ``cwd``
    or a folder above it (the user's own ``~/.agents/skills`` aside); a bare ``.pi`` folder
    holds nothing that waits. With ``project_settings``, the settings that run code or choose
    plugins are named beside ``.pi/settings.json``, and the files beside ``.pi/extensions``.
    """
    from piko.config.paths import project_dir

    pi_dir = project_dir(cwd)
    found = [f".pi/{name}" for name in PROTECTED_PI_ENTRIES if (pi_dir / name).exists()]
    if project_settings is not None:
        found = [_detailed(item, pi_dir, project_settings) for item in found]
    user_skills = canonical(Path.home() / ".agents" / "skills")
    start = canonical(cwd)
    for folder in (start, *start.parents):
        skills = folder / ".agents" / "skills"
        if skills != user_skills and skills.exists():
            found.append(".agents/skills" if folder == start else f"{skills}")
    return found


def _detailed(item: str, pi_dir: Path, project_settings: dict[str, Any]) -> str:
    """``.pi/settings.json (packages: pip:x; shellPath)``, ``.pi/extensions (lint.py)``."""
    details: list[str] = []
    if item == ".pi/settings.json":
        for key in (*CODE_RUNNING_PROJECT_KEYS, *PLUGIN_SELECTING_PROJECT_KEYS):
            value = project_settings.get(key)
            if isinstance(value, list) and value:
                names = [str(v.get("source") if isinstance(v, dict) else v) for v in value]
                details.append(f"{key}: {', '.join(names)}")
            elif value:
                details.append(key)
    elif item == ".pi/extensions":
        try:
            details = sorted(
                p.name for p in (pi_dir / "extensions").iterdir() if not p.name.startswith((".", "_"))
            )
        except OSError:
            details = []
    return f"{item} ({'; '.join(details)})" if details else item


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


# ---------------------------------------------------------------------------
# Asking once on the terminal
# ---------------------------------------------------------------------------


class TrustChoice(Record):
    """One answer to the trust question: whether to trust, and the decisions to save
    (folder -> trusted, or None to remove one); no updates: for this run only."""

    label: str
    trusted: bool
    updates: list[tuple[str, bool | None]] = field(factory=list)


def trust_choices(folder: str | os.PathLike[str], *, this_run: bool = True) -> list[TrustChoice]:
    """The answers offered for ``folder``, in pi's order (``this_run``: with the run-only ones)."""
    path = str(canonical(folder))
    parent = str(Path(path).parent)
    choices = [TrustChoice(label="Trust", trusted=True, updates=[(path, True)])]
    if parent != path:
        choices.append(
            TrustChoice(
                label=f"Trust parent folder ({parent})", trusted=True, updates=[(parent, True), (path, None)]
            )
        )
    if this_run:
        choices.append(TrustChoice(label="Trust (this session only)", trusted=True))
    choices.append(TrustChoice(label="Do not trust", trusted=False, updates=[(path, False)]))
    if this_run:
        choices.append(TrustChoice(label="Do not trust (this session only)", trusted=False))
    return choices


def trust_status(app: Any) -> list[str]:
    """The lines ``/trust`` shows: the folder, its saved decision, this run's."""
    folder = canonical(app.cwd)
    entry = app.trust.entry(folder)
    if app.trust.error is not None:
        saved = f"none ({app.trust.error})"
    elif entry is None:
        saved = "none"
    else:
        saved = "trusted" if entry[1] else "untrusted"
        if entry[0] != folder:
            saved += f" (inherited from {entry[0]})"
    current = "trusted" if app.project_trusted else "untrusted"
    return [str(folder), f"Saved decision: {saved}", f"Current session: {current}"]


def save_choice(store: Any, choice: TrustChoice) -> None:
    """Record what ``choice`` saves (raises :class:`TrustFileError` for a damaged file)."""
    for folder, decision in choice.updates:
        store.set(folder, decision)


def ask(
    folder: str | os.PathLike[str],
    found: list[str],
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
) -> TrustChoice | None:
    """Ask on the terminal whether to trust ``folder``; None when there was no answer.

    ``found`` lists what trusting would load. ``y`` and ``n`` answer Trust and Do not trust; a
    number picks any of :func:`trust_choices`; an empty answer trusts nothing, for this run.
    """
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    choices = trust_choices(folder)
    lines = [
        f"Trust project folder? {canonical(folder)}",
        "This allows piko to load .pi settings and resources, install missing project packages, "
        "and execute project extensions.",
        f"Found: {', '.join(found)}",
        "Only trust projects whose files you have reviewed or whose authors you trust.",
    ]
    lines += [f"  {number}. {choice.label}" for number, choice in enumerate(choices, 1)]
    stderr.write("\n".join(lines) + "\n")
    shortcuts = {"y": choices[0], "yes": choices[0], "n": choices[-2], "no": choices[-2], "": choices[-1]}
    while True:
        stderr.write(f"Choice [1-{len(choices)}, y, n; Enter: do not trust this session]: ")
        stderr.flush()
        try:
            answer = stdin.readline()
        except (KeyboardInterrupt, OSError):
            stderr.write("\n")
            return None
        if not answer:
            stderr.write("\n")
            return None
        text = answer.strip().lower()
        if text in shortcuts:
            return shortcuts[text]
        if text.isdigit() and 1 <= int(text) <= len(choices):
            return choices[int(text) - 1]


def untrusted_notice(
    folder: str | os.PathLike[str], found: list[str], why: str = "this project is not trusted"
) -> str:
    """The stderr line of a run that skipped a project's protected inputs."""
    folder = canonical(folder)
    return (
        f"Project resources in {folder} were not loaded ({', '.join(found)}): {why}. "
        f"Use --approve (-a) to trust it for this run, or `pi trust` in {folder} (/trust in the "
        "interactive mode) to save a decision"
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


class TrustDecision(Record):
    """How :func:`settle` decided: trusted or not, and by what (``--approve``, ``extension x``,
    ``saved decision for /path``, ``defaultProjectTrust``, ``answer``, ``policy``, ...)."""

    trusted: bool
    by: str
    found: list[str] = field(factory=list)


def settle(
    app: Any,
    *,
    interactive: bool,
    command: str | None = None,
    approve: bool | None = None,
    mode: str = "print",
) -> TrustDecision:
    """Decide at start-up whether ``app``'s project is trusted (see the module docstring).

    ``approve`` is ``--approve`` (True) or ``--no-approve`` (False); ``mode`` is the run's mode,
    the ``ctx.mode`` of ``project_trust`` handlers (``tui``, ``print``, ``json``, ``rpc``). No question is asked (nor
    notice given) for :data:`QUIET_COMMANDS`, and no question outside an interactive run. A policy with
    ``allowProjectCode: false`` keeps every project untrusted. Updates ``app.project_trusted``
    and the settings, and adds the stderr notice of a run that skipped protected inputs.
    """
    decision = _decide(app, interactive=interactive, command=command, approve=approve, mode=mode)
    app.trust_decision = decision
    if decision.trusted != app.project_trusted:
        app.project_trusted = decision.trusted
        app.settings.set_project_trusted(decision.trusted)
    if not decision.trusted and decision.found and command not in QUIET_COMMANDS:
        if decision.by == "policy":
            policy = getattr(app, "policy", None)
            why = f"project code is disabled by policy ({policy.source if policy is not None else 'policy'})"
        elif decision.by == "--no-approve":
            why = "--no-approve was given"
        else:
            why = "this project is not trusted"
        app.notices.append(untrusted_notice(app.cwd, decision.found, why))
    return decision


def _decide(
    app: Any, *, interactive: bool, command: str | None, approve: bool | None, mode: str
) -> TrustDecision:
    found = protected_inputs(app.cwd, app.settings.project_data)
    policy = getattr(app, "policy", None)
    if policy is not None and (not policy.allow_project_code or policy.failed):
        return TrustDecision(trusted=False, by="policy", found=found)
    if approve is not None:
        return TrustDecision(trusted=approve, by="--approve" if approve else "--no-approve", found=found)
    store = app.trust
    if not found:
        saved = store.decision(app.cwd)
        return TrustDecision(trusted=saved is not False, by="no protected inputs", found=found)
    if command not in QUIET_COMMANDS:
        answer = _ask_extensions(app, found, interactive=interactive, mode=mode)
        if answer is not None:
            trusted = answer["trusted"] == "yes"
            if answer["remember"]:
                _save(app, lambda: store.set(app.cwd, trusted))
            return TrustDecision(trusted=trusted, by=f"extension {answer['by']}", found=found)
    saved_entry = store.entry(app.cwd)
    if store.error is not None:
        app.notices.append(f"{store.error}; every project counts as not trusted until it is fixed")
        return TrustDecision(trusted=False, by="damaged trust file", found=found)
    if saved_entry is not None:
        return TrustDecision(trusted=saved_entry[1], by=f"saved decision for {saved_entry[0]}", found=found)
    default = app.settings.global_data.get("defaultProjectTrust", "ask")
    if default not in DEFAULT_PROJECT_TRUST:
        app.notices.append(
            f"defaultProjectTrust in {app.settings.global_path} must be one of "
            f'{", ".join(DEFAULT_PROJECT_TRUST)}, not {default!r}; using "ask"'
        )
        default = "ask"
    if default != "ask":
        return TrustDecision(trusted=default == "always", by="defaultProjectTrust", found=found)
    if not interactive or command in QUIET_COMMANDS:
        return TrustDecision(trusted=False, by="no answer (not interactive)", found=found)
    choice = ask(app.cwd, found)
    if choice is None:
        return TrustDecision(trusted=False, by="no answer", found=found)
    _save(app, lambda: save_choice(store, choice))
    return TrustDecision(trusted=choice.trusted, by="answer", found=found)


def _save(app: Any, write: Any) -> None:
    try:
        write()
    except (TrustFileError, OSError) as exc:
        app.notices.append(f"the trust decision was not saved: {exc}")


def _ask_extensions(app: Any, found: list[str], *, interactive: bool, mode: str) -> dict[str, Any] | None:
    """Fire ``project_trust`` for the plugins loaded so far; the deciding answer, or None.

    Handlers may ask the user (``ctx.ui.select``/``confirm``/``input``) on the terminal in an
    interactive run; elsewhere their dialogs answer at once (:mod:`piko.extensions.startup_ui`)."""
    import asyncio

    from piko.data.events import ProjectTrustEvent
    from piko.extensions.startup_ui import StartupTerminalUI

    dispatcher = app.dispatcher
    if not dispatcher.has_handlers("project_trust"):
        return None
    event = ProjectTrustEvent(cwd=str(canonical(app.cwd)), found=list(found))
    ctx = app.context(ui=StartupTerminalUI(interactive=interactive), mode=mode)

    def on_error(error: Any) -> None:  # no mode listens yet: pi's line, on stderr with the notices
        app.notices.append(f'Extension "{error.extension_path}" project_trust error: {error.error}')

    dispatcher.error_listeners.append(on_error)
    try:
        result: dict[str, Any] | None = asyncio.run(dispatcher.emit("project_trust", event, ctx))
    finally:
        dispatcher.error_listeners.remove(on_error)
    return result
