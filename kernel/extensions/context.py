"""``ctx``: what event handlers, tools and commands receive from the running session.

The kernel defines the shape; the agent session is the *host* that answers. Where no session
runs (while extensions load, in ``pi plugins``) the context still exists: ``cwd`` and
``model_registry`` answer, session methods raise :class:`ExtensionRuntimeNotInitializedError`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from typing import Any

from piko.extensions.ui import NoOpUI
from piko.extensions.ui import PromptWatchingUI
from piko.lib.records import Record


class ExtensionRuntimeNotInitializedError(RuntimeError):
    """A session action was used before a session exists (for example while an extension loads)."""


_background: set[Any] = set()


def schedule(result: Any) -> Any:
    """Run an awaitable a session method returned without making the caller await it.

    Extensions call session actions (``pi.send_message``, ``ctx.abort``) from synchronous code
    too, as in pi where they are fire-and-forget. The returned task may still be awaited (from a
    handler's thread: a ``concurrent.futures.Future``). Either way the work is one of
    :func:`scheduled_work` until it is done, so print mode answers it before it ends.
    """
    if not hasattr(result, "__await__"):
        return result
    import asyncio

    from piko.lib.off_loop import home_loop

    loop = home_loop()
    if loop is not None:  # a handler running on its thread: the work belongs to the session's loop
        if asyncio.iscoroutine(result):
            return _start_from_thread(loop, result)
        return result
    try:
        task = asyncio.ensure_future(result)
    except RuntimeError:  # no running loop: run it to completion here
        return asyncio.run(result)
    _keep(task)
    return task


def _keep(task: Any) -> None:
    _background.add(task)
    task.add_done_callback(_background.discard)


def _start_from_thread(loop: Any, coroutine: Any) -> Any:
    """Start ``coroutine`` as a task on ``loop`` from another thread, kept in :func:`scheduled_work`
    from the moment it exists: the task is made by a callback queued before the handler's own
    return reaches the loop, so whoever awaited the handler finds the task already there."""
    import concurrent.futures

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def copy_outcome(task: Any) -> None:
        if task.cancelled():  # the future is running by now: it can only carry the cancellation
            future.set_exception(concurrent.futures.CancelledError())
        elif (error := task.exception()) is not None:
            future.set_exception(error)
        else:
            future.set_result(task.result())

    def start() -> None:
        if not future.set_running_or_notify_cancel():
            coroutine.close()  # cancelled from the thread before it started
            return
        task = loop.create_task(coroutine)
        _keep(task)
        task.add_done_callback(copy_outcome)

    loop.call_soon_threadsafe(start)
    return future


_tool_context: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "piko_tool_context", default=None
)


@contextlib.contextmanager
def collecting_additional_context(into: list[str]) -> Iterator[None]:
    """While a tool runs: what it gives ``ctx.add_additional_context`` goes ``into`` the list."""
    token = _tool_context.set(into)
    try:
        yield
    finally:
        _tool_context.reset(token)


class RunningTool(Record):
    """The tool call being run: its ``name``, abort ``signal`` and ``on_update`` (what
    ``ctx.invoke_tool`` and ``ctx.run_ephemeral_turn`` inherit), and how deep delegation went."""

    name: str = ""
    signal: Any = None
    on_update: Any = None
    depth: int = 0


_running_tool: contextvars.ContextVar[RunningTool | None] = contextvars.ContextVar(
    "piko_running_tool", default=None
)

MAX_DELEGATION_DEPTH = 8
"""How many ``ctx.invoke_tool`` calls may nest before one is refused (a tool calling itself)."""


@contextlib.contextmanager
def running_tool(name: str, signal: Any, on_update: Any) -> Iterator[None]:
    """While a tool's ``execute`` runs: who it is, for ``ctx.invoke_tool`` and side turns."""
    outer = _running_tool.get()
    token = _running_tool.set(
        RunningTool(name=name, signal=signal, on_update=on_update, depth=outer.depth if outer else 0)
    )
    try:
        yield
    finally:
        _running_tool.reset(token)


def scheduled_work() -> list[Any]:
    """The session actions extensions started without awaiting them that have not finished."""
    return [task for task in _background if not task.done()]


def _either(first: Any, second: Any) -> Any:
    """A signal that fires when ``first`` or ``second`` (either may be None) fires."""
    if second is None or second is first:
        return first
    from piko.lib.abort import AbortController

    both = AbortController()
    for signal in (first, second):
        if getattr(signal, "aborted", False):
            both.abort()
        elif hasattr(signal, "add_listener"):
            signal.add_listener(both.abort)
    return both.signal


def _no_session(name: str) -> ExtensionRuntimeNotInitializedError:
    return ExtensionRuntimeNotInitializedError(
        f"{name}() is available once the session runs: call it from an event handler, "
        "a command or a tool, not while the extension loads"
    )


class ExtensionContext:
    """The context object (pi's ``ExtensionContext`` and ``ExtensionCommandContext``)."""

    def __init__(self, host: Any = None, *, app: Any = None, ui: Any = None, mode: str = "print") -> None:
        self._host = host
        self._app = app
        self.ui = ui if ui is not None else NoOpUI()
        self.mode = mode

    @property
    def ui(self) -> Any:
        """The mode's UI; its dialogs fire ``ui_prompt_start`` / ``ui_prompt_end``."""
        return self._ui

    @ui.setter
    def ui(self, ui: Any) -> None:
        self._ui = ui if isinstance(ui, PromptWatchingUI) else PromptWatchingUI(ui, self._announce_prompt)

    def _announce_prompt(self, start: bool, kind: str, title: str, cancelled: bool) -> None:
        """Tell ``ui_prompt_start``/``_end`` handlers, without waiting for them (pi: best-effort)."""
        app = self.app
        dispatcher = getattr(app, "dispatcher", None) if app is not None else None
        name = "ui_prompt_start" if start else "ui_prompt_end"
        if dispatcher is None or not dispatcher.has_handlers(name):
            return
        from piko.data.events import UiPromptEndEvent
        from piko.data.events import UiPromptStartEvent

        event = (
            UiPromptStartEvent(kind=kind, method=kind, title=title)
            if start
            else UiPromptEndEvent(kind=kind, method=kind, title=title, cancelled=cancelled)
        )
        schedule(dispatcher.emit(name, event, self))

    # -- plain properties --------------------------------------------------------------------

    @property
    def has_ui(self) -> bool:
        return bool(getattr(self.ui, "has_ui", True))

    def is_project_trusted(self) -> bool:
        """Whether this run trusts the project (pi 1.6's ``ctx.isProjectTrusted()``): saved,
        ``--approve`` and this-session decisions alike."""
        return bool(getattr(self._app, "project_trusted", False))

    @property
    def cwd(self) -> str:
        if self._host is not None:
            return str(self._host.cwd)
        if self._app is not None:
            return str(self._app.cwd)
        return os.getcwd()

    @property
    def app(self) -> Any:
        """The :class:`~piko.app.application.App` (settings, registries, the plugin manager)."""
        return self._app if self._app is not None else getattr(self._host, "app", None)

    @property
    def session_manager(self) -> Any:
        """The session's entries, read-only (``get_branch()``, ``get_entries()``, ``get_session_id()``...)."""
        return self._require("session_manager").read_only_session_manager()

    @property
    def model_registry(self) -> Any:
        app = self.app
        return app.model_registry if app is not None else None

    @property
    def model(self) -> Any:
        return getattr(self._host, "model", None) if self._host is not None else None

    # -- session queries and actions ---------------------------------------------------------

    def _require(self, name: str) -> Any:
        if self._host is None:
            raise _no_session(name)
        return self._host

    def is_idle(self) -> bool:
        return True if self._host is None else bool(self._host.is_idle())

    def abort(self) -> Any:
        """Stop the running turn (returns a task that finishes once the agent is idle)."""
        if self._host is not None:
            return schedule(self._host.abort())
        return None

    def has_pending_messages(self) -> bool:
        return False if self._host is None else bool(self._host.has_pending_messages())

    def shutdown(self) -> None:
        self._require("shutdown").request_shutdown()

    def get_context_usage(self) -> Any:
        return None if self._host is None else self._host.get_context_usage()

    def compact(self, custom_instructions: Any = None, **options: Any) -> Any:
        """Compact the session (a task): focus text, or pi's options (``on_complete``, ``on_error``)."""
        return self._require("compact").compact_from_extension(custom_instructions, **options)

    def get_system_prompt(self) -> str:
        prompt: str = self._require("get_system_prompt").get_system_prompt()
        return prompt

    # -- command context ---------------------------------------------------------------------

    async def wait_for_idle(self) -> None:
        await self._require("wait_for_idle").wait_for_idle()

    async def new_session(self, **options: Any) -> dict[str, Any]:
        return dict(await self._require("new_session").new_session(**options))

    async def fork(self, entry_id: str) -> dict[str, Any]:
        return dict(await self._require("fork").fork(entry_id))

    async def navigate_tree(self, target_id: str, **options: Any) -> dict[str, Any]:
        return dict(await self._require("navigate_tree").navigate_tree(target_id, **options))

    async def switch_session(self, session_path: str) -> dict[str, Any]:
        return dict(await self._require("switch_session").switch_session(session_path))

    async def invoke_tool(
        self, name: Any = None, params: Any = None, *, signal: Any = None, on_update: Any = None
    ) -> Any:
        """Run a tool's original implementation (the first one registered, also when an override
        replaced it) and return its :class:`~piko.data.messages.ToolResult`; no
        ``tool_call``/``tool_result`` events fire. pi's form, from inside a tool that overrides a
        built-in: ``invoke_tool(params, {"signal", "onUpdate"})`` runs the built-in of the same
        name. ``invoke_tool(name, params)`` names the tool. Inside a tool, the call's ``signal``
        and ``on_update`` are passed on unless given; delegation nests at most
        :data:`MAX_DELEGATION_DEPTH` deep."""
        import uuid

        from piko.extensions.extension_shapes import options_of

        app = self.app
        if app is None:
            raise ExtensionRuntimeNotInitializedError("invoke_tool needs the running app")
        running = _running_tool.get()
        if not isinstance(name, str):  # pi's invokeTool(params, options): the same tool
            options = options_of(params)
            name, params = None, name
            signal = signal if signal is not None else options.get("signal")
            on_update = on_update if on_update is not None else options.get("on_update")
            if running is None:
                raise RuntimeError("invoke_tool(params) delegates from inside a tool's execute")
            name = running.name
            definition = app.registries.tools.original(name)
            if definition is None or definition is app.registries.tools.get(name):
                raise RuntimeError(f"tool '{name}' overrides no built-in: there is nothing to delegate to")
        else:
            definition = app.registries.tools.original(name)
            if definition is None:
                raise KeyError(f"no tool named '{name}'")
        depth = running.depth + 1 if running is not None else 1
        if depth > MAX_DELEGATION_DEPTH:
            raise RuntimeError(f"invoke_tool: delegation nested over {MAX_DELEGATION_DEPTH} deep")
        if running is not None:
            signal = signal if signal is not None else running.signal
            on_update = on_update if on_update is not None else running.on_update
        token = _running_tool.set(RunningTool(name=name, signal=signal, on_update=on_update, depth=depth))
        try:
            call_id = f"invoke-{uuid.uuid4().hex[:12]}"
            return await definition.run(call_id, dict(params or {}), signal, on_update, self)
        finally:
            _running_tool.reset(token)

    async def reload(self) -> None:
        await self._require("reload").reload()

    # -- more of the running session -----------------------------------------------------------

    @property
    def agent(self) -> AgentIdentity:
        """The agent this session runs: piko runs no subagents, so always the main one."""
        session_id = None
        if self._host is not None:
            session_id = getattr(self._host, "session_id", None)
        return AgentIdentity(kind="main", id=str(session_id or "main"), name="main", depth=0)

    @property
    def models(self) -> Any:
        """The read-only model query: ``list()``, ``current()``, ``resolve(spec)``, ``family(model)``."""
        return self._require("models").model_query()

    async def run_ephemeral_turn(self, options: Any = None, **kwargs: Any) -> Any:
        """A side turn on the current conversation that is not recorded (pi's ``runEphemeralTurn``):
        ``prompt_text``, ``tools``, ``max_tokens``, ``max_context_bytes``, ``on_text_delta``,
        ``signal``, ``history``, ``dedupe_reply`` (camelCase accepted); gives ``.reply_text``."""
        from piko.lib.text import snake

        given = {
            snake(str(k)): v for k, v in {**(options if isinstance(options, dict) else {}), **kwargs}.items()
        }
        if isinstance(options, str):
            given.setdefault("prompt_text", options)
        given.pop("conversation_key", None)  # one provider lineage: every side turn here is fresh
        running = _running_tool.get()
        if running is not None and running.signal is not None:  # from a tool: its abort ends it too
            given["signal"] = _either(running.signal, given.get("signal"))
        return await self._require("run_ephemeral_turn").run_ephemeral_turn(**given)

    def add_additional_context(self, text: str) -> bool:
        """From a running tool: trusted context for the model's next request, after the tool
        results (kept even when the tool then fails). Outside a tool it does nothing (``False``)."""
        into = _tool_context.get()
        if into is None or not isinstance(text, str) or not text.strip():
            return False
        if text.strip() not in {item.strip() for item in into}:
            into.append(text)
        return True

    def get_async_job_snapshot(self) -> Any:
        """piko has no background jobs: ``None``."""
        return None

    local_protocol_options: Any = None
    memory: Any = None

    def resolve_plan_review(self, review_id: str, choice: str, input: Any = None) -> bool:
        """piko has no plan review: there is never a review to answer (``False``)."""
        return False

    def get_pending_plan_review(self) -> Any:
        """piko has no plan review: there is never one pending (``None``)."""
        return None

    async def open_plan_review(self) -> bool:
        """piko has no plan review: nothing opens (``False``)."""
        return False

    # -- managed timers ------------------------------------------------------------------------

    def _timers(self) -> Any:
        app = self.app
        if app is None:
            raise _no_session("set_timeout")
        return app.extension_timers

    def set_timeout(self, fn: Any, ms: float = 0, *args: Any) -> Any:
        """Call ``fn(*args)`` once after ``ms`` ms, isolated like a handler; cleared at shutdown."""
        return self._timers().set_timeout(fn, ms, *args)

    def set_interval(self, fn: Any, ms: float = 0, *args: Any) -> Any:
        """Call ``fn(*args)`` every ``ms`` ms, isolated like a handler; cleared at shutdown."""
        return self._timers().set_interval(fn, ms, *args)

    def clear_timer(self, timer: Any) -> None:
        """Cancel a timer of :meth:`set_timeout` or :meth:`set_interval`."""
        self._timers().clear(timer)


class AgentIdentity(Record):
    """``ctx.agent``: ``kind`` ``"main"`` or ``"sub"``, ``id``, ``name``, ``depth``, ``parent_id``."""

    kind: str = "main"
    id: str = "main"
    name: str = "main"
    depth: int = 0
    parent_id: str | None = None
