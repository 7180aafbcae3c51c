"""The package subcommands, with pi's options, messages and exit codes.

``pi install <source> [-l]``, ``pi remove|uninstall <source> [-l]``, ``pi update [source]``,
``pi list``, and piko's ``pi config`` (plugins and package resources), ``pi trust``,
``pi untrust``. Progress goes to stderr, results to stdout; a failure prints ``Error: ...`` and
exits with 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from piko.plugins.packages.errors import PackageError

APP = "pi"
USAGE = {
    "install": f"{APP} install <source> [-l]",
    "remove": f"{APP} remove <source> [-l]",
    "update": f"{APP} update [source|self|pi] [--self] [--extensions] [--extension <source>] [--force]",
    "list": f"{APP} list [--json]",
}
SOURCES_HELP = """Sources:
  pip:<requirement>     a Python distribution: name, version specifier, wheel/sdist file or URL
                        (a bare name means pip:; any index pip is configured for works)
  git:<url>[#ref]       a git repository (pi's git:host/user/repo@ref and https:// URLs work too)
  path:<dir>            a local folder or extension file, used in place (./dir and /dir too)
  npm:<pkg>[@version]   a pi package from the npm registry (skills, prompt templates, themes)"""
HELP = {
    "install": f"""Usage:
  {USAGE["install"]}

Install a package and add it to settings.

Options:
  -l, --local    Install project-locally (.pi/settings.json, Python packages in .pi/python/)

{SOURCES_HELP}

Examples:
  {APP} install pip:piko-example-plugin
  {APP} install 'pip:acme-tools>=2,<3' -l
  {APP} install git:github.com/user/repo#v1
  {APP} install npm:@foo/bar
  {APP} install ./local/path
""",
    "remove": f"""Usage:
  {USAGE["remove"]}

Remove a package and its source from settings.
Alias: {APP} uninstall <source> [-l]

Options:
  -l, --local    Remove from project settings (.pi/settings.json)

Examples:
  {APP} remove pip:piko-example-plugin
  {APP} uninstall npm:@foo/bar
""",
    "update": f"""Usage:
  {USAGE["update"]}

Update installed packages (a pinned version or ref is left alone).

Options:
  --self                  Show how to update piko itself
  --extensions            Update installed packages only
  --extension <source>    Update one package only
  --force                 With --self: show the command even if piko looks current

Short forms:
  {APP} update                Update all packages
  {APP} update <source>       Update one package
  {APP} update pi             Show how to update piko (self works as alias to pi)
""",
    "list": f"""Usage:
  {USAGE["list"]}

List installed packages from user and project settings.

Options:
  --json    Print JSON
""",
}


def _err(message: str) -> None:
    click.secho(message, fg="red", err=True)


def _dim(message: str, err: bool = False) -> None:
    click.secho(message, dim=True, err=err)


def _manager(app: Any) -> Any:
    from piko.plugins.packages.manager import manager_for

    return manager_for(app)


def _offline() -> bool:
    from piko.config.paths import offline

    return offline() or "--offline" in sys.argv


# ---------------------------------------------------------------------------
# pi's argument rules
# ---------------------------------------------------------------------------


class ParsedArgs:
    def __init__(self, command: str) -> None:
        self.command = command
        self.source: str | None = None
        self.local = self.help = self.force = self.self_flag = self.extensions_flag = self.json = False
        self.extension_source: str | None = None
        self.problem: str | None = None  # message, shown with the usage line


def parse_args(command: str, args: list[str]) -> ParsedArgs:
    """pi's ``parsePackageCommand``: flags per command, one source, first problem wins.

    Hand-written because click cannot say what pi says: pi reads the whole line, then reports
    the first problem by kind (an unknown option before a missing value before an extra
    argument before a conflict) with its own words and the usage line, and the package tests
    (``tests/packages/``) pin that wording. click stops at the first bad token with its own
    message. The subcommands stay click commands; this reads their arguments.
    """
    parsed = ParsedArgs(command)
    invalid_option = invalid_argument = missing_value = conflict = None
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg in ("-h", "--help"):
            parsed.help = True
        elif arg in ("-l", "--local") and command in ("install", "remove"):
            parsed.local = True
        elif arg == "--json" and command == "list":
            parsed.json = True
        elif arg == "--self" and command == "update":
            parsed.self_flag = True
        elif arg == "--extensions" and command == "update":
            parsed.extensions_flag = True
        elif arg == "--force" and command == "update":
            parsed.force = True
        elif arg == "--extension" and command == "update":
            value = args[index] if index < len(args) else None
            if not value or value.startswith("-"):
                missing_value = missing_value or arg
            elif parsed.extension_source:
                conflict = conflict or "--extension can only be provided once"
                index += 1
            else:
                parsed.extension_source = value
                index += 1
        elif arg.startswith("-"):
            invalid_option = invalid_option or arg
        elif parsed.source is None:
            parsed.source = arg
        else:
            invalid_argument = invalid_argument or arg
    if command == "update":
        if parsed.extension_source and (parsed.self_flag or parsed.extensions_flag):
            conflict = conflict or "--extension cannot be combined with --self or --extensions"
        if parsed.extension_source and parsed.source:
            conflict = conflict or "--extension cannot be combined with a positional source"
        if (
            parsed.source
            and parsed.source not in ("self", "pi")
            and (parsed.self_flag or parsed.extensions_flag)
        ):
            conflict = conflict or "positional update targets cannot be combined with --self or --extensions"
    if invalid_option:
        parsed.problem = f'Unknown option {invalid_option} for "{command}".'
    elif missing_value:
        parsed.problem = f"Missing value for {missing_value}."
    elif invalid_argument:
        parsed.problem = f"Unexpected argument {invalid_argument}."
    elif conflict:
        parsed.problem = conflict
    elif command in ("install", "remove") and not parsed.source and not parsed.help:
        parsed.problem = f"Missing {command} source."
    return parsed


def _start(command: str, args: tuple[str, ...]) -> ParsedArgs | int:
    parsed = parse_args(command, list(args))
    if parsed.help:
        click.echo(HELP[command], nl=False)
        return 0
    if parsed.problem:
        _err(parsed.problem)
        if parsed.problem.startswith("Unknown option"):
            _dim(f'Use "{APP} --help" or "{USAGE[command]}".', err=True)
        else:
            _dim(f"Usage: {USAGE[command]}", err=True)
        return 1
    return parsed


_RAW = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


def _raw_command(name: str, help_text: str) -> Callable[[Callable[..., int]], click.Command]:
    """A package command that gets the app and its words unparsed (pi's own parsing and help)."""

    def make(run: Callable[..., int]) -> click.Command:
        takes_words = click.argument("args", nargs=-1, type=click.UNPROCESSED)(click.pass_obj(run))
        return click.command(name, help=help_text, context_settings=_RAW, add_help_option=False)(takes_words)

    return make


def _failed(exc: Exception) -> int:
    """Say why a package action failed (a "No matching package" message as it is) and exit 1."""
    _err(str(exc) if str(exc).startswith("No matching package") else f"Error: {exc}")
    return 1


# ---------------------------------------------------------------------------
# install / remove / update / list
# ---------------------------------------------------------------------------


def _change(app: Any, command: str, args: tuple[str, ...], done: str) -> ParsedArgs | int:
    """``install``/``remove`` the source the words name and say ``<done> <source>``: the parsed
    words when it was done, else the exit code (0 after ``--help``)."""
    parsed = _start(command, args)
    if isinstance(parsed, int):
        return parsed
    assert parsed.source is not None
    try:
        getattr(_manager(app), command)(parsed.source, local=parsed.local)
    except (PackageError, OSError) as exc:
        return _failed(exc)
    click.secho(f"{done} {parsed.source}", fg="green")
    return parsed


@_raw_command("install", "Install a package and add it to settings.")
def install_command(app: Any, args: tuple[str, ...]) -> int:
    parsed = _change(app, "install", args, "Installed")
    if isinstance(parsed, int):
        return parsed
    if parsed.local and not app.project_trusted:
        click.echo(
            f"Note: this project is not trusted, so its packages do not load yet: run `{APP} trust` to allow them",
            err=True,
        )
    return 0


def _remove(app: Any, args: tuple[str, ...]) -> int:
    parsed = _change(app, "remove", args, "Removed")
    return parsed if isinstance(parsed, int) else 0


@_raw_command("remove", "Remove a package and its source from settings.")
def remove_command(app: Any, args: tuple[str, ...]) -> int:
    return _remove(app, args)


@_raw_command("uninstall", "Alias for remove.")
def uninstall_command(app: Any, args: tuple[str, ...]) -> int:
    return _remove(app, args)


def self_update_command() -> str:
    """How piko itself is updated, by the tool that installed it."""
    prefix = sys.prefix.replace("\\", "/")
    if "/pipx/venvs/" in prefix:
        return "pipx upgrade piko"
    if "/uv/tools/" in prefix:
        return "uv tool upgrade piko"
    return f"{sys.executable} -m pip install --upgrade piko"


@_raw_command("update", "Update installed packages.")
def update_command(app: Any, args: tuple[str, ...]) -> int:
    parsed = _start("update", args)
    if isinstance(parsed, int):
        return parsed
    wants_self = parsed.self_flag or parsed.source in ("self", "pi")
    only_self = wants_self and not parsed.extensions_flag
    source = parsed.extension_source or (parsed.source if parsed.source not in ("self", "pi") else None)
    if not only_self:
        try:
            _manager(app).update(source, offline=_offline())
        except (PackageError, OSError) as exc:
            return _failed(exc)
        click.secho(f"Updated {source}" if source else "Updated packages", fg="green")
    if wants_self:
        click.echo(f"piko does not update itself; run: {self_update_command()}", err=True)
        return 1
    return 0


@_raw_command("list", "List installed packages from user and project settings.")
def list_command(app: Any, args: tuple[str, ...]) -> int:
    parsed = _start("list", args)
    if isinstance(parsed, int):
        return parsed
    rows = _manager(app).listing()
    if parsed.json:
        from piko.lib import jsonio

        click.echo(jsonio.dumps_pretty({"packages": rows}))
        return 0
    if not rows:
        _dim("No packages installed.")
        return 0
    for scope, title in (("user", "User packages:"), ("project", "Project packages:")):
        group = [r for r in rows if r["scope"] == scope]
        if not group:
            continue
        if scope == "project" and any(r["scope"] == "user" for r in rows):
            click.echo()
        click.secho(title, bold=True)
        for row in group:
            notes = [
                note
                for note, present in (
                    ("filtered", row["filtered"]),
                    ("not installed", not row["installed"]),
                    ("not loaded: project not trusted", not row["loaded"]),
                    ("blocked by policy", row["blockedByPolicy"]),
                )
                if present
            ]
            click.echo(f"  {row['source']}" + (f" ({', '.join(notes)})" if notes else ""))
            if row.get("installedPath"):
                _dim(f"    {row['installedPath']}")
            facts = []
            if row.get("distribution"):
                facts.append(f"{row['distribution']} {row.get('version', '')}".strip())
            elif row.get("version"):
                facts.append(str(row["version"]))
            if row.get("commit"):
                facts.append(f"commit {row['commit']}")
            if row.get("plugins"):
                facts.append(f"plugins: {', '.join(row['plugins'])}")
            if facts:
                _dim(f"    {'; '.join(facts)}")
    return 0


# ---------------------------------------------------------------------------
# config
# ---------------------------------------------------------------------------


@click.command("config", help="Enable or disable installed plugins and package resources.")
@click.argument("action", required=False, type=click.Choice(["list", "enable", "disable"]))
@click.argument("items", nargs=-1)
@click.option("-l", "--local", is_flag=True, help="Plugins: write to project settings (.pi/settings.json)")
@click.option("--json", "as_json", is_flag=True, help="With list: print JSON")
@click.pass_obj
def config_command(app: Any, action: str | None, items: tuple[str, ...], local: bool, as_json: bool) -> int:
    from piko.plugins.packages import config

    if action is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            return config.interactive(app)
        action = "list"
    if action == "list":
        return config.show(app, as_json)
    if not items:
        _err(f"Missing item to {action}.")
        _dim(f"Usage: {APP} config {action} <plugin|resource>... [-l]", err=True)
        return 1
    status = 0
    for item in items:
        try:
            click.echo(config.set_enabled(app, item, action == "enable", local=local))
        except (PackageError, OSError) as exc:
            _err(f"Error: {exc}")
            status = 1
    return status


# ---------------------------------------------------------------------------
# trust / untrust
# ---------------------------------------------------------------------------


@click.command(
    "trust",
    help="Trust a project folder: its .pi settings, resources, extensions and packages load (saved in trust.json).",
)
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--list", "list_all", is_flag=True, help="List recorded decisions")
@click.pass_obj
def trust_command(app: Any, path: str | None, list_all: bool) -> int:
    if list_all:
        decisions = app.trust.decisions()
        if app.trust.error is not None:
            _err(f"Error: {app.trust.error}")
            return 1
        if not decisions:
            _dim("No trust decisions recorded.")
        for folder, trusted in sorted(decisions.items()):
            click.echo(f"  {'trusted  ' if trusted else 'untrusted'}  {folder}")
        return 0
    policy = getattr(app, "policy", None)
    if policy is not None and (not policy.allow_project_code or policy.failed):
        _err(f"Error: project code is disabled by policy ({policy.source})")
        return 1
    folder = app.trust.set(path or app.cwd, True)
    click.secho(f"Trusted {folder}", fg="green")
    return 0


@click.command("untrust", help="Stop trusting a project folder (recorded, so piko does not ask again).")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--forget", is_flag=True, help="Forget the decision instead: piko asks again next time")
@click.pass_obj
def untrust_command(app: Any, path: str | None, forget: bool) -> int:
    target = path or app.cwd
    if forget:
        if app.trust.forget(target):
            click.echo(f"Forgot the decision for {os.path.abspath(target)}")
        else:
            _dim(f"No decision recorded for {os.path.abspath(target)}")
        return 0
    folder = app.trust.set(target, False)
    click.echo(f"Untrusted {folder}")
    return 0
