"""The ``pi`` / ``piko`` command: fast ``--version``, plugin loading, flags, subcommands, modes.

Start-up order, as pi's: a first pass over the arguments finds what decides which plugins load
(``-e``, ``--no-extensions``, ``--disable-plugin``); plugins and extensions load; subcommands
registered by plugins (``pi plugins``, ``pi install``, ...) run when named first; otherwise the
main command is built with every flag plugins registered, parsed, and the selected mode runs.
``--version`` answers before anything is imported. Outside the interactive mode pi writes
``--help`` and ``--version`` to stderr; so do we.
"""

from __future__ import annotations

import os
import sys

from piko.version import __version__

TYPE_CHECKING = False  # typing itself is not imported: ``pi --version`` answers without it
if TYPE_CHECKING:
    from typing import Any

APP_NAME = "pi"


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def _interactive_app_mode(argv: list[str]) -> bool:
    """pi's rule: interactive when stdin is a terminal and neither ``-p`` nor ``--mode`` is given."""
    if any(a in ("-p", "--print", "--mode") or a.startswith("--mode=") for a in argv):
        return False
    return _stdin_is_tty()


def _info_stream(argv: list[str]) -> Any:
    return sys.stdout if _interactive_app_mode(argv) else sys.stderr


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else list(argv)
    if (not args or args[0].startswith("-")) and ("--version" in args or "-v" in args):
        stream = _info_stream(args)
        stream.write(f"{__version__}\n")
        stream.flush()
        raise SystemExit(0)
    from piko.engine import startup_gc
    from piko.lib import deferred_ssl

    startup_gc.pause()  # resumed when the first agent turn ends
    deferred_ssl.defer_ssl()  # asyncio starts without OpenSSL; it loads when TLS is first needed
    try:
        code = run(args)
    except KeyboardInterrupt:  # Ctrl+C before a mode took over the signal: no traceback
        code = 130
    raise SystemExit(code)


# ---------------------------------------------------------------------------
# First pass: what decides which plugins load
# ---------------------------------------------------------------------------


# What decides loading, read before plugins load (pytest's ``consider_preparse``).
_LOADING_OPTIONS = (
    (("-e", "--extension"), "extensions", "multi"),
    (("--disable-plugin",), "disable_plugins", "multi"),
    (("--no-extensions", "-ne"), "no_extensions", "flag"),
    (("--approve", "-a"), "approve", "flag"),
    (("--no-approve", "-na"), "no_approve", "flag"),
)


def _loading_specs(*, offline: bool) -> list[Any]:
    from piko.app.cli_args import OptionSpec

    specs = [
        OptionSpec(names, dest, kind, False if kind == "flag" else None)
        for names, dest, kind in _LOADING_OPTIONS
    ]
    if offline:
        specs.append(OptionSpec(("--offline",), "offline", "flag", False))
    return specs


def preparse(argv: list[str]) -> Any:
    """Read what decides loading (``-e``, ``--no-extensions``, ``--disable-plugin``, ``--offline``, a terminal)."""
    from piko.app.application import BootOptions
    from piko.app.cli_args import pick_options

    values = pick_options(argv, _loading_specs(offline=True))
    options = BootOptions()
    options.extensions.extend(values["extensions"])
    options.disable_plugins.extend(values["disable_plugins"])
    options.no_extensions = values["no_extensions"]
    options.offline = values["offline"]
    if values["approve"] or values["no_approve"]:
        options.approve = not values["no_approve"]  # both given: the safer one
    if options.offline:  # as pi: what runs from here (plugins, child processes) sees it too
        os.environ["PI_OFFLINE"] = "1"
    options.interactive = _interactive_app_mode(argv)
    options.mode = _run_mode(argv, interactive=options.interactive)
    first = _subcommand_index(argv)
    options.command = argv[first] if first < len(argv) and not argv[first].startswith("-") else None
    return options


def _mode_option(argv: list[str]) -> str | None:
    """The ``--mode`` the command line gives (None when none, or when it is not readable)."""
    from piko.app.cli_args import ArgumentError
    from piko.app.cli_args import OptionSpec
    from piko.app.cli_args import pick_options

    try:
        mode = pick_options(argv, [OptionSpec(("--mode",), "mode", "value")])["mode"]
    except ArgumentError:
        return None
    return str(mode) if mode else None


def _machine_output(argv: list[str]) -> bool:
    """Whether the command line asks for a mode whose stdout is JSON records (``json``, ``rpc``)."""
    return _mode_option(argv) in ("json", "rpc")


def _run_mode(argv: list[str], *, interactive: bool) -> str:
    """The run's mode as ``ctx.mode`` names it before any mode starts (pi 1.6's names): ``tui`` in
    an interactive run, else the ``--mode`` given (``text``, the default, is ``print``)."""
    if interactive:
        return "tui"
    mode = _mode_option(argv)
    return mode if mode and mode != "text" else "print"


def _subcommand_index(argv: list[str]) -> int:
    """Where a subcommand name may stand: after the plugin-loading options ``preparse`` read.

    ``pi --disable-plugin x plugins`` runs the ``plugins`` subcommand with ``x`` blocked.
    """
    from piko.app.cli_args import ArgumentError
    from piko.app.cli_args import options_end

    try:
        return options_end(argv, _loading_specs(offline=False))
    except ArgumentError:  # a loading option missing its value: there is no subcommand
        return len(argv)


# ---------------------------------------------------------------------------
# The main command
# ---------------------------------------------------------------------------

# (declarations, kind, help) of pi's own options; kind: flag | value | multi | optional
CORE_OPTIONS: list[tuple[tuple[str, ...], str, str, str]] = [
    (("--provider",), "value", "<name>", "Provider name (default: google)"),
    (("--model",), "value", "<pattern>", 'Model pattern or ID ("provider/id" and ":<thinking>" work)'),
    (("--api-key",), "value", "<key>", "API key (defaults to environment variables)"),
    (("--system-prompt",), "value", "<text>", "System prompt (default: the coding assistant prompt)"),
    (
        ("--append-system-prompt",),
        "multi",
        "<text>",
        "Text or file appended to the system prompt (repeatable)",
    ),
    (
        ("--mode",),
        "value",
        "<mode>",
        "Output mode: text (default), json, rpc, or any mode a plugin registers",
    ),
    (("--print", "-p"), "flag", "", "Non-interactive: process the prompt and exit"),
    (("--continue", "-c"), "flag", "", "Continue the previous session"),
    (("--resume", "-r"), "flag", "", "Pick a session to resume"),
    (("--session",), "value", "<path|id>", "Use a specific session file or partial UUID"),
    (
        ("--session-id",),
        "value",
        "<id>",
        "Use the current directory's existing session with the ID, creating it otherwise",
    ),
    (("--fork",), "value", "<path|id>", "Fork a session file or partial UUID into a new session"),
    (("--session-dir",), "value", "<dir>", "Directory for session storage and lookup"),
    (("--no-session",), "flag", "", "Do not save the session (ephemeral)"),
    (
        ("--models",),
        "value",
        "<patterns>",
        "Comma-separated model patterns for Ctrl+P cycling (globs, fuzzy)",
    ),
    (("--no-tools", "-nt"), "flag", "", "Disable all tools by default (built-in and extension)"),
    (("--no-builtin-tools", "-nbt"), "flag", "", "Disable built-in tools, keep extension tools"),
    (
        ("--tools", "-t"),
        "value",
        "<tools>",
        "Comma-separated allowlist of tool names or patterns (*); +name/-name adjust the defaults",
    ),
    (("--exclude-tools", "-xt"), "value", "<tools>", "Comma-separated tool names or patterns (*) to disable"),
    (("--thinking",), "value", "<level>", "Thinking level: off, minimal, low, medium, high, xhigh, max"),
    (("--extension", "-e"), "multi", "<path>", "Load an extension file (repeatable)"),
    (("--no-extensions", "-ne"), "flag", "", "Disable extension discovery (explicit -e paths still load)"),
    (("--skill",), "multi", "<path>", "Load a skill file or directory (repeatable)"),
    (("--no-skills", "-ns"), "flag", "", "Disable skills discovery and loading"),
    (("--prompt-template",), "multi", "<path>", "Load a prompt template file or directory (repeatable)"),
    (("--no-prompt-templates", "-np"), "flag", "", "Disable prompt template discovery and loading"),
    (("--theme",), "multi", "<path>", "Load a theme file or directory (repeatable)"),
    (("--no-themes",), "flag", "", "Disable theme discovery and loading"),
    (("--use-theme",), "value", "<name>", "The interactive theme for this run (not saved)"),
    (("--no-context-files", "-nc"), "flag", "", "Disable AGENTS.md and CLAUDE.md discovery"),
    (("--verbose",), "flag", "", "Verbose start-up (overrides the quietStartup setting)"),
    (("--offline",), "flag", "", "Disable start-up network operations (same as PI_OFFLINE=1)"),
    (("--approve", "-a"), "flag", "", "Trust the project's .pi settings and resources for this run"),
    (
        ("--no-approve", "-na"),
        "flag",
        "",
        "Ignore the project's trust-gated settings and resources for this run",
    ),
    (("--disable-plugin",), "multi", "<name>", "Block a plugin by name (repeatable; see `pi plugins`)"),
    (("--help", "-h"), "flag", "", "Show this help"),
    (("--version", "-v"), "flag", "", "Show the version number"),
]


def _dest(decls: tuple[str, ...]) -> str:
    return decls[0].lstrip("-").replace("-", "_")


def _flag_dest(name: str) -> str:
    """Where a plugin flag's value goes: apart from the core options (``plan-mode`` -> ``plugin_flag__plan_mode``)."""
    return "plugin_flag__" + "".join(c if c.isalnum() else "_" for c in name)


def option_specs(app: Any) -> list[Any]:
    """The main command's options: pi's own, then every flag plugins registered."""
    from piko.app.cli_args import OptionSpec

    specs = [
        OptionSpec(decls, _dest(decls), kind, False if kind == "flag" else None)
        for decls, kind, _metavar, _help in CORE_OPTIONS
    ]
    taken = {name for spec in specs for name in spec.names}
    for flag in app.registries.flags:
        decl = f"--{flag.name}"
        if decl in taken:
            app.pm.diagnose(
                f"plugin '{flag.plugin}': flag --{flag.name} clashes with a built-in flag; ignored"
            )
            continue
        taken.add(decl)
        kind = {"boolean": "flag", "optional": "optional"}.get(flag.type, "value")
        specs.append(OptionSpec((decl,), _flag_dest(flag.name), kind, False if kind == "flag" else None))
    return specs


def help_text(app: Any) -> str:
    """``pi --help``: usage, subcommands, options, plugin flags, modes, environment variables."""
    lines = [
        f"{APP_NAME} - a coding agent with read, bash, edit and write tools (piko {__version__})",
        "",
        "Usage:",
        f"  {APP_NAME} [options] [@files...] [messages...]",
        f"  {APP_NAME} <command> [args...]",
        "",
        "Commands:",
    ]
    commands = sorted(app.registries.cli_commands, key=lambda c: c.name)
    for command in commands:
        lines.append(f"  {APP_NAME} {command.name:<26}{command.help}")
    if not commands:
        lines.append("  (none)")
    lines += ["", "Options:"]
    for decls, _kind, metavar, text in CORE_OPTIONS:
        left = ", ".join(decls) + (f" {metavar}" if metavar else "")
        lines.append(f"  {left:<33}{text}")
    flags = list(app.registries.flags)
    if flags:
        lines += ["", "Plugin flags:"]
        for flag in flags:
            shown = flag.value_name or {"string": "<value>", "optional": "[value]"}.get(flag.type, "")
            left = f"--{flag.name}" + (f" {shown}" if shown else "")
            lines.append(f"  {left:<33}{flag.description or 'Registered by ' + flag.plugin}")
    modes = list(app.registries.modes)
    if modes:
        lines += ["", "Modes (--mode):"]
        for mode in modes:
            lines.append(f"  {mode.name:<33}{mode.description}")
    lines += [
        "",
        "Examples:",
        f'  {APP_NAME} "List all Python files in src/"          interactive, with a first prompt',
        f'  {APP_NAME} -p "Summarize README.md"                print the answer and exit',
        f'  {APP_NAME} @notes.md @screen.png "What is wrong?"   include files in the message',
        f'  {APP_NAME} --continue "Where were we?"               continue the last session',
        f"  {APP_NAME} --model anthropic/claude-sonnet-4-5:high  pick a model and thinking level",
        f'  {APP_NAME} --tools read,grep,find,ls -p "Review src/" read-only tools',
        f'  {APP_NAME} --provider faux -p "hello"                 offline demo, no key needed',
        "",
        "Environment:",
        "  ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, ...  provider API keys (see docs/providers.md)",
        "  PI_CODING_AGENT_DIR                 config directory (default: ~/.pi/agent)",
        "  PI_CODING_AGENT_SESSION_DIR         session storage directory",
        "  PIKO_DISABLE_PLUGINS=a,b            block plugins;  PIKO_PLUGINS=a,b  allow only these",
        "  PIKO_TRACE=1|path                   trace every hook call to stderr or a file",
        "",
        "Built-in tools: read, bash, edit, write (on by default); grep, find, ls (off by default)",
    ]
    return "\n".join(lines) + "\n"


def _say_error(message: str) -> int:
    from piko.lib.redaction import redact

    sys.stderr.write(f"Error: {redact(message)}\n")
    return 1


def run(argv: list[str]) -> int:
    """Load plugins, then run a subcommand or the selected mode; returns the exit code."""
    from piko.app.application import App
    from piko.platform.manager import EssentialPluginError

    app = App()
    stdout = sys.stdout
    if _machine_output(argv):  # JSON lines on stdout: what extensions print while loading goes to stderr
        sys.stdout = sys.stderr
    try:
        app.boot(preparse(argv))
    except EssentialPluginError as exc:
        return _say_error(str(exc))
    finally:
        sys.stdout = stdout

    first = _subcommand_index(argv)
    subcommand = app.registries.cli_commands.get(argv[first]) if first < len(argv) else None
    if subcommand is not None:
        app.report(notices_only=subcommand.reports_diagnostics)
        try:
            return _run_subcommand(app, argv[first], _without_trust_flags(argv[first + 1 :]))
        finally:
            app.provenance.save()

    from piko.app.cli_args import ArgumentError
    from piko.app.cli_args import parse_arguments

    try:
        values = parse_arguments(argv, option_specs(app))
    except ArgumentError as exc:
        return _say_error(str(exc))
    flag_names = {_flag_dest(flag.name): flag.name for flag in app.registries.flags}
    app.flag_values = {
        flag_names.get(key, key.removeprefix("plugin_flag__")): value
        for key, value in values.items()
        if key.startswith("plugin_flag__") and value is not None
    }
    app.options = {k: v for k, v in values.items() if not k.startswith("plugin_flag__")}
    app.report()

    if app.options.get("help"):
        _info_stream(argv).write(help_text(app))
        return 0
    if app.options.get("version"):
        _info_stream(argv).write(f"{__version__}\n")
        return 0
    for flag in app.registries.flags:
        if flag.run is not None and app.flag_values.get(flag.name) not in (None, False):
            return int(flag.resolved("run")(app, app.flag_values[flag.name], _info_stream(argv)) or 0)
    try:
        return run_mode(app, argv)
    finally:
        app.provenance.save()


_TRUST_FLAGS = frozenset({"-a", "--approve", "-na", "--no-approve"})


def _without_trust_flags(args: list[str]) -> list[str]:
    """A subcommand's arguments without ``-a``/``-na`` (read before plugins loaded, as pi takes
    them after a package command too: ``pi install -l x -a``); what follows ``--`` is kept."""
    end = args.index("--") if "--" in args else len(args)
    return [a for a in args[:end] if a not in _TRUST_FLAGS] + args[end:]


def _run_subcommand(app: Any, name: str, args: list[str]) -> int:
    import click

    definition = app.registries.cli_commands.get(name)
    command = definition.resolved("command")
    try:
        result = command.main(args=args, prog_name=f"{APP_NAME} {name}", standalone_mode=False, obj=app)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return 1
    except click.exceptions.Abort:
        return 1
    return int(result) if isinstance(result, int) else 0


def selected_mode(app: Any, argv: list[str]) -> str:
    """``--mode`` if given; ``text`` with ``-p`` or piped stdin; otherwise ``interactive``."""
    mode = app.options.get("mode")
    if mode:
        return str(mode)
    if app.options.get("print") or not _stdin_is_tty():
        return "text"
    return "interactive"


def run_mode(app: Any, argv: list[str]) -> int:
    """Run the selected mode plugin and return its exit code."""
    policy = getattr(app, "policy", None)
    if policy is not None and policy.failed:  # fail closed: no rule can be known, so nothing runs
        return _say_error(
            f"the managed policy cannot be used ({'; '.join(policy.errors)}); piko does not start until "
            "it is fixed (`pi policy show` shows what it read)"
        )
    if policy is not None:
        missing = policy.missing_required(n for n, info in app.pm.infos.items() if not info.blocked)
        if missing is not None:
            return _say_error(missing)
    name = selected_mode(app, argv)
    mode = app.registries.modes.get(name)
    if mode is None:
        from piko.platform.provenance import explain

        available = ", ".join(app.registries.modes.names()) or "none"
        why = explain(app, "modes", name)
        blocked = [i.name for i in app.pm.infos.values() if i.blocked and i.name.startswith("modes.")]
        hint = f"; {why}" if why else (f" (blocked: {', '.join(blocked)})" if blocked else "")
        return _say_error(f"mode '{name}' is not available; registered modes: {available}{hint}")
    app.options["mode"] = name
    if name == "interactive" and app.options.get("use_theme"):  # for this run only, as pi
        app.settings.override("theme", str(app.options["use_theme"]))
    clean = True
    try:
        result = mode.resolved("run")(app)
        if hasattr(result, "__await__"):
            from piko.lib.exit_signals import run_to_exit

            result, clean = run_to_exit(result)
    except Exception as exc:  # a broken mode: one line (the traceback with PIKO_TRACE), exit 1
        if app.tracer is not None:
            import traceback

            traceback.print_exc()
        from piko.lib.redaction import redact

        result = _say_error(redact(f"mode '{name}' ({mode.plugin}) failed: {type(exc).__name__}: {exc}"))
    try:
        app.pm.hook.piko_unconfigure(config=app)
    except Exception as exc:  # shutting down: report and keep the mode's exit code
        sys.stderr.write(f"Warning: piko_unconfigure failed: {exc}\n")
    code = int(result or 0)
    if not clean:  # a task or thread that will not stop: the interpreter would wait for it forever
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    return code
