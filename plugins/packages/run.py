"""Run an installer (pip, uv, git, npm) with its output shown on stderr, or kept for errors when quiet."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from piko.plugins.packages.errors import PackageError

TAIL_LINES = 20


def progress(message: str) -> None:
    """One progress line on stderr (stdout stays for results)."""
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()


# pip repeats every dependency piko already has; those lines say nothing new
NOISE = ("Requirement already satisfied:",)


def run(
    command: list[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    quiet: bool = False,
    capture: bool = False,
) -> str:
    """Run ``command`` and raise :class:`PackageError` when it fails.

    Its output is shown on stderr as it comes (less pip's "already satisfied" lines), or kept
    for the error message when ``quiet``; with ``capture`` its standard output is returned.
    """
    import subprocess

    sys.stderr.flush()
    try:
        process = subprocess.Popen(
            command,
            cwd=str(cwd) if cwd is not None else None,
            env=env,
            stdin=subprocess.DEVNULL if (quiet or capture) else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if capture else subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except FileNotFoundError:
        raise PackageError(
            f"{Path(command[0]).name} is not installed (needed to run: {' '.join(command)})"
        ) from None
    except OSError as exc:
        raise PackageError(f"Could not run {' '.join(command)}: {exc}") from None
    if capture:
        out, err = process.communicate()
        lines = (err or "").splitlines()
    else:
        out = ""
        lines = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if not quiet and not line.startswith(NOISE):
                sys.stderr.write(line)
                sys.stderr.flush()
        process.wait()
    if process.returncode != 0:
        message = f"{' '.join(command)} failed with code {process.returncode}"
        tail = [line for line in lines if line.strip() and not line.startswith(NOISE)][-TAIL_LINES:]
        if tail and (quiet or capture):
            message += ":\n" + "\n".join(f"  {line}" for line in tail)
        raise PackageError(message)
    return out or ""
