"""Asking for an HTML export of a session through the ``piko_export_html`` service.

:func:`request_export` is the one way to ask (``pi --export``, ``/export`` and RPC
``export_html`` use it): it fires the hook and turns a failed handler's error into
:class:`ExportFailed` with that handler's message, instead of "no exporter".
"""

from __future__ import annotations

from typing import Any

NO_EXPORTER = "HTML export is not available: no plugin answers piko_export_html (see `pi plugins`)"


class ExportFailed(Exception):
    """No page was written; the message says why (for ``Error: <message>``)."""


async def request_export(app: Any, request: Any, ctx: Any) -> str:
    """Fire ``export_html`` and return the path written; raise :class:`ExportFailed` otherwise."""
    errors: list[str] = []

    def on_error(error: Any) -> None:
        if getattr(error, "event", None) == "export_html":
            errors.append(str(getattr(error, "error", "") or "export failed"))

    app.dispatcher.error_listeners.append(on_error)
    try:
        result = await app.dispatcher.emit("export_html", request, ctx)
    finally:
        app.dispatcher.error_listeners.remove(on_error)
    if isinstance(result, dict):
        result = result.get("path")
    if result:
        return str(result)
    raise ExportFailed(errors[-1] if errors else NO_EXPORTER)


async def export_running_session(session: Any, output_path: str | None) -> str:
    """The running session (its entries as they are now) as an HTML page through ``export_html``;
    the path written, or :class:`ExportFailed`."""
    from piko.data.events import ExportRequest

    manager = session.session_manager
    request = ExportRequest(
        session_file=session.session_file,
        entries=list(manager.get_entries()),
        header=manager.header,
        output_path=output_path,
    )
    return await request_export(session.app, request, session.ctx)
