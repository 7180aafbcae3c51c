"""Running a real ``pi`` (piko's own or pi's node build) on a test's agent dir, and reading back the
conversation a request to the scripted server carried."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from piko.testing.rpc_client import agent_environment
from support.pi_dirs import make_pi_dirs

__all__ = ["PIKO_PI", "cli_environment", "run_cli", "run_in_pi_dirs", "sent_texts"]

PIKO_PI = Path(sys.executable).with_name("pi")  # piko's ``pi`` of this interpreter


def cli_environment(
    agent: Path, *, without: tuple[str, ...] = ("PI_",), path_prefix: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """This process's environment less the variables whose names start with ``without``, aimed at
    ``agent`` (``HOME`` is its sibling ``home``) and offline; ``path_prefix`` goes first on ``PATH``
    (where pi's own node is)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(without)}
    env.update(PI_CODING_AGENT_DIR=str(agent), HOME=str(agent.parent / "home"), PI_OFFLINE="1")
    if path_prefix:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_cli(
    command: list[str],
    agent: Path,
    cwd: Path,
    *args: str,
    input: str | None = None,
    timeout: float = 90,
    **environment: Any,
) -> subprocess.CompletedProcess[str]:
    """``command --provider mock --model mock-1 ARGS`` run to its end in ``cwd`` with
    :func:`cli_environment` (``environment`` are its keywords); stdin is ``input``, else empty."""
    stdin: dict[str, Any] = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run(
        [*command, "--provider", "mock", "--model", "mock-1", *args],
        cwd=cwd,
        env=cli_environment(agent, **environment),
        capture_output=True,
        text=True,
        timeout=timeout,
        **stdin,
    )


def run_in_pi_dirs(
    root: Path,
    server: Any,
    *args: str,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    timeout: float = 60,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``pi --provider mock --model mock-1 --no-session ARGS`` in the folders
    :func:`~support.pi_dirs.make_pi_dirs` lays out under ``root`` for ``server`` (with
    ``settings``), with :func:`~piko.testing.rpc_client.agent_environment` (``env`` on top): the
    finished run and its work dir."""
    agent, work = make_pi_dirs(root, server, settings)
    done = subprocess.run(
        [str(PIKO_PI), "--provider", "mock", "--model", "mock-1", "--no-session", *args],
        cwd=work, env=agent_environment(agent, env), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    return done, work


def sent_texts(request: dict[str, Any]) -> list[str]:
    """``role: text`` of each message a chat-completions request sent, the system prompt
    (``system`` or ``developer``) left out."""
    out = []
    for message in request["body"]["messages"]:
        if message["role"] in ("system", "developer"):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        out.append(f"{message['role']}: {content}")
    return out
