"""Copying text to the system clipboard as pi does: platform tools first, OSC 52 when remote or as a fallback.

On macOS ``pbcopy``, on Windows ``clip``, on Linux ``termux-clipboard-set`` (Termux),
``wl-copy`` (Wayland), ``xclip`` or ``xsel`` (X11). Over SSH/mosh, or when no tool worked, the
terminal is asked through an OSC 52 escape sequence (payloads over 100,000 base64 characters are
not sent: some terminals choke on them).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Mapping

MAX_OSC52_ENCODED_LENGTH = 100_000
TOOL_TIMEOUT_S = 5.0


class ClipboardError(RuntimeError):
    """Nothing could take the text."""


def is_remote_session(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("SSH_CONNECTION") or env.get("SSH_CLIENT") or env.get("MOSH_CONNECTION"))


def is_wayland_session(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("WAYLAND_DISPLAY")) or env.get("XDG_SESSION_TYPE") == "wayland"


def osc52_sequence(text: str) -> str | None:
    """The OSC 52 "set clipboard" sequence for ``text``, or ``None`` when it is too large."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    if len(encoded) > MAX_OSC52_ENCODED_LENGTH:
        return None
    return f"\x1b]52;c;{encoded}\x07"


def _write_terminal(sequence: str) -> None:
    """Write straight to the real terminal (past any stdout proxy a full-screen UI installs)."""
    stream = sys.__stdout__ or sys.stdout
    stream.write(sequence)
    stream.flush()


def _run(argv: list[str], text: str) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    try:
        result = subprocess.run(
            argv,
            input=text.encode("utf-8"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=TOOL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def _spawn_detached(argv: list[str], text: str) -> bool:
    """``wl-copy`` keeps running to own the selection: feed it and do not wait."""
    if shutil.which(argv[0]) is None:
        return False
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert process.stdin is not None
        try:
            process.stdin.write(text.encode("utf-8"))
            process.stdin.close()
        except BrokenPipeError:
            pass
    except OSError:
        return False
    return True


def _platform_copy(text: str, platform: str, env: Mapping[str, str]) -> bool:
    if platform == "darwin":
        return _run(["pbcopy"], text)
    if platform == "win32":
        return _run(["clip"], text)
    if env.get("TERMUX_VERSION") and _run(["termux-clipboard-set"], text):
        return True
    if is_wayland_session(env) and env.get("WAYLAND_DISPLAY") and _spawn_detached(["wl-copy"], text):
        return True
    if env.get("DISPLAY"):
        return _run(["xclip", "-selection", "clipboard"], text) or _run(
            ["xsel", "--clipboard", "--input"], text
        )
    return False


def copy_to_clipboard(
    text: str,
    *,
    platform: str | None = None,
    env: Mapping[str, str] | None = None,
    write_terminal: Callable[[str], None] | None = None,
) -> list[str]:
    """Copy ``text``; returns how (``["tool"]``, ``["osc52"]`` or both). Raises :class:`ClipboardError`."""
    platform = platform or sys.platform
    env = os.environ if env is None else env
    ways: list[str] = []
    if _platform_copy(text, platform, env):
        ways.append("tool")
    if is_remote_session(env) or not ways:
        sequence = osc52_sequence(text)
        if sequence is not None:
            (write_terminal or _write_terminal)(sequence)
            ways.append("osc52")
    if not ways:
        raise ClipboardError("Failed to copy to clipboard")
    return ways
