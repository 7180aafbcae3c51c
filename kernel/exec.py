"""``pi.exec``: run a program without a shell, with a timeout and an abort signal."""

from __future__ import annotations

import asyncio
import os
import signal as signals
from typing import Any

from piko.records import Record


class ExecResult(Record, kw_only=False):
    """What a finished program left: its output, exit code, and whether piko killed it."""

    stdout: str
    stderr: str
    code: int
    killed: bool = False


def kill_process_group(pid: int) -> None:
    """SIGKILL a process and everything in its group (it must lead its own session)."""
    try:
        os.killpg(pid, signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signals.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def run_command(
    command: str,
    args: list[str],
    *,
    cwd: str | None = None,
    timeout: float | None = None,
    signal: Any = None,
    env: dict[str, str] | None = None,
) -> ExecResult:
    """Run ``command args...``; a timeout or an aborted ``signal`` kills its whole process group."""
    proc = await asyncio.create_subprocess_exec(
        command,
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    killed = False

    def kill() -> None:
        nonlocal killed
        killed = True
        kill_process_group(proc.pid)

    remove = signal.add_listener(kill) if signal is not None else None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        kill()
        out, err = await proc.communicate()
    finally:
        if remove is not None:
            remove()
    return ExecResult(
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        code=proc.returncode if proc.returncode is not None else -1,
        killed=killed,
    )
