"""``pi.exec``: run a program without a shell, with a timeout and an abort signal."""

from __future__ import annotations

import asyncio
import os
import signal as signals
from typing import Any

from piko.lib.records import Record


class ExecResult(Record, kw_only=False):
    """What a finished program left: its output, exit code, and whether piko killed it."""

    stdout: str
    stderr: str
    code: int
    killed: bool = False


def kill_process_group(pid: int) -> None:
    """SIGKILL a process (which must lead its own session) and everything it started.

    The process group alone misses jobs a shell put in groups of their own (``set -m``), also
    once their parent has exited, and children that left the session (``setsid``) while their
    parent lives: on Linux the whole session and the descendants are found in ``/proc``, twice,
    to catch what was forked meanwhile. (A ``setsid`` child whose parent is gone has escaped.)
    """
    for attempt in range(3):
        targets = _session_and_descendants(pid)
        if attempt == 0:
            try:
                os.killpg(pid, signals.SIGKILL)
            except (ProcessLookupError, PermissionError):
                targets.add(pid)
        elif not targets:
            return
        for target in targets:
            try:
                os.kill(target, signals.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _session_and_descendants(root: int) -> set[int]:
    """Processes in ``root``'s session or group, or below ``root`` (empty without ``/proc``)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    parents: dict[int, int] = {}
    members: set[int] = set()
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
            # after "(comm)": state ppid pgrp session ...
            fields = stat[stat.rindex(b")") + 2 :].split()
            ppid, group, session = int(fields[1]), int(fields[2]), int(fields[3])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or unreadable
        pid = int(name)
        parents[pid] = ppid
        if session == root or group == root:
            members.add(pid)
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in members:
                members.add(child)
                pending.append(child)
    members.discard(os.getpid())
    return members


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
