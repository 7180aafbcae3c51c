"""The loop every provider API runs a request through: :class:`AbortGuard` (an abort stops the
stream at once, with no per-chunk cost) and :func:`run_stream`, which turns a request and a
decoder into stream events ending in exactly one ``done`` or ``error`` (:func:`stream_message`
runs it for a request built from the model and context; :func:`announced` is how a decoder hands
on each piece's events)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.lib.records import replace
from piko.plugins.providers.http_client import SDK_RETRIES
from piko.plugins.providers.http_client import RequestSpec
from piko.plugins.providers.http_client import RetryRules
from piko.plugins.providers.http_client import send_with_retries
from piko.plugins.providers.plain_http import transport_errors
from piko.plugins.providers.provider_errors import ABORTED_BEFORE_REQUEST
from piko.plugins.providers.provider_errors import ABORTED_MESSAGE
from piko.plugins.providers.provider_errors import ProviderError
from piko.plugins.providers.provider_errors import network_error_message

if TYPE_CHECKING:
    from piko.lib.abort import AbortSignal
    from piko.plugins.providers.builder import MessageBuilder
    from piko.plugins.providers.http_client import StreamedResponse


class AbortGuard:
    """Turns an abort into a cancellation of the awaiting stream, with no per-chunk cost.

    While *armed* (the stream awaits the network) an abort cancels the task running the stream;
    :meth:`consume` then tells that cancellation apart from one of somebody else. While disarmed
    (the consumer holds an event) an abort only marks the signal, checked before the next read.
    """

    __slots__ = ("armed", "fired", "loop", "remove", "signal", "task", "thread")

    def __init__(self, signal: AbortSignal | None) -> None:
        self.signal = signal
        self.armed = False
        self.fired = False
        self.task: asyncio.Task[Any] | None = None
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.remove = signal.add_listener(self._on_abort) if signal is not None else None

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def arm(self) -> None:
        if self.signal is not None:
            self.task = asyncio.current_task()
            self.armed = True

    def disarm(self) -> None:
        self.armed = False

    def _on_abort(self) -> None:
        if threading.get_ident() != self.thread:
            self.loop.call_soon_threadsafe(self._on_abort)
            return
        task = self.task
        if self.armed and not self.fired and task is not None and not task.done():
            self.fired = True
            task.cancel()

    def consume(self) -> bool:
        """In ``except CancelledError``: whether the cancellation was this guard's own."""
        self.armed = False
        if not self.fired:
            return False
        self.fired = False
        task = asyncio.current_task()
        return task is None or task.uncancel() == 0

    def close(self) -> None:
        self.armed = False
        if self.remove is not None:
            self.remove()
            self.remove = None


# ---------------------------------------------------------------------------
# The stream loop
# ---------------------------------------------------------------------------


_SCRATCH_KEYS = ("partialArgs", "streamIndex", "partialJson", "index")


def strip_scratch(message: AssistantMessage) -> None:
    """Drop the streaming scratch fields pi keeps on blocks while streaming (``partialArgs``...)."""
    for block in message.content:
        extra = block.extra
        if extra:
            for key in _SCRATCH_KEYS:
                extra.pop(key, None)


Decoder = Callable[["StreamedResponse", "MessageBuilder", AbortGuard], AsyncIterator[list[StreamEvent]]]
RequestBuilder = Callable[[Model, Context, StreamOptions], RequestSpec | Awaitable[RequestSpec]]


def announced(feed: Callable[..., None], *args: Any) -> Iterator[list[StreamEvent]]:
    """The events ``feed(*args, out)`` appends to ``out``, as one list for a decoder to yield
    (none when it appended none); when ``feed`` raises :class:`ProviderError`, the events it
    appended before the failure are still handed on, then the error goes on."""
    out: list[StreamEvent] = []
    try:
        feed(*args, out)
    except ProviderError:
        if out:
            yield out
        raise
    if out:
        yield out


def stream_message(
    model: Model,
    context: Context,
    options: StreamOptions,
    build_request: RequestBuilder,
    decode: Decoder,
    *,
    api: str | None = None,
    format_error: Callable[[int, str], str] | None = None,
) -> AsyncIterator[StreamEvent]:
    """One assistant message of ``model`` (named ``api`` when given, for an API serving another's
    models) by :func:`run_stream`: the request is ``build_request(model, context, options)``."""
    from piko.plugins.providers.builder import MessageBuilder

    builder = MessageBuilder(model)
    if api is not None:
        builder.message.api = api
    return run_stream(
        builder, options, lambda: build_request(model, context, options), decode, format_error=format_error
    )


async def run_stream(
    builder: MessageBuilder,
    options: StreamOptions,
    prepare: Callable[[], RequestSpec | Awaitable[RequestSpec]],
    decode: Decoder,
    *,
    format_error: Callable[[int, str], str] | None = None,
    describe_error: Callable[[int, Mapping[str, str], bytes], str] | None = None,
    rules: RetryRules = SDK_RETRIES,
    seal: Callable[[RequestSpec], RequestSpec] | None = None,
    unknown_error: str = "Provider returned an error stop reason",
) -> AsyncIterator[StreamEvent]:
    """``start``, the decoder's events, then ``done`` — or one ``error`` event, never an exception.

    ``prepare()`` builds the request (its exceptions become the error message); the payload
    goes through ``options.on_payload``, then ``seal(spec)`` when given (Bedrock signs the final
    body there); ``options.on_response`` sees status and headers of the answer. The request is
    sent by :func:`send_with_retries` with ``rules`` and the error wording given.
    ``decode(response, builder, guard)`` yields lists of events (each list handed on before the
    decoder goes on) and leaves the stop reason in ``builder.message.stop_reason``; it raises
    :class:`ProviderError` for provider-reported failures. An ``error`` stop reason without a
    message ends with ``unknown_error``. An abort stops everything at once with reason ``aborted``.
    """
    model = builder.model
    guard = AbortGuard(options.signal)
    started = False
    try:
        if guard.aborted:
            raise ProviderError(ABORTED_BEFORE_REQUEST)
        spec = prepare()
        if not isinstance(spec, RequestSpec):
            spec = await spec
        if options.on_payload is not None:
            replaced = await options.on_payload(spec.body, model)
            if replaced is not None:
                spec = replace(spec, body=replaced)
        if seal is not None:
            spec = seal(spec)
        if guard.aborted:
            raise ProviderError(ABORTED_BEFORE_REQUEST)
        guard.arm()
        response = await send_with_retries(
            spec, options, format_error=format_error, describe_error=describe_error, rules=rules,
            provider=model.provider,
        )  # fmt: skip
        guard.disarm()
        try:
            if options.on_response is not None:
                await options.on_response(response.status_code, dict(response.headers), model)
            started = True
            yield builder.start()
            if guard.aborted:
                raise ProviderError(ABORTED_MESSAGE)
            guard.arm()
            signal = options.signal
            async with contextlib.aclosing(decode(response, builder, guard)) as batches:  # type: ignore[type-var]
                if signal is None:
                    async for batch in batches:
                        for event in batch:
                            yield event
                else:
                    current_task = asyncio.current_task
                    async for batch in batches:
                        guard.armed = False
                        for event in batch:
                            yield event
                            if signal.aborted:
                                raise ProviderError(ABORTED_MESSAGE)
                        guard.task = current_task()
                        guard.armed = True
            guard.disarm()
        finally:
            guard.disarm()
            await response.aclose()
        if guard.aborted:
            raise ProviderError(ABORTED_MESSAGE)
        reason = builder.message.stop_reason
        if reason == "aborted":
            raise ProviderError(ABORTED_MESSAGE)
        if reason == "error":
            raise ProviderError(builder.message.error_message or unknown_error)
        yield builder.done(reason)
    except asyncio.CancelledError:
        if not guard.consume():
            raise
        strip_scratch(builder.message)
        yield builder.error(ABORTED_MESSAGE if started else ABORTED_BEFORE_REQUEST, aborted=True)
    except ProviderError as exc:
        guard.disarm()
        strip_scratch(builder.message)
        yield builder.error(str(exc), aborted=guard.aborted)
    except transport_errors() as exc:
        guard.disarm()
        strip_scratch(builder.message)
        yield builder.error(network_error_message(exc, streaming=started), aborted=guard.aborted)
    except Exception as exc:  # a provider must end with an error event, whatever went wrong
        guard.disarm()
        strip_scratch(builder.message)
        yield builder.error(str(exc) or type(exc).__name__, aborted=guard.aborted)
    finally:
        guard.close()
