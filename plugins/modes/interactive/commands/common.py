"""Small helpers the built-in commands share: warnings, error text, path arguments, one-line text."""

from __future__ import annotations

import re
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def warn(ctx: InteractiveContext, text: str) -> None:
    """A warning line (pi's ``showWarning``), through the extension UI's ``notify``."""
    notify = getattr(ctx.ui, "notify", None)
    if callable(notify):
        notify(text, "warning")
    else:
        ctx.show_info(f"Warning: {text}")


def error_text(exc: BaseException) -> str:
    """An exception as a message for the user (its text, else its class name)."""
    return str(exc) or type(exc).__name__


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` with control characters (newlines, tabs) as spaces, trimmed, optionally cut."""
    flat = _CONTROL.sub(" ", text).strip()
    if limit is not None and len(flat) > limit:
        return flat[: max(0, limit - 1)] + "…"
    return flat


def path_argument(args: str) -> str | None:
    """The first argument as a path: a quoted string (``"my file.html"``) or the first word.

    An opening quote without its closing one gives ``None`` (pi does the same).
    """
    text = args.strip()
    if not text:
        return None
    if text[0] in "\"'":
        end = text.find(text[0], 1)
        return text[1:end] if end > 0 else None
    return text.split()[0]


def format_int(value: Any) -> str:
    """``12345`` -> ``12,345`` (pi's ``toLocaleString`` in an English locale)."""
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)
