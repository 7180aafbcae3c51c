"""``ctx.ui`` in RPC mode: dialogs and notices become ``extension_ui_request`` lines (pi's sub-protocol).

``select``, ``confirm``, ``input`` and ``editor`` send a request and wait for the client's
``extension_ui_response`` with the same ``id``; a ``timeout`` (milliseconds) or an aborted
``signal`` ends the wait with the dialog's cancel value (``None``, or ``False`` for confirm), as
does the client answering ``{"cancelled": true}`` or the mode shutting down. ``notify``,
``set_status``, ``set_widget``, ``set_title`` (only with ``PI_RPC_EMIT_TITLE`` set) and
``set_editor_text`` are fire-and-forget. What needs a terminal (custom components, footer,
header, editor component, working message, autocomplete, terminal input) does nothing, as in
:class:`~piko.extensions.ui.NoOpUI`, and ``get_editor_text`` is ``""``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from piko.extensions.ui import NoOpUI
from piko.platform.dispatch import paused_budget

_TRUTHY = ("1", "true", "yes", "on")


def _new_id() -> str:
    """A random (version 4) UUID, as pi's ``crypto.randomUUID`` gives."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def title_requests_enabled() -> bool:
    """``PI_RPC_EMIT_TITLE`` set to 1/true/yes/on: ``setTitle`` requests are sent."""
    return os.environ.get("PI_RPC_EMIT_TITLE", "").strip().lower() in _TRUTHY


def _without_none(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if v is not None}


class RpcUI(NoOpUI):
    """The extension UI of RPC mode; ``send`` writes one protocol record. What needs a terminal
    (custom components, footer, header, themes, reading the editor: it lives in the client, and
    a synchronous call cannot ask it) is :class:`~piko.extensions.ui.NoOpUI`'s nothing."""

    has_ui = True
    supports_editor = True  # the client's composer (set_editor_text, paste_to_editor)

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._closed = False
        self.emit_title = title_requests_enabled()

    # -- the client's answers --------------------------------------------------------------------

    def resolve(self, response: dict[str, Any]) -> bool:
        """Hand an ``extension_ui_response`` to the dialog waiting for it; False if none waits."""
        request_id = response.get("id")
        future = self._pending.pop(request_id, None) if isinstance(request_id, str) else None
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def cancel_all(self) -> None:
        """End every open dialog with its cancel value, and any opened later (the mode is shutting down)."""
        self._closed = True
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_result({"cancelled": True})

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    async def _dialog(self, request: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any] | None:
        """Send ``request``; the client's response, or None on timeout, abort or cancellation."""
        signal = opts.get("signal")
        if self._closed or (signal is not None and getattr(signal, "aborted", False)):
            return None
        request_id = _new_id()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        remove_listener: Callable[[], None] | None = None
        if signal is not None and hasattr(signal, "add_listener"):

            def on_abort() -> None:
                if not future.done():
                    future.set_result({"cancelled": True})

            remove_listener = signal.add_listener(on_abort)
        timeout = opts.get("timeout")
        seconds = timeout / 1000.0 if isinstance(timeout, (int, float)) and timeout > 0 else None
        try:
            self._send({"type": "extension_ui_request", "id": request_id, **_without_none(request)})
            try:
                with paused_budget():  # the handler's budget counts its own time, not the user's
                    response = await asyncio.wait_for(asyncio.shield(future), seconds)
            except TimeoutError:
                return None
        finally:
            self._pending.pop(request_id, None)
            if remove_listener is not None:
                remove_listener()
        if response.get("cancelled"):
            return None
        return response

    # -- dialogs ---------------------------------------------------------------------------------

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        request = {
            "method": "select",
            "title": title,
            "options": list(options),
            "timeout": opts.get("timeout"),
        }
        response = await self._dialog(request, opts)
        return response.get("value") if response is not None else None

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        request = {"method": "confirm", "title": title, "message": message, "timeout": opts.get("timeout")}
        response = await self._dialog(request, opts)
        if response is None:
            return False
        if "confirmed" in response:
            return response["confirmed"] is True
        return response.get("value") is True  # the older spelling of the answer

    async def input(self, title: str, placeholder: str | None = None, **opts: Any) -> str | None:
        request = {
            "method": "input",
            "title": title,
            "placeholder": placeholder,
            "timeout": opts.get("timeout"),
        }
        response = await self._dialog(request, opts)
        return response.get("value") if response is not None else None

    async def editor(self, title: str, prefill: str | None = None, **opts: Any) -> str | None:
        request = {"method": "editor", "title": title, "prefill": prefill, "timeout": opts.get("timeout")}
        response = await self._dialog(request, opts)
        return response.get("value") if response is not None else None

    # -- fire and forget -------------------------------------------------------------------------

    def _notice(self, request: dict[str, Any]) -> None:
        self._send({"type": "extension_ui_request", "id": _new_id(), **_without_none(request)})

    def notify(self, message: str, level: str = "info") -> None:
        self._notice({"method": "notify", "message": message, "notifyType": level})

    def set_status(self, key: str, text: str | None = None) -> None:
        self._notice({"method": "setStatus", "statusKey": key, "statusText": text})

    def set_widget(self, key: str, content: Any = None, **opts: Any) -> None:
        if content is None or isinstance(content, (list, tuple)):  # component factories need a terminal
            lines = [str(line) for line in content] if content is not None else None
            self._notice(
                {
                    "method": "setWidget",
                    "widgetKey": key,
                    "widgetLines": lines,
                    "widgetPlacement": opts.get("placement"),
                }
            )

    def set_title(self, title: str) -> None:
        if self.emit_title:
            self._notice({"method": "setTitle", "title": title})

    def set_editor_text(self, text: str) -> None:
        self._notice({"method": "set_editor_text", "text": text})

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)
