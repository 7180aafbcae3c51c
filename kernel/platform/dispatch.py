"""The one helper that fires events: walks hook implementations and applies each event's semantics.

pluggy calls implementations last-registered-first and cannot await coroutines, so events are
not fired through ``pm.hook``. :class:`Dispatcher` asks pluggy for the implementations of
``piko_<event>`` (cached until a plugin is registered or unregistered), orders them as they
were registered (``tryfirst`` first, ``trylast`` last), calls each with ``(event, ctx)``,
awaits what returns an awaitable within the handler budget, and combines results by the
event's :class:`~piko.data.events.Semantics`. A handler that raises or overruns is reported as an
``extension_error`` event and the walk goes on; for ``tool_call`` the call is then blocked.

A plain-function handler runs on a thread of its own (:mod:`piko.platform.off_loop`), so the budget and an
abort apply to it as to a coroutine and a handler that blocks cannot freeze the event loop.
Handlers of :data:`STREAM_RATE_EVENTS` (one call per streamed delta) are the exception: a
thread hop would cost more than they do, and the message they see is being built on the loop,
so they run on the loop, and one that holds it past :data:`INLINE_LIMIT_S` (or its budget, if
shorter) is interrupted, reported and gets no more of those events. When an emit is given the
run's abort ``signal``, an abort cancels the handler being waited for.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import attrs

from piko.data.events import SEMANTICS, ExtensionErrorEvent, Semantics
from piko.data.messages import AssistantMessage, TextContent
from piko.lib.redaction import redact
from piko.platform.off_loop import InlineGuard, LoopHeld, LoopProxy, is_coroutine_callable, run_in_thread

__all__ = ["Dispatcher", "Handler", "result_field"]

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_snake_cache: dict[str, str] = {}


def _snake(key: str) -> str:
    cached = _snake_cache.get(key)
    if cached is None:
        cached = _snake_cache[key] = _CAMEL.sub("_", key).lower()
    return cached


def normalize_result(result: Any) -> dict[str, Any] | None:
    """A handler's return value as a dict with snake_case keys (``None`` stays ``None``)."""
    if result is None:
        return None
    if isinstance(result, dict):
        return {_snake(k): v for k, v in result.items()}
    if attrs.has(type(result)):
        return {f.name: getattr(result, f.name) for f in attrs.fields(type(result))}
    if hasattr(result, "__dict__"):
        return {_snake(k): v for k, v in vars(result).items() if not k.startswith("_")}
    return {"value": result}


def result_field(result: Any, name: str, default: Any = None) -> Any:
    """Read ``name`` (snake_case) from a handler result, accepting camelCase keys too."""
    norm = normalize_result(result)
    if not norm:
        return default
    return norm.get(name, default)


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
    """Fires ``piko_<event>`` hooks with the semantics of :data:`piko.data.events.SEMANTICS`."""

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
        # keyed by id(): plugins may be unhashable (pluggy allows it)
        order = {id(plugin): i for i, (_n, plugin) in enumerate(self.pm.list_name_plugin())}
        impls = [i for i in caller.get_hookimpls() if not (i.hookwrapper or i.wrapper)]
        impls.sort(key=lambda i: (0 if i.tryfirst else 2 if i.trylast else 1, order.get(id(i.plugin), 0)))
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
        """Fire event ``name`` and return the combined result (see :data:`SEMANTICS`).

        ``signal``: the run's abort signal; when it fires, the handler being waited for is
        cancelled (a thread's result is dropped) and counts as having returned nothing
        (``tool_call``: the call is blocked).
        """
        handlers = self.handlers(name)
        if handlers and self._silenced:
            handlers = [h for h in handlers if id(h.call) not in self._silenced]
        if not handlers:
            return _EMPTY_RESULTS.get(name, _none)(event)
        semantics = SEMANTICS.get(name, Semantics.NOTIFY)
        if semantics is Semantics.NOTIFY:
            if name in STREAM_RATE_EVENTS and self.tracer is None:
                await self._notify_inline(handlers, name, event, ctx, signal)
                return None
            for handler in handlers:
                await self._call(handler, name, event, ctx, signal=signal)
            return None
        reducer = _REDUCERS.get(name) or _GENERIC[semantics]
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


STREAM_RATE_EVENTS = frozenset({"message_update", "tool_execution_update"})
"""Events fired once per streamed delta: their plain-function handlers run on the loop."""

INLINE_LIMIT_S = 1.0
"""The longest a plain-function handler of a stream-rate event may hold the event loop."""


def _overrun_message(budget: float) -> str:
    return f"handler did not finish within its {budget:g} s budget"


async def _bounded(awaitable: Any, timeout: float, budget: float, signal: Any) -> Any:
    """Await ``awaitable`` for at most ``timeout`` s (:class:`HandlerTimeout` naming ``budget``);
    a firing ``signal`` (not yet fired when called) cancels it with :class:`HandlerAborted`."""
    listening = signal is not None and not signal.aborted
    cut = False
    scope = asyncio.timeout(timeout)
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


class HandlerAborted(Exception):
    """The wait for a handler was cut short by an abort."""


class HandlerTimeout(Exception):
    """A handler overran its budget."""


def _none(event: Any) -> Any:
    return None


# Results of events with no handler at all (what callers get back when nothing listens).
_EMPTY_RESULTS: dict[str, Callable[[Any], Any]] = {
    "input": lambda e: {"action": "continue", "text": e.text, "images": e.images},
    "context": lambda e: e.messages,
    "before_provider_request": lambda e: e.payload,
    "message_end": lambda e: e.message,
    "assistant_message": lambda e: e.message,
    "resources_discover": lambda e: {"skill_paths": [], "prompt_paths": [], "theme_paths": []},
    "file_write_fallback": lambda e: False,
    "file_delete_fallback": lambda e: False,
}


# ---------------------------------------------------------------------------
# Reducers: one per semantics, and special ones where an event has its own rules
# ---------------------------------------------------------------------------


async def _reduce_cancel(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    result: dict[str, Any] | None = None
    for handler in handlers:
        norm = normalize_result(await d._call(handler, name, event, ctx, signal=signal))
        if norm:
            result = norm
            if norm.get("cancel"):
                return norm
    return result


async def _reduce_first(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    for handler in handlers:
        result = await d._call(handler, name, event, ctx, signal=signal)
        if result is not None and result is not False:
            return result
    return None


async def _reduce_chain_generic(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    result = None
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        if value is not None:
            result = value
    return result


async def _reduce_tool_call(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    result: dict[str, Any] | None = None
    failed, cut = object(), object()
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, fail=failed, aborted=cut, signal=signal)
        if value is failed:
            return {"block": True, "reason": f"Blocked: the tool_call handler of {handler.source} failed"}
        if value is cut:
            return {"block": True, "reason": ABORTED_REASON}
        problem = _shape_problem(value, _TOOL_CALL_FIELDS)
        if problem is not None:  # fail closed, as for a raise: a guard that cannot be read guards nothing
            await d.report(handler, name, TypeError(f"tool_call handler returned {problem}"))
            return {
                "block": True,
                "reason": f"Blocked: the tool_call handler of {handler.source} returned {problem}",
            }
        norm = normalize_result(value)
        if not norm:
            continue
        revised = norm.get("input")
        if isinstance(revised, dict):
            event.input = revised
        result = norm
        if norm.get("block"):
            return norm
    return result


ABORTED_REASON = "Operation aborted"

# What a handler result may hold: field -> the types its value may have (None always may).
_TOOL_CALL_FIELDS: dict[str, tuple[type, ...]] = {"block": (bool,), "reason": (str,), "input": (dict,)}
_BEFORE_AGENT_START_FIELDS: dict[str, tuple[type, ...]] = {
    "message": (dict, object),
    "messages": (list,),
    "system_prompt": (str,),
}
_SCALARS = (str, bytes, int, float, bool, list, tuple, set)


def _shape_problem(value: Any, fields: dict[str, tuple[type, ...]]) -> str | None:
    """What is wrong with a handler's result (``"a str, not ..."``), or ``None`` if it fits ``fields``."""
    wanted = "None or {" + ", ".join(fields) + "}"
    if value is None:
        return None
    if isinstance(value, _SCALARS):
        return f"a {type(value).__name__} ({_short(value)}), not {wanted}"
    norm = normalize_result(value) or {}
    unknown = sorted(set(norm) - set(fields))
    if unknown:
        return f"unknown fields {', '.join(unknown)}, not {wanted}"
    for key, types in fields.items():
        field = norm.get(key)
        if field is None:
            continue
        if not isinstance(field, types) or (object in types and isinstance(field, _SCALARS)):
            return f"{key} as a {type(field).__name__}, not {wanted}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


async def _reduce_tool_result(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    patch: dict[str, Any] = {}
    for handler in handlers:
        norm = normalize_result(await d._call(handler, name, event, ctx, signal=signal))
        if not norm:
            continue
        for key in ("content", "details", "is_error"):
            if norm.get(key) is not None:
                value = norm[key]
                if key == "content":
                    from piko.data.wire import blocks_from_wire

                    value = blocks_from_wire(value) if isinstance(value, list) else value
                setattr(event, key, value)
                patch[key] = value
    return patch or None


async def _reduce_input(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    original = (event.text, event.images)
    for handler in handlers:
        norm = normalize_result(await d._call(handler, name, event, ctx, signal=signal))
        if not norm:
            continue
        action = norm.get("action")
        if action == "handled" or norm.get("handled") is True:
            return {"action": "handled", "text": event.text, "images": event.images}
        if action == "transform" or (action is None and "text" in norm):
            if norm.get("text") is not None:
                event.text = str(norm["text"]).strip()
            if norm.get("images") is not None:
                event.images = norm["images"]
    changed = (event.text, event.images) != original
    return {"action": "transform" if changed else "continue", "text": event.text, "images": event.images}


async def _reduce_before_agent_start(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    messages: list[Any] = []
    modified = False
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        problem = _shape_problem(value, _BEFORE_AGENT_START_FIELDS) or _messages_problem(value)
        if problem is not None:
            await d.report(
                handler, name, TypeError(f"before_agent_start handler returned {problem}; ignored")
            )
            continue
        norm = normalize_result(value)
        if not norm:
            continue
        if norm.get("message") is not None:
            messages.append(norm["message"])
        for extra in norm.get("messages") or []:
            messages.append(extra)
        if norm.get("system_prompt") is not None:
            event.system_prompt = norm["system_prompt"]
            modified = True
    if not messages and not modified:
        return None
    return {"system_prompt": event.system_prompt if modified else None, "messages": messages}


def _messages_problem(value: Any) -> str | None:
    extra = result_field(value, "messages") if value is not None else None
    for item in extra or []:
        if isinstance(item, _SCALARS):
            return f"messages holding a {type(item).__name__}, not messages"
    return None


async def _reduce_context(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    from piko.data.wire import message_from_wire

    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        replacement = value if isinstance(value, list) else result_field(value, "messages")
        if isinstance(replacement, list):
            event.messages = [message_from_wire(m) if isinstance(m, dict) else m for m in replacement]
    return event.messages


async def _reduce_payload(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        if value is not None:
            event.payload = value
    return event.payload


async def _reduce_message_end(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    from piko.data.messages import message_role
    from piko.data.wire import message_from_wire

    for handler in handlers:
        replacement = result_field(await d._call(handler, name, event, ctx, signal=signal), "message")
        if replacement is None:
            continue
        if isinstance(replacement, dict):
            replacement = message_from_wire(replacement)
        if message_role(replacement) != message_role(event.message):
            await d.report(
                handler, name, ValueError("message_end handlers must return a message with the same role")
            )
            continue
        event.message = replacement
    return event.message


async def _reduce_assistant_message(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    from piko.data.wire import block_from_wire

    for handler in handlers:
        content = result_field(await d._call(handler, name, event, ctx, signal=signal), "content")
        if content is None:
            continue
        current: AssistantMessage = event.message
        try:
            new_blocks = _validated_text_rewrite(current.content, [block_from_wire(b) for b in content])
        except ValueError as exc:
            await d.report(handler, name, exc)
            continue
        event.message = attrs.evolve(current, content=new_blocks)
    return event.message


def _validated_text_rewrite(old: list[Any], new: list[Any]) -> list[Any]:
    """Accept only a rewrite that changes the text of text blocks; edited text loses its signature."""
    if len(old) != len(new):
        raise ValueError("assistant_message: the replacement must keep the number of content blocks")
    result: list[Any] = []
    for before, after in zip(old, new, strict=True):
        if type(before) is not type(after):
            raise ValueError("assistant_message: the replacement must keep block types and order")
        if not isinstance(before, TextContent):
            if attrs.has(type(before)) and attrs.asdict(before) != attrs.asdict(after):
                raise ValueError("assistant_message: only text blocks may change")
            result.append(before)
            continue
        if after.text == before.text:
            result.append(before)
        else:
            result.append(attrs.evolve(before, text=after.text, text_signature=None))
    return result


async def _reduce_resources(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    collected: dict[str, list[tuple[str, str]]] = {"skill_paths": [], "prompt_paths": [], "theme_paths": []}
    for handler in handlers:
        norm = normalize_result(await d._call(handler, name, event, ctx, signal=signal))
        if not norm:
            continue
        for key, paths in collected.items():
            for path in norm.get(key) or []:
                paths.append((str(path), handler.source))
    return collected


async def _reduce_fallback(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    for handler in handlers:
        if await d._call(handler, name, event, ctx, signal=signal) is True:
            return True
    return False


_GENERIC: dict[Semantics, Any] = {
    Semantics.CANCEL: _reduce_cancel,
    Semantics.FIRST: _reduce_first,
    Semantics.CHAIN: _reduce_chain_generic,
    Semantics.BLOCK: _reduce_tool_call,
    Semantics.COLLECT: _reduce_resources,
}

_REDUCERS: dict[str, Any] = {
    "tool_call": _reduce_tool_call,
    "tool_result": _reduce_tool_result,
    "input": _reduce_input,
    "before_agent_start": _reduce_before_agent_start,
    "context": _reduce_context,
    "before_provider_request": _reduce_payload,
    "message_end": _reduce_message_end,
    "assistant_message": _reduce_assistant_message,
    "resources_discover": _reduce_resources,
    "file_write_fallback": _reduce_fallback,
    "file_delete_fallback": _reduce_fallback,
}
