"""The first prompt of a run: piped stdin, ``@file`` arguments and the first message, joined as pi joins them."""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

from piko.config.paths import expand_user
from piko.data.messages import ImageContent


class InitialMessageError(Exception):
    """An ``@file`` argument cannot be used (missing or unreadable)."""


def read_piped_stdin() -> str | None:
    """Stdin without surrounding blanks when it is not a terminal (``None`` when it is, or is blank)."""
    try:
        if os.isatty(sys.stdin.fileno()):
            return None
    except (AttributeError, OSError, ValueError):
        return None
    stream = getattr(sys.stdin, "buffer", None)
    raw = stream.read() if stream is not None else sys.stdin.read()
    data = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return data.strip() or None


_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)


def resolve_file_argument(raw: str, cwd: str) -> str:
    """An ``@file`` argument as an absolute path, as pi finds it.

    Unicode spaces count as spaces, ``~`` is the home folder, and when the file is missing
    the spellings macOS uses in screenshot names are tried (a narrow no-break space before
    AM/PM, decomposed accents, a curly apostrophe). Symbolic links are kept as written.
    """
    text = _UNICODE_SPACES.sub(" ", raw[1:] if raw.startswith("@") else raw)
    resolved = os.path.normpath(os.path.join(cwd, expand_user(text)))
    if os.path.exists(resolved):
        return resolved
    decomposed = unicodedata.normalize("NFD", resolved)
    for variant in (
        _AM_PM.sub(lambda m: f"\u202f{m.group(1)}.", resolved),
        decomposed,
        resolved.replace("'", "\u2019"),
        decomposed.replace("'", "\u2019"),
    ):
        if variant != resolved and os.path.exists(variant):
            return variant
    return resolved


def process_file_arguments(
    paths: list[str], cwd: str, *, auto_resize: bool = True
) -> tuple[str, list[ImageContent]]:
    """``<file name="...">`` blocks for text files and image attachments for images.

    Images are fitted to 2000x2000 and 4.5 MB (``auto_resize``, settings ``images.autoResize``),
    with pi's note on the new size; one that cannot be made small enough is left out with pi's
    note. Empty files are skipped; a missing or unreadable file raises :class:`InitialMessageError`.
    """
    from piko.lib.images import SNIFF_BYTES
    from piko.lib.images import detect_image_mime_type

    text = ""
    images: list[ImageContent] = []
    for raw in paths:
        path = resolve_file_argument(raw, cwd)
        if not os.path.exists(path):
            raise InitialMessageError(f"File not found: {path}")
        try:
            if os.stat(path).st_size == 0:
                continue
            data = Path(path).read_bytes()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise InitialMessageError(f"Could not read file {path}: {reason}") from exc
        mime = detect_image_mime_type(data[:SNIFF_BYTES])
        if mime:
            note = ""
            if auto_resize:
                from piko.lib.images import IMAGE_OMITTED_NOTE
                from piko.lib.images import format_dimension_note
                from piko.lib.images import resize_image

                resized = resize_image(data, mime)
                if resized is None:
                    text += f'<file name="{path}">{IMAGE_OMITTED_NOTE}</file>\n'
                    continue
                note = format_dimension_note(resized) or ""
                images.append(ImageContent(data=resized.data, mime_type=resized.mime_type))
            else:
                import base64  # here: only an @image argument needs it

                images.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
            text += f'<file name="{path}">{note}</file>\n'
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
    auto_resize = app.settings.get("images.autoResize", True) is not False
    file_text, images = (
        process_file_arguments(files, str(app.cwd), auto_resize=auto_resize) if files else ("", [])
    )
    parts: list[str] = []
    if stdin_text is not None:
        parts.append(stdin_text)
    if file_text:
        parts.append(file_text)
    if messages:
        parts.append(messages.pop(0))
    return ("".join(parts) if parts else None), (images or None), messages
