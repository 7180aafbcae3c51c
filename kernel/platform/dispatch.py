"""The one helper that fires events: walks hook implementations and applies each event's semantics.

pluggy calls implementations last-registered-first and cannot await coroutines, so events are
not fired through ``pm.hook``. :class:`Dispatcher` asks pluggy for the implementations of
``piko_<event>`` (cached until a plugin is registered or unregistered), orders them as they
were registered (``tryfirst`` first, ``trylast`` last), calls each with ``(event, ctx)``,
awaits what returns an awaitable within the handler budget, and combines results by the
event's :class:`~piko.data.events.Semantics`. A handler that raises or overruns is reported as an
``extension_error`` event and the walk goes on; for ``tool_call`` the call is then blocked.

A plain-function handler runs on a thread of its own (:mod:`piko.lib.off_loop`), so the budget and an
abort apply to it as to a coroutine and a handler that blocks cannot freeze the event loop.
Handlers of :data:`STREAM_RATE_EVENTS` (one call per streamed delta) are the exception: a
thread hop would cost more than they do, and the message they see is being built on the loop,
so they run on the loop, and one that holds it past :data:`INLINE_LIMIT_S` (or its budget, if
shorter) is interrupted, reported and gets no more of those events. When an emit is given the
run's abort ``signal``, an abort cancels the handler being waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
import time
import traceback
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

from piko.data.events import ExtensionErrorEvent
from piko.lib.off_loop import InlineGuard
from piko.lib.off_loop import LoopHeld
from piko.lib.off_loop import LoopProxy
from piko.lib.off_loop import is_coroutine_callable
from piko.lib.off_loop import run_in_thread
from piko.lib.redaction import redact
from piko.platform.ordering import call_order
from piko.platform.reducers import GENERIC
from piko.platform.reducers import normalize_result
from piko.platform.reducers import result_field
from piko.platform.semantics import EventSpec
from piko.platform.semantics import Semantics
from piko.platform.semantics import declared

__all__ = ["Dispatcher", "Handler", "normalize_result", "result_field"]


class Handler:
    """One callable that handles an event, with the plugin it belongs to.

    ``is_async``: a coroutine function (awaited on the loop); anything else runs on a thread.
    """

    __slots__ = ("call", "is_async", "plugin", "source")

    def __init__(self, plugin: str, source: str, call: Callable[[Any, Any], Any]) -> None:
        self.plugin = plugin
        self.source = source
        self.call = call
        self.is_async = is_coroutine_callable(call)

    def __repr__(self) -> str:
        return f"Handler({self.plugin!r})"


def _adapter(
    fn: Callable[..., Any], argnames: tuple[str, ...], spec_args: tuple[str, ...]
) -> Callable[[Any, Any], Any]:
    """A ``call(first, ctx)`` for an implementation taking a subset of the spec's arguments."""
    if argnames == spec_args:
        return fn
    first = spec_args[0] if spec_args else "event"
    wants_first = first in argnames
    wants_ctx = "ctx" in argnames
    if wants_first and wants_ctx:
        if argnames.index(first) < argnames.index("ctx"):
            return fn
        return wrapping(fn, lambda e, c: fn(c, e))
    if wants_first:
        return wrapping(fn, lambda e, c: fn(e))
    if wants_ctx:
        return wrapping(fn, lambda e, c: fn(c))
    return wrapping(fn, lambda e, c: fn())


def wrapping(fn: Callable[..., Any], adapter: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``adapter`` marked as calling ``fn`` (so whether it is a coroutine function can be told)."""
    adapter.__wrapped__ = fn  # type: ignore[attr-defined]
    return adapter


class Dispatcher:
    """Fires ``piko_<event>`` hooks with the semantics declared beside their hook specs
    (:data:`piko.platform.semantics.EVENTS`)."""

    def __init__(
        self,
        pm: Any,
        *,
        budget_ms: Callable[[str], float] | None = None,
        sources: Callable[[str], str] | None = None,
        tracer: Any = None,
    ) -> None:
        self.pm = pm
        self._budget_ms = budget_ms or (lambda name: 30000.0)
        self._sources = sources or (lambda plugin: plugin)
        self.tracer = tracer
        self._cache: dict[str, tuple[int, list[Handler]]] = {}
        self._specs = declared()
        self.error_listeners: list[Callable[[ExtensionErrorEvent], Any]] = []
        self._inline = InlineGuard()
        self._silenced: set[int] = set()  # stream-rate handlers (id of their call) that held the loop

    # -- handler lists -------------------------------------------------------------------------

    def handlers(self, name: str) -> list[Handler]:
        """The handlers of event ``name`` in call order (cached per plugin-set generation)."""
        cached = self._cache.get(name)
        generation = self.pm.generation
        if cached is not None and cached[0] == generation:
            return cached[1]
        handlers = self._collect(name)
        self._cache[name] = (generation, handlers)
        return handlers

    def has_handlers(self, name: str) -> bool:
        """Whether anything listens to ``name`` (lets callers skip building costly events)."""
        return bool(self.handlers(name))

    def _collect(self, name: str) -> list[Handler]:
        caller = getattr(self.pm.hook, f"piko_{name}", None)
        if caller is None:
            return []
        spec_args = tuple(caller.spec.argnames) if caller.spec is not None else ("event", "ctx")
        impls = call_order(self.pm, (i for i in caller.get_hookimpls() if not (i.hookwrapper or i.wrapper)))
        handlers: list[Handler] = []
        for impl in impls:
            source = self._sources(impl.plugin_name)
            many = getattr(impl.function, "_piko_handlers", None)
            if many is not None:
                handlers.extend(Handler(impl.plugin_name, source, h) for h in many)
            else:
                handlers.append(
                    Handler(
                        impl.plugin_name, source, _adapter(impl.function, tuple(impl.argnames), spec_args)
                    )
                )
        return handlers

    # -- firing --------------------------------------------------------------------------------

    async def emit(self, name: str, event: Any, ctx: Any = None, *, signal: Any = None) -> Any:
        """Fire event ``name`` and return the combined result (its declared semantics).

        ``signal``: the run's abort signal; when it fires, the handler being waited for is
        cancelled (a thread's result is dropped) and counts as having returned nothing
        (``tool_call``: the call is blocked).
        """
        handlers = self.handlers(name)
        if handlers and self._silenced:
            handlers = [h for h in handlers if id(h.call) not in self._silenced]
        spec = self._specs.get(name) or _UNDECLARED
        if not handlers:
            return spec.empty_result(event)
        semantics = spec.semantics
        if semantics is Semantics.NOTIFY:
            if name in STREAM_RATE_EVENTS and self.tracer is None:
                await self._notify_inline(handlers, name, event, ctx, signal)
                return None
            if name in CONCURRENT_EVENTS:  # each within its own budget, all at once
                await asyncio.gather(*(self._call(h, name, event, ctx, signal=signal) for h in handlers))
                return None
            for handler in handlers:
                await self._call(handler, name, event, ctx, signal=signal)
            return None
        reducer = spec.reducer or GENERIC[semantics]
        return await reducer(self, handlers, name, event, ctx, signal)

    async def _call(
        self,
        handler: Handler,
        name: str,
        event: Any,
        ctx: Any,
        *,
        fail: Any = None,
        aborted: Any = None,
        signal: Any = None,
    ) -> Any:
        """Run one handler; on error or overrun report it and return ``fail``; on abort ``aborted``."""
        tracer = self.tracer
        started = time.perf_counter() if tracer else 0.0
        try:
            result = await self._run(handler, name, event, ctx, signal)
        except HandlerAborted:
            if tracer:
                tracer.event(name, handler.plugin, "cancelled by an abort", started)
            return aborted
        except (Exception, HandlerTimeout) as exc:
            if tracer:
                tracer.event(name, handler.plugin, f"raised {type(exc).__name__}: {exc}", started)
            await self.report(handler, name, exc)
            return fail
        if tracer:
            tracer.event(name, handler.plugin, result, started)
        return result

    async def _notify_inline(
        self, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any
    ) -> None:
        """A stream-rate notification: plain functions called on the loop under the guard, with
        no coroutine per handler (this runs once per streamed delta)."""
        limit = min(self._budget_ms(name) / 1000.0, INLINE_LIMIT_S)
        run = self._inline.run
        for handler in handlers:
            if handler.is_async:
                await self._call(handler, name, event, ctx, signal=signal)
                continue
            try:
                result = run(limit, handler.call, event, ctx)
            except LoopHeld:
                await self.report(handler, name, self._silence(handler, name, limit))
                continue
            except Exception as exc:
                await self.report(handler, name, exc)
                continue
            if hasattr(result, "__await__"):  # a plain function that returned a coroutine
                budget = self._budget_ms(name) / 1000.0
                try:
                    await _bounded(result, budget, budget, signal)
                except HandlerAborted:
                    pass
                except Exception as exc:
                    await self.report(handler, name, exc)

    def _silence(self, handler: Handler, name: str, limit: float) -> HandlerTimeout:
        """Stop giving ``name`` events to a handler that held the loop; the error to report."""
        self._silenced.add(id(handler.call))
        return HandlerTimeout(
            f"handler held the event loop for more than {limit:g} s and was stopped; "
            f"it gets no more {name} events"
        )

    async def _run(self, handler: Handler, name: str, event: Any, ctx: Any, signal: Any) -> Any:
        """The handler's result: a coroutine awaited here, a plain function on a thread, both bounded."""
        budget = self._budget_ms(name) / 1000.0
        if handler.is_async:
            result = handler.call(event, ctx)
            return await _bounded(result, budget, budget, signal) if hasattr(result, "__await__") else result
        deadline = time.monotonic() + budget
        if name in STREAM_RATE_EVENTS:
            limit = min(budget, INLINE_LIMIT_S)
            try:
                result = self._inline.run(limit, handler.call, event, ctx)
            except LoopHeld:
                raise self._silence(handler, name, limit) from None
        else:
            thread_ctx = LoopProxy(ctx) if ctx is not None else None
            result = await _bounded(run_in_thread(handler.call, event, thread_ctx), budget, budget, signal)
        if hasattr(result, "__await__"):  # a plain function that returned a coroutine
            result = await _bounded(result, max(0.0, deadline - time.monotonic()), budget, signal)
        return result

    async def report(self, handler: Handler, name: str, exc: BaseException) -> None:
        """Tell listeners and ``extension_error`` handlers that a handler failed."""
        message = redact(str(exc) or type(exc).__name__)
        stack = (
            redact("".join(traceback.format_exception(exc))) if not isinstance(exc, HandlerTimeout) else None
        )
        error = ExtensionErrorEvent(extension_path=handler.source, event=name, error=message, stack=stack)
        for listener in list(self.error_listeners):
            try:
                listener(error)
            except Exception as listener_exc:  # a broken listener must not hide the error
                print(f"piko: error listener failed: {listener_exc}", file=sys.stderr)
        if name == "extension_error":
            print(f"piko: extension_error handler of {handler.source} failed: {message}", file=sys.stderr)
            return
        for other in self.handlers("extension_error"):
            try:
                await self._run(other, "extension_error", error, None, None)
            except (Exception, HandlerTimeout) as inner:
                print(f"piko: extension_error handler of {other.source} failed: {inner}", file=sys.stderr)


CONCURRENT_EVENTS = frozenset({"session_shutdown"})
"""Events whose handlers run concurrently: shutdown waits for the slowest, not for their sum."""

STREAM_RATE_EVENTS = frozenset({"message_update", "tool_execution_update"})
"""Events fired once per streamed delta: their plain-function handlers run on the loop."""

INLINE_LIMIT_S = 1.0
"""The longest a plain-function handler of a stream-rate event may hold the event loop."""


def _overrun_message(budget: float) -> str:
    return f"handler did not finish within its {budget:g} s budget"


class _BudgetClock:
    """The running handler's budget (an ``asyncio.timeout`` scope) and how many waits on the user
    hold it; while one does, the budget does not run."""

    __slots__ = ("held", "remaining", "scope")

    def __init__(self, scope: Any) -> None:
        self.scope = scope
        self.held = 0
        self.remaining: float | None = None


_clock: contextvars.ContextVar[_BudgetClock | None] = contextvars.ContextVar(
    "piko_budget_clock", default=None
)


@contextlib.contextmanager
def paused_budget() -> Iterator[None]:
    """While the ``with`` block runs (a dialog waiting on the user), the budget of the handler that
    opened it stands still: pi's rule that a budget counts handler time, not dialog time.
    Outside a handler it does nothing."""
    clock = _clock.get()
    if clock is None:
        yield
        return
    loop = asyncio.get_running_loop()
    clock.held += 1
    if clock.held == 1:
        when = clock.scope.when()
        clock.remaining = None if when is None else max(0.0, when - loop.time())
        clock.scope.reschedule(None)
    try:
        yield
    finally:
        clock.held -= 1
        if clock.held == 0 and clock.remaining is not None and not clock.scope.expired():
            clock.scope.reschedule(loop.time() + clock.remaining)


async def _bounded(awaitable: Any, timeout: float, budget: float, signal: Any) -> Any:
    """Await ``awaitable`` for at most ``timeout`` s (:class:`HandlerTimeout` naming ``budget``);
    a firing ``signal`` (not yet fired when called) cancels it with :class:`HandlerAborted`.
    Time spent in :func:`paused_budget` (dialogs) does not count."""
    listening = signal is not None and not signal.aborted
    cut = False
    scope = asyncio.timeout(timeout)
    token = _clock.set(_BudgetClock(scope))
    try:
        async with scope:
            if not listening:
                return await awaitable
            loop = asyncio.get_running_loop()

            def on_abort() -> None:
                nonlocal cut
                cut = True
                scope.reschedule(loop.time())

            remove = signal.add_listener(on_abort)
            try:
                return await awaitable
            finally:
                remove()
    except TimeoutError:
        if not scope.expired():
            raise  # the handler's own TimeoutError
        if cut:
            raise HandlerAborted() from None
        raise HandlerTimeout(_overrun_message(budget)) from None
    finally:
        _clock.reset(token)


class HandlerAborted(Exception):
    """The wait for a handler was cut short by an abort."""


class HandlerTimeout(Exception):
    """A handler overran its budget."""


_UNDECLARED = EventSpec(name="", semantics=Semantics.NOTIFY)
"""What an event nobody declared is treated as: notify, nothing when nobody listens."""
