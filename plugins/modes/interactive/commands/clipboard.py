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


def _feed(argv: list[str], text: str, *, wait: bool = True) -> bool:
    """Pipe ``text`` into the clipboard command ``argv``; ``False`` when it is missing or fails.

    With ``wait=False`` the command is left running in its own session and counts as done once it
    has the text: ``wl-copy`` keeps running to own the selection.
    """
    if shutil.which(argv[0]) is None:
        return False
    data = text.encode("utf-8")
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=not wait,
        )
    except OSError:
        return False
    if not wait:
        assert process.stdin is not None
        try:
            process.stdin.write(data)
            process.stdin.close()
        except BrokenPipeError:
            pass
        return True
    try:
        process.communicate(data, timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False
    return process.returncode == 0


def _platform_copy(text: str, platform: str, env: Mapping[str, str]) -> bool:
    if platform == "darwin":
        return _feed(["pbcopy"], text)
    if platform == "win32":
        return _feed(["clip"], text)
    if env.get("TERMUX_VERSION") and _feed(["termux-clipboard-set"], text):
        return True
    if is_wayland_session(env) and env.get("WAYLAND_DISPLAY") and _feed(["wl-copy"], text, wait=False):
        return True
    if env.get("DISPLAY"):
        return _feed(["xclip", "-selection", "clipboard"], text) or _feed(
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
