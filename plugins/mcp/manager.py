"""``/mcp`` in a session: the interactive screen, and the ``login``/``logout`` subcommands.

The screen shows the servers, their state, tools, and offers reconnect, exposure, enable/disable.

Menus of the extension UI (``ctx.ui.select``), laid out as pi 1.6's ``/mcp`` manager: the server
list (those that need attention first), then one server's details and actions. Enabled state and
exposure are saved to the file that defines the server (its project override, if it has one)
without touching the rest of the file; a server an extension registered changes for the session.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

EXPOSURE_CHOICES = {
    "deferred": "not declared until tool_search loads them, then called directly",
    "direct": "declared to the model like built-in tools",
    "codemode": "piko has no codemode yet: reached through tool_search, like deferred",
    "hidden": "registered but unreachable",
}
_ATTENTION = {"failed": 1, "disconnected": 2, "connected": 4, "disabled": 5}


def describe_state(connection: Any, with_error: bool = True) -> str:
    """A server's state in a few words, as the ``/mcp`` list shows it."""
    state = connection.state
    if state == "disabled":
        return "disabled"
    if state == "connected":
        tools = len(connection.tools)
        resources = " · resources" if connection.has_resources else ""
        return f"connected · {tools} tool{'' if tools == 1 else 's'}{resources}"
    if state == "failed":
        if (connection.error or "").startswith("needs sign-in"):
            return "needs sign-in"
        first = (connection.error or "unknown error").splitlines()[0]
        return f"failed: {first}" if with_error else "failed"
    if state == "connecting":
        return "connecting…"
    if state == "idle":
        return "starting"
    return str(state)


def _transport(server: Any) -> str:
    raw = server.raw
    if server.kind == "http":
        return str(raw.get("url"))
    return " ".join([str(raw.get("command")), *(str(a) for a in raw.get("args") or [])])


def _saved_where(server: Any) -> str:
    if server.scope == "extension":
        return "for this session"
    return f"saved to the {server.scope} mcp.json"


def servers_items(runtime: Any) -> list[dict[str, str]]:
    """The server list: needing attention first, then by name."""
    connections = sorted(runtime.connections.values(), key=lambda c: (_ATTENTION.get(c.state, 3), c.name))
    return [
        {
            "value": c.name,
            "label": c.name,
            "description": f"{describe_state(c)} · {c.config.exposure} · {c.config.scope}",
        }
        for c in connections
    ]


def _signed_in(connection: Any) -> bool:
    from piko.plugins.mcp import oauth

    return oauth.uses_oauth(connection.config) and oauth.has_sign_in(
        connection.config, connection.log.agent_dir
    )


def server_items(connection: Any, project_trusted: bool = False) -> list[dict[str, str]]:
    """What can be done with one server in its state."""
    from piko.plugins.mcp import oauth

    server = connection.config
    items = []
    if connection.state == "connected":
        items.append({"value": "tools", "label": "Tools", "description": f"{len(connection.tools)} offered"})
    if connection.state in ("failed", "disconnected", "connected"):
        items.append({"value": "reconnect", "label": "Reconnect", "description": ""})
    if oauth.uses_oauth(server) and connection.state != "disabled":
        if describe_state(connection) == "needs sign-in":
            items.append(
                {"value": "signin", "label": "Sign in", "description": "opens the authorization page"}
            )
        elif _signed_in(connection):
            items.append(
                {"value": "signout", "label": "Sign out", "description": "deletes the stored sign-in"}
            )
    if connection.state != "disabled":
        items.append({"value": "exposure", "label": "Exposure", "description": server.exposure})
    verb = "Enable" if connection.state == "disabled" else "Disable"
    items.append({"value": verb.lower(), "label": verb, "description": _saved_where(server)})
    if project_trusted and server.scope == "global":
        items.append({
            "value": f"{verb.lower()}-project", "label": f"{verb} in this project",
            "description": "a project override in .pi/mcp.json",
        })  # fmt: skip
    return items


def server_title(connection: Any) -> str:
    server = connection.config
    lines = [f"MCP server {server.name}", _transport(server), f"{server.scope}: {server.source}"]
    lines.append(f"State: {describe_state(connection, with_error=False)}")
    if connection.state in ("failed", "disconnected") and connection.error:
        lines.append(connection.status_line())
    return "\n".join(lines)


async def _live_select(runtime: Any, ctx: Any, make: Any, initial: Any) -> tuple[Any, Any]:
    """``ctx.ui.select`` of ``make() -> (title, items)``, shown again (where the user was) each
    time a server's state changes, until answered: ``(choice, highlighted value)``."""
    from piko.lib.abort import AbortController

    highlighted = [initial]
    while True:
        changed = AbortController()
        stop_watching = runtime.watch(partial(changed.abort, "a server changed"))
        title, items = make()
        try:
            choice = await ctx.ui.select(
                title, items, signal=changed.signal, initial=highlighted[0],
                on_highlight=lambda value: highlighted.__setitem__(0, value),
            )  # fmt: skip
        finally:
            stop_watching()
        if not changed.signal.aborted or choice is not None:
            return choice, highlighted[0]


async def manage(runtime: Any, ctx: Any) -> None:
    """The ``/mcp`` screen until the user closes it (Esc on the server list); it redraws as
    servers change state."""
    from piko.plugins.mcp import project_trusted

    if not runtime.connections:
        ctx.ui.notify(runtime.status_text(), "info")
        return
    trusted = project_trusted(ctx.app)
    name: Any = None
    while True:
        name, _ = await _live_select(runtime, ctx, lambda: ("MCP servers", servers_items(runtime)), name)
        if not name or name not in runtime.connections:
            return
        action: Any = None
        while name in runtime.connections:
            connection = runtime.connections[name]
            action, _ = await _live_select(
                runtime, ctx, lambda c=connection: (server_title(c), server_items(c, trusted)), action
            )
            if not action:
                break
            message = await run_action(runtime, ctx, name, str(action))
            if message:
                ctx.ui.notify(message, "error")


async def run_action(runtime: Any, ctx: Any, name: str, action: str) -> str | None:
    """Do ``action`` to the server ``name``; an error message when it could not be done."""
    connection = runtime.connections[name]
    if action == "tools":
        await show_tools(runtime, ctx, name)
    elif action == "reconnect":
        await connection.reconnect()
    elif action == "signin":
        await sign_in(runtime, ctx, name)
    elif action == "signout":
        await sign_out(runtime, ctx, name)
    elif action in ("enable", "disable", "enable-project", "disable-project"):
        enable = action.startswith("enable")
        failed = (
            save_override(runtime, connection.config, enable)
            if action.endswith("-project")
            else save(connection.config, {"enabled": enable})
        )
        if failed:
            return failed
        await runtime.set_enabled(name, enable)
        if enable:
            await connection.wait_ready(connection.config.timeout_s)
    elif action == "exposure":
        current = connection.config.exposure
        where = (
            f"Applies to this session; the server is registered by {connection.config.source}."
            if connection.config.scope == "extension"
            else f"Saved to {connection.config.source}."
        )
        items = [
            {"value": e, "label": f"{'✓ ' if e == current else '  '}{e}", "description": text}
            for e, text in EXPOSURE_CHOICES.items()
        ]
        choice = await ctx.ui.select(f"Exposure of {name}\n{where}", items)
        if choice and choice != current:
            failed = save(connection.config, {"exposure": choice})
            if failed:
                return failed
            runtime.set_exposure(name, str(choice))
    return None


async def show_tools(runtime: Any, ctx: Any, name: str) -> None:
    server = runtime.config.servers[name]
    entries = [e for e in runtime.tools.values() if e.server == name and not e.withdrawn]
    items = []
    for entry in entries:
        first = (entry.tool.description or "").strip().split("\n", 1)[0]
        marked = first if entry.exposure == server.exposure else f"[{entry.exposure}] {first}"
        items.append({"value": entry.tool.name, "label": entry.tool.name, "description": marked})
    if not items:
        ctx.ui.notify(f"{name} offers no tools.", "info")
        return
    title = f"Tools of {name}\nExposure {server.exposure}: {EXPOSURE_CHOICES.get(server.exposure, '')}"
    await ctx.ui.select(title, items)


def save(server: Any, changes: dict[str, Any]) -> str | None:
    """Write ``changes`` to the server's entry in its file; an error message when that failed."""
    if server.scope == "extension":
        return None
    from piko.plugins.mcp.config import update_entry

    try:
        update_entry(Path(server.source), server.name, changes)
    except (OSError, ValueError) as error:
        return f"Could not update {server.source}: {error}"
    return None


def save_override(runtime: Any, server: Any, enabled: bool) -> str | None:
    """ "Enable/Disable in this project": a project override of the user-level server in
    ``.pi/mcp.json`` (only ``enabled``; the rest of the file kept); later changes go to it."""
    from piko.plugins.mcp.config import read_config_file
    from piko.plugins.mcp.config import write_config_file
    from piko.plugins.mcp.config_files import project_config_path

    path = project_config_path(runtime.cwd)
    try:
        data = read_config_file(path)
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise ValueError(f"{path}: mcpServers is not an object")
        servers[server.name] = {"enabled": enabled}
        write_config_file(path, data)
    except (OSError, ValueError) as error:
        return f"Could not update {path}: {error}"
    runtime.move_to_override(server.name, str(path))
    return None


async def sign_in(runtime: Any, ctx: Any, name: str) -> None:
    """``/mcp login NAME``: the sign-in page is named in a notice (and opened in the browser);
    once approved, the tokens are stored and the server reconnects with them."""
    from piko.plugins.mcp import oauth
    from piko.plugins.mcp.connection import describe_error

    connection = _oauth_connection(runtime, ctx, name)
    if connection is None:
        return
    if not ctx.has_ui:
        ctx.ui.notify(f'Signing in to MCP server "{name}" requires interactive mode.', "error")
        return

    wait = oauth.RedirectWait()
    shown: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def show(url: str) -> None:
        ctx.ui.notify(f'Sign in to MCP server "{name}" in your browser:\n{url}', "info")
        oauth.open_in_browser(url)
        if not shown.done():
            shown.set_result(url)

    signing_in = asyncio.ensure_future(oauth.login(connection.config, runtime.log.agent_dir, show, wait=wait))
    if getattr(ctx, "mode", None) == "tui":
        await _paste_field(ctx, name, signing_in, shown, wait)
    await asyncio.wait({signing_in})
    if signing_in.cancelled():
        ctx.ui.notify(f'Sign-in to MCP server "{name}" cancelled.', "info")
        return
    failed = signing_in.exception()
    if failed is not None:
        ctx.ui.notify(f"Sign-in failed: {describe_error(failed)}", "error")
        return
    await connection.reconnect()
    if connection.state != "connected":
        ctx.ui.notify(f"Signed in, but {connection.status_line()}", "error")
        return
    ctx.ui.notify(f'Signed in to MCP server "{name}" ({len(connection.tools)} tools).', "info")


async def _paste_field(
    ctx: Any, name: str, signing_in: asyncio.Future[None], shown: asyncio.Future[str], wait: Any
) -> None:
    """The sign-in screen: the page to open, and an input field for the redirected URL (the
    browser ran on another machine) until the sign-in ends; Escape cancels it."""
    from piko.lib.abort import AbortController

    pending: set[asyncio.Future[Any]] = {signing_in, shown}
    await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    if signing_in.done():
        return
    ended = AbortController()
    signing_in.add_done_callback(lambda _f: ended.abort("signed in"))
    title = (
        f'Sign in to MCP server "{name}": approve in the browser, or open this page\n{shown.result()}\n'
        "If the browser runs on another machine, paste the address it ended on:"
    )
    while not signing_in.done():
        pasted = await ctx.ui.input(title, "http://127.0.0.1:…/callback?code=…&state=…", signal=ended.signal)
        if signing_in.done():
            return
        if pasted is None:  # Escape
            signing_in.cancel()
            return
        refused = wait.offer(pasted) if pasted.strip() else None
        if refused:
            ctx.ui.notify(refused, "error")
        elif pasted.strip():
            await asyncio.wait({signing_in})


async def sign_out(runtime: Any, ctx: Any, name: str) -> None:
    """``/mcp logout NAME``: delete the stored sign-in; the server is connected again without it."""
    from piko.plugins.mcp import oauth

    connection = _oauth_connection(runtime, ctx, name)
    if connection is None:
        return
    removed = oauth.logout(connection.config, runtime.log.agent_dir)
    await connection.stop()
    connection.start()
    ctx.ui.notify(
        f'Signed out of MCP server "{name}".'
        if removed
        else f'No stored credentials for MCP server "{name}".',
        "info",
    )


def _oauth_connection(runtime: Any, ctx: Any, name: str) -> Any:
    from piko.plugins.mcp import oauth

    connection = runtime.connections.get(name)
    if connection is None:
        ctx.ui.notify(f'No MCP server named "{name}".', "error")
        return None
    if not oauth.uses_oauth(connection.config):
        ctx.ui.notify(
            "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.", "error"
        )
        return None
    return connection
