"""The first prompt of a run: piped stdin, ``@file`` arguments and the first message, joined as pi joins them."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

from piko.messages import ImageContent
from piko.paths import expand_user

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class InitialMessageError(Exception):
    """An ``@file`` argument cannot be used (missing or unreadable)."""


def image_mime(head: bytes) -> str | None:
    """The image type from a file's first bytes (PNG, JPEG, GIF, WebP), else None."""
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_piped_stdin() -> str | None:
    """All of stdin when it is not a terminal (``None`` when it is, or when it is empty)."""
    try:
        if os.isatty(sys.stdin.fileno()):
            return None
    except (AttributeError, OSError, ValueError):
        return None
    data = sys.stdin.read()
    return data if data.strip() else None


def process_file_arguments(paths: list[str], cwd: str) -> tuple[str, list[ImageContent]]:
    """``<file name="...">`` blocks for text files and image attachments for images."""
    text = ""
    images: list[ImageContent] = []
    for raw in paths:
        path = Path(expand_user(raw))
        if not path.is_absolute():
            path = Path(cwd) / path
        path = path.resolve()
        if not path.exists():
            raise InitialMessageError(f"File not found: {path}")
        try:
            if path.stat().st_size == 0:
                continue
            data = path.read_bytes()
        except OSError as exc:
            raise InitialMessageError(f"Could not read file {path}: {exc}") from exc
        mime = image_mime(data[:16])
        if mime:
            images.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
            text += f'<file name="{path}"></file>\n'
        else:
            text += f'<file name="{path}">\n{data.decode("utf-8", "replace")}\n</file>\n'
    return text, images


def build_initial_message(
    app: Any, stdin_text: str | None
) -> tuple[str | None, list[ImageContent] | None, list[str]]:
    """``(first prompt, its images, remaining messages)`` from stdin, ``@files`` and positional args."""
    args = [str(a) for a in app.options.get("args") or ()]
    files = [a[1:] for a in args if a.startswith("@")]
    messages = [a for a in args if not a.startswith("@")]
    file_text, images = process_file_arguments(files, str(app.cwd)) if files else ("", [])
    parts: list[str] = []
    if stdin_text is not None:
        parts.append(stdin_text)
    if file_text:
        parts.append(file_text)
    if messages:
        parts.append(messages.pop(0))
    return ("".join(parts) if parts else None), (images or None), messages
