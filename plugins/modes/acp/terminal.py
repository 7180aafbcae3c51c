"""``bash`` in the client's terminal (ACP ``terminal/*``) when the client offers terminals.

The built-in ``bash`` stays as it is: this registers, at run time, a ``bash`` with the same
name, description and parameters (``override=True``) whose command runs in a terminal the
editor creates and shows; its output and exit code reach the model in the words of piko's
bash. A client that cannot create the terminal gets the original tool (``ctx.invoke_tool``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any

PLUGIN = "modes.acp"
MAX_BYTES = 50 * 1024  # as piko's bash: the tail of the output, 50KB or 2000 lines
MAX_LINES = 2000


class ClientBashError(Exception):
    """A failed command; the message is what the model sees (output, then the reason)."""


def use_client_terminal(app: Any, agent: Any) -> bool:
    """Put the terminal ``bash`` in place of the built-in one; False when there is no ``bash``
    or a policy refuses overrides (then bash runs in piko's own shell)."""
    from piko.lib.records import replace

    registry = app.registries.tools
    current = registry.get("bash")
    if current is not None and current.plugin == PLUGIN:
        return True
    original = registry.original("bash")
    if original is None:
        return False
    bash = ClientBash(agent)
    definition = replace(original, execute=bash.execute, override=True)
    definition.plugin = PLUGIN
    return bool(app.registries.add_runtime("tools", definition))


class ClientBash:
    """``execute`` of the terminal ``bash``: create, wait (abort and timeout kill), read, release."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> Any:
        from piko.data.messages import TextContent
        from piko.data.messages import ToolResult

        agent = self._agent
        client, session_id = agent.client, agent.session.session_id
        command = str(params["command"])
        prefix = _setting(ctx, "shellCommandPrefix")
        try:
            created = await client.create_terminal(
                session_id=session_id,
                command=_setting(ctx, "shellPath") or "bash",
                args=["-c", f"{prefix}\n{command}" if prefix else command],
                cwd=str(ctx.cwd),
                env=_env(ctx, tool_call_id),
                output_byte_limit=MAX_BYTES,
            )
        except Exception as exc:
            sys.stderr.write(f"piko acp: the client could not open a terminal ({exc}); running bash here\n")
            return await ctx.invoke_tool("bash", params, signal=signal)
        terminal_id = created.terminal_id
        agent.show_terminal(tool_call_id, terminal_id)
        try:
            status, stopped = await _wait(client, session_id, terminal_id, signal, params.get("timeout"))
            output = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
        finally:
            with contextlib.suppress(Exception):
                await client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        text = _tail(output.output, output.truncated)
        if stopped is not None:
            raise ClientBashError(f"{text}\n\n{stopped}" if text else stopped)
        code = getattr(status, "exit_code", None)
        if code is not None and code != 0:
            text = text or "(no output)"
            raise ClientBashError(f"{text}\n\nCommand exited with code {code}")
        return ToolResult(content=[TextContent(text=text or "(no output)")], details=None)


async def _wait(
    client: Any, session_id: str, terminal_id: str, signal: Any, timeout: Any
) -> tuple[Any, str | None]:
    """The exit status, and why piko stopped the command (``None`` when it ended by itself)."""
    waiter = asyncio.ensure_future(
        client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
    )
    watchers = {waiter}
    aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
    if aborted is not None:
        watchers.add(aborted)
    seconds = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
    try:
        done, _ = await asyncio.wait(watchers, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if aborted is not None:
            aborted.cancel()
    if waiter in done:
        return waiter.result(), None
    with contextlib.suppress(Exception):
        await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
    waiter.cancel()
    if aborted is not None and aborted in done:
        return None, "Command aborted"
    return None, f"Command timed out after {_number(seconds or 0)} seconds"


def _tail(output: str, truncated_by_client: bool) -> str:
    """The last ``MAX_LINES`` lines (the client keeps the last ``MAX_BYTES``), with a notice."""
    lines = output.split("\n")
    ends_with_newline = output.endswith("\n")
    if ends_with_newline:
        lines.pop()
    if not truncated_by_client and len(lines) <= MAX_LINES:
        return output
    kept = lines[-MAX_LINES:]
    text = "\n".join(kept) + ("\n" if ends_with_newline else "")
    return text + f"\n\n[Showing the last {len(kept)} lines (50KB limit). Full output: the editor's terminal]"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _setting(ctx: Any, key: str) -> str | None:
    settings = getattr(getattr(ctx, "app", None), "settings", None)
    value = settings.get(key) if settings is not None else None
    return value if isinstance(value, str) and value else None


def _env(ctx: Any, tool_call_id: str) -> list[Any]:
    """What piko adds to a command's environment: its bin folder on ``PATH`` and ``piko_shell_env``."""
    from acp import schema

    from piko.platform.ordering import merged_answers

    app = getattr(ctx, "app", None)
    env: dict[str, str] = {}
    agent_dir = getattr(app, "agent_dir", None)
    if agent_dir is not None and (agent_dir / "bin").is_dir():
        env["PATH"] = os.pathsep.join([str(agent_dir / "bin"), os.environ.get("PATH", "")])
    pm = getattr(app, "pm", None)
    if pm is not None:
        added = merged_answers(pm, "piko_shell_env", cwd=str(ctx.cwd), tool_call_id=tool_call_id)
        env.update({str(k): str(v) for k, v in added.items()})
    return [schema.EnvVariable(name=k, value=v) for k, v in env.items()]
