"""The ``bash`` tool: run a shell command, stream its output, keep the tail of long output."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from piko import hookimpl
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition
from piko.plugins.tools.truncate import DEFAULT_MAX_BYTES
from piko.plugins.tools.truncate import DEFAULT_MAX_LINES
from piko.plugins.tools.truncate import format_size

if TYPE_CHECKING:
    from piko.plugins.tools.shell import OutputAccumulator
    from piko.plugins.tools.shell import OutputSnapshot

NAME = "bash"

DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. "
    f"Output is truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first). If truncated, full output is saved to a temp file. "
    "Optionally provide a timeout in seconds."
)

PARAMETERS = object_schema(
    {
        "command": param("string", "Bash command to execute"),
        "timeout": param("number", "Timeout in seconds (optional, no default timeout)"),
    },
    required=["command"],
)

PROMPT_SNIPPET = "Execute bash commands (ls, grep, find, etc.)"

# Partial results are sent at most this often while output streams in.
UPDATE_THROTTLE_SECONDS = 0.1


# How much of the output a result's structured_content carries (pi 1.6's limit, for programs)
STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024


class BashToolError(Exception):
    """A failed command; the message is what the model sees (output, then the reason);
    ``structured_content`` the data of a command that ran to a non-zero exit (pi 1.6)."""

    structured_content: dict[str, Any] | None = None


def _setting(ctx: Any, key: str) -> Any:
    app = getattr(ctx, "app", None)
    settings = getattr(app, "settings", None)
    if settings is None:
        return None
    value = settings.get(key)
    return value if isinstance(value, str) and value else None


def _command_env(ctx: Any, cwd: str, tool_call_id: str | None) -> dict[str, str]:
    """The environment of a shell command: the inherited one, pi's bin folder first on ``PATH``,
    and what plugins add (``piko_shell_env``)."""
    from piko.platform.ordering import merged_answers
    from piko.plugins.tools.shell import shell_env

    env = shell_env(_bin_dir(ctx))
    pm = getattr(getattr(ctx, "app", None), "pm", None)
    if pm is not None:
        added = merged_answers(pm, "piko_shell_env", cwd=cwd, tool_call_id=tool_call_id)
        env.update({str(k): str(v) for k, v in added.items()})
    return env


def _bin_dir(ctx: Any) -> str | None:
    app = getattr(ctx, "app", None)
    agent_dir = getattr(app, "agent_dir", None)
    return str(agent_dir / "bin") if agent_dir is not None else None


def _format_output(
    snapshot: OutputSnapshot, accumulator: OutputAccumulator, empty_text: str
) -> tuple[str, dict[str, Any] | None]:
    """The text the model sees (with pi's truncation notice) and the result details."""
    truncation = snapshot.truncation
    text = snapshot.content or empty_text
    if not truncation.truncated:
        return text, None
    details = {"truncation": truncation.to_details(), "fullOutputPath": snapshot.full_output_path}
    start_line = truncation.total_lines - truncation.output_lines + 1
    end_line = truncation.total_lines
    path = snapshot.full_output_path
    if truncation.last_line_partial:
        line_size = format_size(accumulator.last_line_bytes)
        text += (
            f"\n\n[Showing last {format_size(truncation.output_bytes)} of line {end_line} "
            f"(line is {line_size}). Full output: {path}]"
        )
    elif truncation.truncated_by == "lines":
        text += (
            f"\n\n[Showing lines {start_line}-{end_line} of {truncation.total_lines}. Full output: {path}]"
        )
    else:
        text += (
            f"\n\n[Showing lines {start_line}-{end_line} of {truncation.total_lines} "
            f"({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {path}]"
        )
    return text, details


def _append_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


# updates from coroutine listeners still running (kept so that they are not garbage-collected)
_pending_updates: set[Any] = set()


def _call_update(on_update: Any, result: ToolResult) -> None:
    import asyncio
    import inspect

    try:
        outcome = on_update(result)
        if inspect.isawaitable(outcome):
            future = asyncio.ensure_future(outcome)
            _pending_updates.add(future)
            future.add_done_callback(_pending_updates.discard)
    except Exception:  # a failing listener must not stop the command
        pass


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """Run ``params["command"]`` in ``ctx.cwd``; raise :class:`BashToolError` on failure."""
    import asyncio
    import time

    from piko.plugins.tools.shell import OutputAccumulator
    from piko.plugins.tools.shell import ShellAbortedError
    from piko.plugins.tools.shell import ShellTimeoutError
    from piko.plugins.tools.shell import format_number
    from piko.plugins.tools.shell import run_shell

    command = str(params["command"])
    timeout = params.get("timeout")
    prefix = _setting(ctx, "shellCommandPrefix")
    resolved = f"{prefix}\n{command}" if prefix else command
    output = OutputAccumulator(temp_file_prefix="pi-bash")
    loop = asyncio.get_running_loop()
    dirty = False
    last_update = 0.0
    timer: asyncio.TimerHandle | None = None

    def emit_update() -> None:
        nonlocal dirty, last_update, timer
        timer = None
        if on_update is None or not dirty:
            return
        dirty = False
        last_update = time.monotonic()
        snapshot = output.snapshot(persist_if_truncated=True)
        details: dict[str, Any] = {}
        if snapshot.truncation.truncated:
            details["truncation"] = snapshot.truncation.to_details()
        if snapshot.full_output_path is not None:
            details["fullOutputPath"] = snapshot.full_output_path
        _call_update(
            on_update, ToolResult(content=[TextContent(text=snapshot.content or "")], details=details)
        )

    def on_data(data: bytes) -> None:
        nonlocal dirty, timer
        output.append(data)
        if on_update is None:
            return
        dirty = True
        delay = UPDATE_THROTTLE_SECONDS - (time.monotonic() - last_update)
        if delay <= 0:
            if timer is not None:
                timer.cancel()
            emit_update()
        elif timer is None:
            timer = loop.call_later(delay, emit_update)

    def finish_output() -> OutputSnapshot:
        nonlocal timer
        output.finish()
        if timer is not None:
            timer.cancel()
            timer = None
        emit_update()
        snapshot = output.snapshot(persist_if_truncated=True)
        output.close_temp_file()
        return snapshot

    if on_update is not None:
        _call_update(on_update, ToolResult(content=[], details=None))
    started = time.monotonic()
    try:
        try:
            exit_code = await run_shell(
                resolved,
                ctx.cwd,
                on_data=on_data,
                signal=signal,
                timeout=timeout,
                shell_path=_setting(ctx, "shellPath"),
                env=_command_env(ctx, ctx.cwd, tool_call_id),
            )
        except ShellAbortedError:
            text, _ = _format_output(finish_output(), output, "")
            raise BashToolError(_append_status(text, "Command aborted")) from None
        except ShellTimeoutError as exc:
            text, _ = _format_output(finish_output(), output, "")
            raise BashToolError(
                _append_status(text, f"Command timed out after {format_number(exc.timeout)} seconds")
            ) from None
        snapshot = finish_output()
        text, details = _format_output(snapshot, output, "(no output)")
        full, cut = output.read_full_output(STRUCTURED_OUTPUT_MAX_BYTES)
        structured: dict[str, Any] = {"output": full, "truncated": cut}  # pi 1.6's, for programs
        if cut and snapshot.full_output_path:
            structured["full_output_path"] = snapshot.full_output_path
        structured["exit_code"] = exit_code
        structured["wall_time_seconds"] = round((time.monotonic() - started) * 10) / 10
        if exit_code is not None and exit_code != 0:
            error = BashToolError(_append_status(text, f"Command exited with code {exit_code}"))
            error.structured_content = structured  # the error result keeps it (pi 1.6)
            raise error
        return ToolResult(content=[TextContent(text=text)], details=details, structured_content=structured)
    finally:
        if timer is not None:
            timer.cancel()
        output.close_temp_file()


@hookimpl(trylast=True)
async def piko_user_bash(event: Any, ctx: Any) -> Any:
    """Run a user's ``!cmd`` / RPC ``bash`` when no extension took it (registered last on purpose)."""
    from piko.data.events import BashResult
    from piko.plugins.tools.shell import execute_bash

    settings = ctx.app.settings if ctx is not None and ctx.app is not None else None
    run = await execute_bash(
        event.command,
        event.cwd,
        signal=event.signal,
        on_chunk=event.on_chunk,
        shell_path=settings.get("shellPath") if settings else None,
        command_prefix=settings.get("shellCommandPrefix") if settings else None,
        env=_command_env(ctx, event.cwd, None),
    )
    return {
        "result": BashResult(
            output=run.output,
            exit_code=run.exit_code,
            cancelled=run.cancelled,
            truncated=run.truncated,
            full_output_path=run.full_output_path,
        )
    }


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=True))
