"""``pi mcp add|remove|list``: change ``mcp.json`` and check servers from a shell, without a session."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from piko.plugins.mcp.config import check_entry
from piko.plugins.mcp.config import load_config
from piko.plugins.mcp.config import read_config_file
from piko.plugins.mcp.config import write_config_file
from piko.plugins.mcp.config_files import project_config_path
from piko.plugins.mcp.config_files import user_config_path

# pi mcp add's OAuth options and the oauth keys they set, in the order pi writes them
OAUTH_OPTIONS = {
    "--oauth-client-id": "clientId",
    "--oauth-client-secret": "clientSecret",
    "--oauth-callback-port": "callbackPort",
    "--oauth-client-name": "clientName",
    "--oauth-client-registration": "clientRegistration",
    "--oauth-client-metadata-url": "clientMetadataUrl",  # piko's: the document the user hosts
}
USAGE = 'Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\nUse "pi mcp --help" for usage.'
HELP = """Usage: pi mcp <command> [options]

Commands:
  add <server> [options] -- <command> [args...]   Add or replace a stdio server
  add <server> [options] --url <url>             Add or replace a streamable HTTP server
  remove <server>                                Remove a server
  list [--json]                                  Connect to every enabled server and print its state
  login <server> [-l] [--timeout <seconds>]      Sign in to an OAuth server (opens the authorization page)
  logout <server> [-l]                           Delete the stored OAuth credentials of a server

Options of add and remove:
  -l, --local                   Change .pi/mcp.json of the current directory instead of ~/.pi/agent/mcp.json
  --env KEY=VALUE               Environment of a stdio server (repeatable)
  --cwd <dir>                   Working directory of a stdio server
  --header KEY=VALUE            HTTP header (repeatable)
  --bearer-token-env-var NAME   Send Authorization: Bearer ${NAME}
  --exposure <mode>             codemode, deferred, direct or hidden
  --description <text>          What the server offers, in a sentence
"""


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def _target(app: Any, local: bool) -> tuple[Path, str]:
    if local:
        return project_config_path(app.cwd), "project"
    return user_config_path(app.agent_dir), "global"


def _open_config(app: Any, local: bool) -> tuple[Path, str, dict[str, Any]] | None:
    """The scope's config file: its path, the scope's name and what it holds; ``None`` (the
    error said) when it cannot be read."""
    path, scope = _target(app, local)
    try:
        return path, scope, read_config_file(path)
    except (OSError, ValueError) as error:
        _err(f"Error: {error}")
        return None


def _pair(value: str, option: str) -> tuple[str, str]:
    key, sep, rest = value.partition("=")
    if not sep or not key:
        raise click.UsageError(f"{option} expects KEY=VALUE, got {value!r}")
    return key, rest


class AddError(ValueError):
    """A ``pi mcp add`` mistake that is said alone, without the usage lines."""


def parse_add(args: list[str]) -> tuple[str, bool, dict[str, Any]]:
    """``(name, local, entry)`` from ``pi mcp add`` arguments; raises ``click.UsageError``."""
    name: str | None = None
    local = False
    entry: dict[str, Any] = {}
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    command: list[str] = []
    i = 0
    takes_value = {
        "--url",
        "--env",
        "--cwd",
        "--header",
        "--bearer-token-env-var",
        "--exposure",
        "--description",
        *OAUTH_OPTIONS,
    }
    oauth: dict[str, Any] = {}
    while i < len(args):
        arg = args[i]
        if arg == "--":
            command = args[i + 1 :]
            break
        if arg in ("-l", "--local"):
            local = True
        elif arg in takes_value:
            if i + 1 >= len(args):
                raise click.UsageError(f"{arg} needs a value")
            value = args[i + 1]
            i += 1
            if arg == "--url":
                entry["url"] = value
            elif arg == "--env":
                key, val = _pair(value, arg)
                env[key] = val
            elif arg == "--cwd":
                entry["cwd"] = value
            elif arg == "--header":
                key, val = _pair(value, arg)
                headers[key] = val
            elif arg == "--bearer-token-env-var":
                headers["Authorization"] = "Bearer ${" + value + "}"
            elif arg == "--exposure":
                entry["exposure"] = value
            elif arg == "--description":
                entry["description"] = value
            elif arg in OAUTH_OPTIONS:
                key = OAUTH_OPTIONS[arg]
                oauth[key] = int(value) if key == "callbackPort" and value.isdigit() else value
        elif arg.startswith("-"):
            raise click.UsageError(f"unknown option {arg}")
        elif name is None:
            name = arg
        else:
            raise click.UsageError(f"unexpected argument {arg!r} (put the server command after --)")
        i += 1
    if name is None or (not command and "url" not in entry) or (command and "url" in entry):
        raise click.UsageError("")
    if command and oauth:
        first = next(option for option, key in OAUTH_OPTIONS.items() if key in oauth)
        raise AddError(f"{first} only applies to HTTP servers (--url).")
    if command:
        out: dict[str, Any] = {"command": command[0]}
        if command[1:]:
            out["args"] = command[1:]
        if env:
            out["env"] = env
        if "cwd" in entry:
            out["cwd"] = entry.pop("cwd")
    else:
        if env or "cwd" in entry:
            raise click.UsageError("--env and --cwd apply to stdio servers only")
        out = {"url": entry.pop("url")}
        if headers:
            out["headers"] = headers
        if oauth:
            out["oauth"] = {key: oauth[key] for key in OAUTH_OPTIONS.values() if key in oauth}
    out.update(entry)
    return name, local, out


class RawCommand(click.Command):
    """A command that gets its arguments exactly as typed (``--`` included): ``pi mcp add`` needs it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.params["args"] = tuple(args)
        return []


@click.command("mcp", cls=RawCommand, add_help_option=False)
@click.pass_obj
def mcp_group(app: Any, args: tuple[str, ...]) -> int:
    """Add, remove and list MCP servers."""
    words = list(args)
    if not words or words[0] in ("-h", "--help", "help"):
        click.echo(HELP, nl=False)
        return 0
    verb, rest = words[0], words[1:]
    if verb == "add":
        return _add(app, rest)
    if verb == "remove":
        return _remove(app, rest)
    if verb == "list":
        return _list(app, rest)
    if verb in ("login", "logout"):
        return _sign(app, verb, rest)
    _err(f'Unknown command "{verb}".\n{USAGE}')
    return 1


def _add(app: Any, args: list[str]) -> int:
    try:
        name, local, entry = parse_add(args)
    except click.UsageError as error:
        _err((f"{error.message}\n" if error.message else "") + USAGE)
        return 1
    except AddError as error:
        _err(str(error))
        return 1
    _kind, problem = check_entry(name, entry)
    if problem:
        _err(problem)
        return 1
    opened = _open_config(app, local)
    if opened is None:
        return 1
    path, scope, data = opened
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        servers = {}
    replaced = name in servers
    servers[name] = entry
    data["mcpServers"] = servers
    write_config_file(path, data)
    click.echo(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    # the saved decision decides the next start (this run may have found nothing to protect yet)
    if local and not app.trust.is_trusted(app.cwd):
        click.echo(
            f"The project is not trusted, so {path} is ignored until you start pi in the project and trust it."
        )
    if "url" in entry:
        click.echo(f"Check it with: pi mcp list. If it requires sign-in: pi mcp login {name}")
    else:
        click.echo("Check it with: pi mcp list")
    return 0


def _remove(app: Any, args: list[str]) -> int:
    local = any(a in ("-l", "--local") for a in args)
    names = [a for a in args if not a.startswith("-")]
    if len(names) != 1:
        _err("Usage: pi mcp remove <server> [-l]")
        return 1
    name = names[0]
    opened = _open_config(app, local)
    if opened is None:
        return 1
    path, scope, data = opened
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or name not in servers:
        _err(f'No {scope} MCP server named "{name}" in {path}.')
        return 1
    del servers[name]
    write_config_file(path, data)
    click.echo(f'Removed {scope} MCP server "{name}" from {path}.')
    return 0


def _list(app: Any, args: list[str]) -> int:
    from piko.plugins import mcp as plugin

    as_json = "--json" in args
    trusted = plugin.project_trusted(app)
    config = load_config(app.agent_dir, app.cwd, trusted)
    if not config.servers and not config.errors:
        if as_json:
            click.echo('{\n  "servers": [],\n  "errors": []\n}')
        else:
            click.echo(
                f"No MCP servers configured. Add them to {user_config_path(app.agent_dir)} or .pi/mcp.json."
            )
        return 0
    servers = asyncio.run(_connect_all(app, config))
    ok = not config.errors and all(s["state"] in ("connected", "disabled") for s in servers)
    if as_json:
        from piko.lib import jsonio

        click.echo(jsonio.dumps_pretty({"servers": servers, "errors": config.errors}))
        return 0 if ok else 1
    for server in servers:
        click.echo(f"{server['name']}: {server['state']}"
                   + (f", {len(server['tools'])} tools" if server["state"] == "connected" else "")
                   + f" ({server['exposure']}, {server['scope']})")  # fmt: skip
        click.echo(f"  {server['transport']}")
        if server["tools"]:
            marks = server.get("toolExposure", {})
            click.echo(
                "  tools: " + ", ".join(t + (f" [{marks[t]}]" if t in marks else "") for t in server["tools"])
            )
        if server.get("resources"):
            click.echo("  offers resources")
        if server.get("error"):
            click.echo(f"  {server['error']}")
    for error in config.errors:
        click.echo(f"config error: {error}")
    return 0 if ok else 1


async def _connect_all(app: Any, config: Any) -> list[dict[str, Any]]:
    """Connect every enabled server at once, then stop them; one record each, in file order."""
    from piko.plugins.mcp.connection import ServerConnection
    from piko.plugins.mcp.log import McpLog
    from piko.plugins.mcp.naming import tool_exposure

    log = McpLog(app.agent_dir)
    connections = [ServerConnection(s, str(app.cwd), log) for s in config.servers.values()]
    for connection in connections:
        connection.start()
    await asyncio.gather(*(c.wait_ready(c.config.timeout_s + 2.0) for c in connections))
    out: list[dict[str, Any]] = []
    for connection in connections:
        server = connection.config
        tools = [t.name for t in connection.tools]
        record: dict[str, Any] = {
            "name": server.name, "scope": server.scope, "source": server.source, "enabled": server.enabled,
            "exposure": server.exposure, "transport": server.transport, "state": connection.state, "tools": tools,
        }  # fmt: skip
        differing = {
            t: e
            for t in tools
            if (e := tool_exposure(server.exposure, server.tool_exposure, t)) != server.exposure
        }
        if differing:
            record["toolExposure"] = differing
        if connection.has_resources:
            record["resources"] = True
        if connection.state in ("failed", "disconnected"):
            record["error"] = connection.status_line().split(": ", 1)[-1]
        out.append(record)
    await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
    return out


def _sign(app: Any, verb: str, args: list[str]) -> int:
    """``pi mcp login|logout <server> [-l] [--timeout S]``."""
    local = any(a in ("-l", "--local") for a in args)
    timeout = 300.0
    names: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--timeout" and verb == "login" and i + 1 < len(args):
            try:
                timeout = float(args[i + 1])
            except ValueError:
                _err(f"--timeout expects seconds, got {args[i + 1]!r}")
                return 1
            i += 1
        elif not args[i].startswith("-"):
            names.append(args[i])
        i += 1
    if len(names) != 1:
        _err(f"Usage: pi mcp {verb} <server> [-l]" + (" [--timeout <seconds>]" if verb == "login" else ""))
        return 1
    from piko.plugins import mcp as plugin

    config = load_config(app.agent_dir, app.cwd, plugin.project_trusted(app))
    server = config.servers.get(names[0])
    if server is None or (local and server.scope != "project"):
        where = "the project's .pi/mcp.json" if local else "mcp.json"
        _err(f'No MCP server named "{names[0]}" in {where}.')
        return 1
    from piko.plugins.mcp import oauth

    if not oauth.uses_oauth(server):
        _err(
            f'MCP server "{server.name}" does not use OAuth (it is not an HTTP server without an Authorization header).'
        )
        return 1
    if verb == "logout":
        removed = oauth.logout(server, app.agent_dir)
        click.echo(
            f'Signed out of MCP server "{server.name}".'
            if removed
            else f'No stored sign-in for "{server.name}".'
        )
        return 0

    try:
        asyncio.run(_login_with_paste(app, server, timeout))
    except BaseException as error:  # the SDK raises exception groups
        if isinstance(error, KeyboardInterrupt):
            return 130
        from piko.plugins.mcp.connection import describe_error

        _err(f'Sign-in to MCP server "{server.name}" failed: {describe_error(error)}')
        return 1
    click.echo(f'Signed in to MCP server "{server.name}".')
    return 0


PASTE_PROMPT = "Or paste the redirected URL here: "


async def _login_with_paste(app: Any, server: Any, timeout: float) -> None:
    """``pi mcp login``: the page is printed (and opened in the browser); the code comes back to
    the loopback callback, or as the redirected URL written to stdin (a prompt on a terminal;
    plain lines otherwise), for a browser on another machine. A line that does not fit is one
    error line, and the wait goes on."""
    import threading

    from piko.plugins.mcp import oauth

    loop = asyncio.get_running_loop()
    wait = oauth.RedirectWait()
    tty = sys.stdin is not None and sys.stdin.isatty()

    def show(url: str) -> None:
        _err(f"Open this page to sign in to {server.name}:\n{url}")
        oauth.open_in_browser(url)
        if tty:
            sys.stderr.write(PASTE_PROMPT)
            sys.stderr.flush()

    def offer(line: str) -> None:
        refused = wait.offer(line)
        if refused and not wait.done:
            _err(refused)
            if tty:
                sys.stderr.write(PASTE_PROMPT)
                sys.stderr.flush()

    def read_stdin() -> None:  # a daemon thread: a blocked read does not hold up the exit
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            for line in sys.stdin:
                if line.strip():
                    loop.call_soon_threadsafe(offer, line)

    if sys.stdin is not None:
        threading.Thread(target=read_stdin, name="mcp-login-paste", daemon=True).start()
    try:
        await oauth.login(server, app.agent_dir, show, timeout=timeout, wait=wait)
    finally:
        if tty and wait.state is not None:  # end the prompt's line (the URL may never be typed)
            sys.stderr.write("\n")
