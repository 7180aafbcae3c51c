"""The ``export.html`` plugin: answers ``piko_export_html`` (``--export``, ``/export``, RPC ``export_html``).

It writes one self-contained HTML page of a session: the conversation of the current branch,
thinking, tool calls with their results, diffs and images, and the session tree to show any
other branch. Given a session file it reads it (never writing it); given a running session's
entries it uses those. The default output is ``pi-session-<session file name>.html`` in the
current directory, as pi names it. The user's known credentials are masked in the page
(:func:`piko.lib.redaction.mask_known_secrets`). The implementation runs last (``trylast``), so a plugin or
extension of your own that answers the hook replaces it; see ``docs/export.md``.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from piko import hookimpl

__all__ = ["default_output_path", "export_html", "piko_export_html"]

OUTPUT_PREFIX = "pi-session-"  # pi's APP_NAME, then "-session-"


def default_output_path(session_file: str | None, session_id: str | None) -> str:
    """``pi-session-<file name without .jsonl>.html`` (or the session id for a session not on disk)."""
    if session_file:
        base = os.path.basename(session_file)
        base = base[: -len(".jsonl")] if base.endswith(".jsonl") else base
    else:
        base = session_id or "export"
    return f"{OUTPUT_PREFIX}{base}.html"


def _write(path: str, text: str) -> None:
    """Write the page whole or not at all (a temporary file renamed over the target)."""
    from piko.plugins.export.session_view import ExportError

    data = text.encode("utf-8", errors="replace")  # lone surrogates from JavaScript strings
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ExportError(f"Cannot write {path}: it is a directory")
    if not os.path.isdir(directory):
        raise ExportError(f"Cannot write {path}: no such directory {directory}")
    # unique per write: exports to one path may run at once (RPC export_html, two processes)
    temp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(temp, "xb") as fh:
            fh.write(data)
        os.replace(temp, path)
    except OSError as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise ExportError(f"Cannot write {path}: {exc.strerror or exc}") from None


def export_html(
    request: Any,
    *,
    leaf_id: str | None = None,
    system_prompt: str | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> str:
    """Write the page an :class:`~piko.data.events.ExportRequest` asks for; returns the path written.

    Raises :class:`~piko.plugins.export.session_view.ExportError` with a message for the user.
    Exports run one at a time (they are called from worker threads, and the first one imports
    the renderer and pygments, whose lazily loaded parts are not safe to load from two threads).
    """
    with _EXPORTING:
        return _export_html(request, leaf_id=leaf_id, system_prompt=system_prompt, tools=tools)


_EXPORTING = threading.Lock()


def _export_html(
    request: Any,
    *,
    leaf_id: str | None,
    system_prompt: str | None,
    tools: list[dict[str, Any]] | None,
) -> str:
    from piko.lib.redaction import mask_known_secrets
    from piko.plugins.export.page import render_page
    from piko.plugins.export.session_view import ExportError
    from piko.plugins.export.session_view import load_session_file
    from piko.plugins.export.session_view import view_from_entries

    session_file = getattr(request, "session_file", None)
    entries = getattr(request, "entries", None)
    if entries:
        view = view_from_entries(
            entries,
            getattr(request, "header", None),
            leaf_id=leaf_id,
            source=session_file,
            system_prompt=system_prompt,
        )
    elif session_file and (entries is None or os.path.exists(session_file)):
        view = load_session_file(session_file)
        view.system_prompt = system_prompt
    else:
        raise ExportError("Nothing to export yet - start a conversation first")
    output = getattr(request, "output_path", None) or default_output_path(session_file, view.session_id)
    _write(output, mask_known_secrets(render_page(view, tools)))  # an export is for sharing: no keys
    return output


def _session_state(ctx: Any, request: Any) -> dict[str, Any]:
    """The leaf and system prompt of the running session the request comes from (none from the CLI)."""
    state: dict[str, Any] = {}
    if ctx is None or not getattr(request, "entries", None):
        return state
    try:
        manager = ctx.session_manager
        header: Any = getattr(request, "header", None)
        header_id = header.get("id") if header is not None and hasattr(header, "get") else None
        if header_id is None or header_id == manager.get_session_id():
            state["leaf_id"] = manager.get_leaf_id()
    except Exception:  # no session behind this context (CLI, tests): the last entry is the leaf
        pass
    try:
        prompt = ctx.get_system_prompt()
        if isinstance(prompt, str) and prompt:
            state["system_prompt"] = prompt
    except Exception:
        pass
    return state


@hookimpl(trylast=True)
async def piko_export_html(request: Any, ctx: Any) -> str:
    """Export in a worker thread so that a running session stays responsive."""
    import asyncio

    state = _session_state(ctx, request)
    return await asyncio.to_thread(export_html, request, **state)
