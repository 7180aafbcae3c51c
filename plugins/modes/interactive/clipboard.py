"""Reading an image from the clipboard (Ctrl+V) with the platform's tools, into a temporary file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid

_COMMANDS = (
    ("wl-paste", ["wl-paste", "--no-newline", "--type", "image/png"]),
    ("xclip", ["xclip", "-selection", "clipboard", "-t", "image/png", "-o"]),
    ("pngpaste", ["pngpaste", "-"]),
)


def read_clipboard_image() -> str | None:
    """The path of a PNG file holding the clipboard's image, or None (no image, no tool, any error)."""
    for tool, command in _COMMANDS:
        if shutil.which(tool) is None:
            continue
        if tool == "pngpaste" and sys.platform != "darwin":
            continue
        try:
            done = subprocess.run(command, capture_output=True, timeout=3, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        data = done.stdout
        if done.returncode != 0 or not data.startswith(b"\x89PNG"):
            continue
        path = os.path.join(tempfile.gettempdir(), f"pi-clipboard-{uuid.uuid4()}.png")
        try:
            with open(path, "wb") as handle:
                handle.write(data)
        except OSError:
            return None
        return path
    return None
