"""The MCP client plugin: servers of ``mcp.json`` connected per session, their tools for the model.

This module is what piko imports at start-up, so it stays light: it registers the ``--no-mcp``
flag, the ``/mcp`` command, the ``pi mcp`` subcommands and its event handlers. The ``mcp`` SDK
is imported (through :mod:`piko.plugins.mcp.runtime`) only when a session starts with a server
configured. It uses the extension API and public hooks only (see ``docs/mcp.md``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING
from typing import Any

from piko import hookimpl

if TYPE_CHECKING:  # annotations only: start-up does not import the Protocols
    from piko import RegisterCliCommand

# the running session's servers; None while no server is configured (or with --no-mcp)
_state: dict[str, Any] = {"runtime": None, "command": False}


def _runtime() -> Any:
    return _state["runtime"]


def activate(pi: Any) -> None:
    pi.register_flag("no-mcp", description="Disable MCP servers for this run", type="boolean")

    async def on_session_start(event: Any, ctx: Any) -> None:
        await _start(pi, ctx)

    async def on_before_agent_start(event: Any, ctx: Any) -> Any:
        runtime = _runtime()
        if runtime is None:
            return None
        await runtime.wait_for_direct()
        runtime.refresh_active()
        for line in runtime.new_failures():
            sys.stderr.write(f"Warning: {line}\n")
        section = runtime.servers_section()
        if section is None:
            return None
        # the prompt as built for this prompt and changed by the handlers before this one (not
        # ctx.get_system_prompt(), which still holds the last prompt's, section included)
        return {"system_prompt": f"{event.system_prompt}\n\n{section}"}

    async def on_session_shutdown(event: Any, ctx: Any) -> None:
        runtime = _runtime()
        _state["runtime"] = None
        if runtime is not None:
            await runtime.stop()

    def on_branch_change(event: Any, ctx: Any) -> None:
        runtime = _runtime()
        if runtime is not None:
            runtime.restore_loaded(list(ctx.session_manager.get_branch()))

    async def on_servers_change(event: Any, ctx: Any) -> None:
        """An extension registered or removed a server while the session runs."""
        runtime = _runtime()
        if runtime is None:
            await _start(pi, ctx)
            return
        from piko.plugins.mcp.config import load_config

        app = ctx.app
        registered = dict(getattr(app, "extension_mcp_servers", {}))
        await runtime.sync_extension_servers(
            load_config(app.agent_dir, ctx.cwd, project_trusted(app), extra=registered)
        )

    pi.on("session_start", on_session_start)
    pi.on("mcp_servers_change", on_servers_change)
    pi.on("before_agent_start", on_before_agent_start)
    pi.on("session_shutdown", on_session_shutdown)
    for event in ("session_tree", "session_fork", "session_switch"):
        pi.on(event, on_branch_change)


def mcp_disabled(app: Any) -> bool:
    return bool(getattr(app, "flag_values", {}).get("no-mcp"))


async def _start(pi: Any, ctx: Any) -> None:
    """Connect the configured servers in the background (nothing is imported without one)."""
    from piko.plugins.mcp.config_files import has_servers_configured

    app = ctx.app
    if _runtime() is not None or mcp_disabled(app):
        return
    trusted = project_trusted(app)
    registered = dict(getattr(app, "extension_mcp_servers", {}))  # pi.register_mcp_server
    if not registered and not has_servers_configured(app.agent_dir, ctx.cwd, trusted):
        return
    from piko.plugins.mcp.config import load_config
    from piko.plugins.mcp.runtime import McpRuntime

    if not _state["command"]:  # only with servers configured: without, piko is as it was
        _state["command"] = True
        pi.register_command(
            "mcp",
            description="Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
            handler=_mcp_command,
        )

    config = load_config(app.agent_dir, ctx.cwd, trusted, extra=registered)
    from piko.plugins.mcp.config import apply_policy

    for line in apply_policy(config, getattr(app, "policy", None)):
        _warn(ctx, line)

    def emit(name: str, event: Any) -> None:
        if app.dispatcher.has_handlers(name):
            from piko.extensions.context import schedule

            schedule(app.dispatcher.emit(name, event, ctx))

    runtime = McpRuntime(
        pi, config, cwd=ctx.cwd, agent_dir=str(app.agent_dir), options=dict(app.options), emit=emit
    )
    _state["runtime"] = runtime
    for error in config.errors:
        _warn(ctx, f"MCP config error: {error}")
    runtime.start()
    for notice in runtime.notices:
        _warn(ctx, notice)
    runtime.restore_loaded(list(ctx.session_manager.get_branch()))


def _warn(ctx: Any, line: str) -> None:
    """A start-up warning: shown by the interactive screen (raw stderr would land on it unstyled,
    cut at the terminal's width); on stderr in the other modes."""
    if getattr(ctx, "mode", None) == "tui":
        ctx.ui.notify(line, "warning")
    else:
        sys.stderr.write(f"Warning: {line}\n")


def project_trusted(app: Any) -> bool:
    """Whether the project's ``.pi/mcp.json`` may be read: the one place this plugin asks about
    project trust (``App.project_trusted``, which the kernel's trust gate settles at start-up)."""
    return bool(getattr(app, "project_trusted", False))


async def _mcp_command(args: str, ctx: Any) -> None:
    runtime = _runtime()
    words = args.split()
    if runtime is None:
        ctx.ui.notify("No MCP servers configured.", "info")
        _print("No MCP servers configured.")
        return
    if not words and getattr(ctx, "mode", None) == "tui":
        from piko.plugins.mcp.manager import manage

        await manage(runtime, ctx)
        return
    if len(words) == 2 and words[0] in ("login", "logout"):
        from piko.plugins.mcp.manager import sign_in
        from piko.plugins.mcp.manager import sign_out

        await (sign_in if words[0] == "login" else sign_out)(runtime, ctx, words[1])
        return
    if len(words) == 2 and words[0] == "reconnect":
        connection = runtime.connections.get(words[1])
        if connection is None:
            ctx.ui.notify(f'Unknown MCP server "{words[1]}"', "error")
            return
        await connection.reconnect()
    text = runtime.status_text()
    ctx.ui.notify(text, "info")
    if not ctx.has_ui:
        _print(text)


def _print(text: str) -> None:
    sys.stderr.write(text + "\n")


@hookimpl
def piko_register_cli_commands(register: RegisterCliCommand) -> None:
    register("mcp", "piko.plugins.mcp.cli:mcp_group", help="Add, remove, list MCP servers")


@hookimpl
def piko_tool_registers_later(name: str, app: Any) -> bool | None:
    """``mcp__<server>__<tool>`` names in ``--tools`` are registered once their server connects,
    and ``tool_search`` and the resource tools once a server needs them: not unknown tools."""
    from piko.plugins.mcp.naming import is_mcp_tool

    if mcp_disabled(app):
        return None
    if name.startswith("mcp__"):
        return True
    if is_mcp_tool(name) or name == "tool_search":
        from piko.plugins.mcp.config_files import has_servers_configured

        registered = bool(getattr(app, "extension_mcp_servers", None))
        return registered or has_servers_configured(app.agent_dir, str(app.cwd), project_trusted(app)) or None
    return None


@hookimpl
def piko_unconfigure(config: Any) -> None:
    """piko exits: no stdio server outlives it, even one whose stop was cut short."""
    connection = sys.modules.get("piko.plugins.mcp.connection")
    if connection is not None:
        for pgid in list(connection.LIVE_PROCESS_GROUPS):
            connection.kill_process_group(pgid)
