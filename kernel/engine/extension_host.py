"""The running session as extensions' ``ctx`` reaches it: the session's typed answers in the shapes extensions receive.

:class:`piko.extensions.context.ExtensionContext` calls its *host* for session queries and
actions. Extensions have always received plain dicts with pi's camelCase keys from
``ctx.get_context_usage()``, ``ctx.compact()`` and the session moves (``ctx.new_session()``,
``ctx.switch_session()``, ``ctx.fork()``, ``ctx.navigate_tree()``); the session now answers with
records, and this host converts them so that what extensions see stays the same. It also
answers what only ``ctx`` asks (idle, pending messages, shutdown, waiting, the read-only
session manager); everything else is the session's own attribute.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from typing import Any

from piko.data.wire import record_to_wire

if TYPE_CHECKING:
    from piko.engine.session import AgentSession


class ExtensionHost:
    """The session behind one ``ctx``; attributes not defined here are the session's."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        if name == "_session":  # not set yet (a copy being made): no session to ask
            raise AttributeError(name)
        return getattr(self._session, name)

    def is_idle(self) -> bool:
        return not self._session.is_streaming and not self._session.compaction.running

    def has_pending_messages(self) -> bool:
        return self._session.queues.has_pending()

    def request_shutdown(self) -> None:
        self._session.shutdown_requested = True

    async def wait_for_idle(self) -> None:
        await self._session.agent.wait_for_idle()

    def model_query(self) -> Any:
        from piko.engine.model_query import ModelQuery

        return ModelQuery(self._session)

    async def run_ephemeral_turn(self, prompt_text: str = "", **options: Any) -> Any:
        from piko.engine.side_turn import run_side_turn

        return await run_side_turn(self._session, prompt_text, **options)

    def read_only_session_manager(self) -> Any:
        return self._session.session_manager.read_only_session_manager()

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{"tokens", "contextWindow", "percent"}``, or None without a model or known window."""
        usage = self._session.get_context_usage()
        return None if usage is None else record_to_wire(usage)

    def compact_from_extension(self, custom_instructions: Any = None, **options: Any) -> Any:
        """A task compacting the session, resolving to ``{"summary", "firstKeptEntryId", "tokensBefore", "details"}``.

        ``custom_instructions`` is focus text or pi's options object (``customInstructions``,
        ``onComplete(result)``, ``onError(error)``); the callbacks may be given as keywords too.
        """
        from piko.extensions.context import schedule
        from piko.lib.text import snake

        if isinstance(custom_instructions, dict):
            options = {**{snake(str(k)): v for k, v in custom_instructions.items()}, **options}
            custom_instructions = options.get("custom_instructions")
        on_complete, on_error = options.get("on_complete"), options.get("on_error")
        task = asyncio.ensure_future(self._compact(custom_instructions))
        if callable(on_complete) or callable(on_error):

            def done(finished: asyncio.Future[Any]) -> None:
                if finished.cancelled():
                    return
                error = finished.exception()
                callback, value = (on_error, error) if error is not None else (on_complete, finished.result())
                if callable(callback):
                    schedule(callback(value))  # a coroutine callback runs in the background

            task.add_done_callback(done)
        return task

    async def _compact(self, custom_instructions: str | None) -> dict[str, Any]:
        return record_to_wire(await self._session.compact(custom_instructions))

    async def new_session(self, **options: Any) -> dict[str, Any]:
        """``{"cancelled"}``."""
        result = await self._session.new_session(**options)
        return {"cancelled": result.cancelled}

    async def switch_session(self, session_path: str) -> dict[str, Any]:
        """``{"cancelled"}``, with ``"warnings"`` when the file reported damage."""
        result = await self._session.switch_session(session_path)
        if result.warnings:
            return {"cancelled": result.cancelled, "warnings": list(result.warnings)}
        return {"cancelled": result.cancelled}

    async def fork(self, entry_id: str, position: str = "before") -> dict[str, Any]:
        """``{"cancelled": True}``, or ``{"cancelled": False, "text": <the user message's text>}``."""
        result = await self._session.fork(entry_id, position)
        return {"cancelled": True} if result.cancelled else {"cancelled": False, "text": result.text}

    async def navigate_tree(self, target_id: str | None, **options: Any) -> dict[str, Any]:
        """``{"cancelled", "editorText"}`` (``"aborted"`` when a summary was cancelled, ``"warnings"``
        about damage on the branch reached)."""
        result = await self._session.navigate_tree(target_id, **options)
        if result.aborted:
            return {"cancelled": True, "aborted": True, "editorText": None}
        if result.cancelled:
            return {"cancelled": True, "editorText": None}
        data: dict[str, Any] = {"cancelled": False, "editorText": result.editor_text}
        if result.warnings:
            data["warnings"] = list(result.warnings)
        return data
