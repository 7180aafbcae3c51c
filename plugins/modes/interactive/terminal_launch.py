"""``ctx.ui.open_terminal(request)``: run a command in a new tmux pane or window beside piko.

The request is pi's: ``multiplexer`` (piko launches in ``tmux``; ``zellij``, ``herdr``, ``cmux``,
``orca``, ``screen`` and ``wmux`` are recognised and refused), ``placement`` (``"pane"`` or
``"window"``), ``command`` (argv), ``cwd`` (absolute), and optionally ``target`` (a pane id for a
pane, a session for a window; by default ``$TMUX_PANE`` / the current session), ``focus``
(``False``: the new pane does not take focus), ``direction`` (``"right"``/``"left"``: side by
side, else stacked) and ``execution`` (``"direct"``, the default, or ``"shell"``: the argv
POSIX-quoted under ``/bin/sh -c``). The result is ``{"id": "%3"}`` (a pane) or ``{"id": "@2"}``
(a window). A request that is not an object or names an unknown multiplexer or placement raises
``TypeError``; any other failure raises :class:`TerminalLaunchError`, which names the provider,
the operation and the exit status but neither the command nor tmux's output.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from typing import Any

MULTIPLEXERS = ("tmux", "zellij", "herdr", "cmux", "orca", "screen", "wmux")
PLACEMENTS = ("pane", "window")


class TerminalLaunchError(RuntimeError):
    """A launch that failed: the provider, the operation and the exit status, nothing else."""

    def __init__(self, provider: str, operation: str, status: int | None = None) -> None:
        self.provider = provider
        self.operation = operation
        self.status = status
        suffix = f" (exit status {status})" if status is not None else ""
        super().__init__(f"{provider} {operation} failed{suffix}")


def _field(request: dict[str, Any], snake: str, camel: str | None = None) -> Any:
    value = request.get(snake)
    return request.get(camel) if value is None and camel else value


def tmux_argv(request: Any, env: dict[str, str]) -> list[str]:
    """The ``tmux`` command line that carries out ``request`` (validated on the way)."""
    if not isinstance(request, dict):
        raise TypeError("open_terminal: the request must be an object")
    provider = request.get("multiplexer")
    placement = request.get("placement")
    if provider not in MULTIPLEXERS:
        raise TypeError(f"open_terminal: unknown multiplexer {provider!r}")
    if placement not in PLACEMENTS:
        raise TypeError(f"open_terminal: unknown placement {placement!r}")
    if provider != "tmux":
        raise TerminalLaunchError(str(provider), f"{placement} launch (not supported by piko)")
    command = request.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise TerminalLaunchError("tmux", f"{placement} launch (command must be a non-empty argv)")
    cwd = request.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise TerminalLaunchError("tmux", f"{placement} launch (cwd must be an absolute path)")
    target = _field(request, "target")
    if target is None and placement == "pane":
        target = env.get("TMUX_PANE")
    if not env.get("TMUX") and target is None:
        raise TerminalLaunchError("tmux", f"{placement} launch (no tmux session)")
    if _field(request, "execution") == "shell":
        argv = ["/bin/sh", "-c", " ".join(shlex.quote(a) for a in command)]
    elif len(command) == 1:  # tmux would give one word to its default-shell; keep it data
        if "=" in command[0]:
            raise TerminalLaunchError(
                "tmux", f"{placement} launch (a lone executable name may not contain '=')"
            )
        argv = ["/usr/bin/env", "--", command[0]]
    else:
        argv = list(command)
    args = ["split-window" if placement == "pane" else "new-window", "-P", "-F"]
    args.append("#{pane_id}" if placement == "pane" else "#{window_id}")
    if _field(request, "focus") is False:
        args.append("-d")
    if placement == "pane":
        args.append("-h" if _field(request, "direction") in ("right", "left") else "-v")
        if _field(request, "direction") in ("left", "up"):
            args.append("-b")
    if target is not None:
        args += ["-t", str(target)]
    args += ["-c", cwd.replace("#", "##"), "--", *argv]  # tmux format-expands the start directory
    return args


async def open_terminal(request: Any, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Carry out ``request`` (see the module docstring); ``{"id": ...}`` of the pane or window."""
    env = dict(os.environ if env is None else env)
    args = tmux_argv(request, env)
    placement = request["placement"]
    tmux = shutil.which("tmux", path=env.get("PATH"))
    if tmux is None:
        raise TerminalLaunchError("tmux", f"{placement} launch (tmux is not installed)")
    process = await asyncio.create_subprocess_exec(
        tmux,
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise TerminalLaunchError("tmux", f"{placement} launch", process.returncode)
    native = out.decode("utf-8", "replace").strip()
    return {"id": native} if native else {}
