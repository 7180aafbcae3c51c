"""Running a provider stream function in tests: collect its events, abort it mid-way, build contexts."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import ModelCost
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.data.streaming import ToolSpec
from piko.data.wire import message_from_wire
from piko.data.wire import to_wire
from piko.lib.abort import AbortController
from piko.platform.registries import resolve_import
from support.llm_server import LLMServer
from support.streams import final
from support.streams import token_counts

PI_REQUESTS = Path(__file__).resolve().parent.parent / "providers" / "fixtures" / "pi_requests"

READ_TOOL = ToolSpec(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


SEQUENTIAL_READS = [
    "start", "thinking_start", "thinking_end", "text_start", "text_end",
    "toolcall_start", "toolcall_end", "toolcall_start", "toolcall_end", "done",
]  # fmt: skip
"""The shape (:func:`types`) of a :func:`reading_turn` with two calls streamed one after the other."""


def stream_fn(module: str) -> Callable[..., Any]:
    return resolve_import(f"piko.plugins.providers.{module}:stream")  # type: ignore[no-any-return]


def model(api: str, base_url: str, model_id: str = "test-model", **fields: Any) -> Model:
    fields.setdefault("cost", ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    fields.setdefault("provider", "test")
    return Model(id=model_id, name=model_id, api=api, base_url=base_url, **fields)


def model_factory(api: str, path: str, default_id: str, **defaults: Any) -> Callable[..., Model]:
    """A test module's model factory, ``make(server, model_id=default_id, **fields)``: a model of
    ``api`` at ``path`` on ``server`` (on a closed port when ``server`` is ``None``, for request
    bodies alone), with ``defaults`` under ``fields``."""

    def make(server: LLMServer | None, model_id: str = default_id, **fields: Any) -> Model:
        base_url = (server.base_url if server else "http://127.0.0.1:1") + path
        return model(api, base_url, model_id, **{**defaults, **fields})

    return make


def options_factory(**defaults: Any) -> Callable[..., StreamOptions]:
    """A test module's options maker, ``opts(**fields)``: :class:`StreamOptions` of ``defaults``
    (a provider's test key, say) with ``fields`` over them."""

    def make(**fields: Any) -> StreamOptions:
        return StreamOptions(**{**defaults, **fields})

    return make


def context(prompt: str = "Hello", *, tools: bool = True, system: str | None = "You are helpful.") -> Context:
    return Context(
        system_prompt=system,
        messages=[UserMessage(content=prompt, timestamp=1)],
        tools=[READ_TOOL] if tools else [],
    )


def reading_turn(
    thinking: str, text: str, *arguments: dict[str, Any], usage: dict[str, int]
) -> dict[str, Any]:
    """A scripted turn: ``thinking``, ``text``, then a ``read`` call for each of ``arguments``,
    with ``usage`` (the server's ``input``/``output``/``cacheRead``/``cacheWrite``)."""
    calls = [{"tool_call": {"name": "read", "arguments": a}} for a in arguments]
    return {"blocks": [{"thinking": thinking}, {"text": text}, *calls], "usage": usage}


def claude_message(*content: Any, model: str = "claude") -> AssistantMessage:
    """An assistant message of ``content`` that Claude (anthropic-messages) ended for tool use:
    history another provider's API must replay."""
    return AssistantMessage(
        content=list(content),
        api="anthropic-messages",
        provider="anthropic",
        model=model,
        stop_reason="toolUse",
    )


def collect(
    fn: Callable[..., Any], m: Model, ctx: Context, options: StreamOptions | None = None
) -> list[StreamEvent]:
    """Every event of one stream."""

    async def run() -> list[StreamEvent]:
        return [event async for event in fn(m, ctx, options or StreamOptions(api_key="test-key"))]

    return asyncio.run(run())


def collect_aborting(
    fn: Callable[..., Any], m: Model, ctx: Context, options: StreamOptions, *, after: str = "text_delta"
) -> tuple[list[StreamEvent], float]:
    """Abort once an event of type ``after`` arrives; returns the events and the seconds from the
    abort to the end of the stream."""
    controller = AbortController()
    options.signal = controller.signal

    async def run() -> tuple[list[StreamEvent], float]:
        events: list[StreamEvent] = []
        aborted_at: float | None = None
        async for event in fn(m, ctx, options):
            events.append(event)
            if event.type == after and aborted_at is None:
                aborted_at = time.monotonic()
                controller.abort()
        return events, time.monotonic() - (aborted_at or time.monotonic())

    return asyncio.run(run())


def collect_aborted_elsewhere(
    fn: Callable[..., Any], m: Model, ctx: Context, options: StreamOptions, *, timeout_s: float = 30
) -> list[StreamEvent]:
    """Stream in one task and abort from another 0.05 s after the first ``text_delta`` is in, when
    the stream waits for its next chunk (a server pausing there); the events, within ``timeout_s``."""
    controller = AbortController()
    options.signal = controller.signal

    async def run() -> list[StreamEvent]:
        events: list[StreamEvent] = []

        async def consume() -> None:
            async for event in fn(m, ctx, options):
                events.append(event)

        task = asyncio.create_task(consume())
        while not task.done() and not any(e.type == "text_delta" for e in events):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        controller.abort()
        await task
        return events

    return asyncio.run(asyncio.wait_for(run(), timeout=timeout_s))


def assert_abort_ends_a_pause(
    fn: Callable[..., Any], make: Callable[[str], Model], *, pause_after: int
) -> list[StreamEvent]:
    """A minute's pause after the first word (``pause_after`` chunks in): an abort from another task
    must end the wait for the next chunk, in reason ``aborted``; returns the events.
    ``make(base_url)`` is the test module's model."""
    text = {"blocks": [{"text": "a b c d e f g h"}], "pause": {"after": pause_after, "seconds": 60}}
    with LLMServer([text]) as server:
        events = collect_aborted_elsewhere(
            fn, make(server.base_url), context(tools=False, system=None), StreamOptions(api_key="k")
        )
    assert [e.delta for e in events if e.type == "text_delta"] == ["a "]  # type: ignore[attr-defined]
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert final(events).error_message == "Request was aborted"
    return events


def assert_cut_stall_and_abort(
    fn: Callable[..., Any],
    make: Callable[..., Model],
    opts: Callable[..., StreamOptions],
    *,
    cut_after: int = 2,
) -> list[StreamEvent]:
    """A connection cut mid-stream ends in ``terminated``, a stalled one in ``Request timed out.``
    and an abort mid-stream in reason ``aborted`` at once; returns the aborted stream's events.
    ``make(server)`` is the test module's model, ``opts(**fields)`` its options."""
    with LLMServer([{"blocks": [{"text": "a b c d e"}], "cut_after": cut_after}]) as server:
        cut = collect(fn, make(server), context(), opts())
    assert cut[-1].error is not None and cut[-1].error.error_message == "terminated"
    with LLMServer([{"blocks": [{"text": "late"}], "stall_s": 5}]) as server:
        stalled = collect(fn, make(server), context(), opts(timeout_s=0.3))
    assert stalled[-1].error is not None and stalled[-1].error.error_message == "Request timed out."
    with LLMServer([{"blocks": [{"text": "a b c d e f g h"}], "delay_s": 0.2}]) as server:
        events, seconds = collect_aborting(fn, make(server), context(), opts())
    assert events[-1].reason == "aborted" and seconds < 0.5
    return events


def refused(
    fn: Callable[..., Any], make: Callable[..., Model], options: StreamOptions, turn: dict[str, Any]
) -> tuple[str, int]:
    """A stream against a server answering ``turn`` (an HTTP error) is one ``error`` event
    (reason ``error``) and nothing else; returns its message and how many requests the server saw.
    ``make(server)`` is the test module's model."""
    with LLMServer([turn]) as server:
        events = collect(fn, make(server), context(), options)
        requests = len(server.requests)
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "error" and events[0].error is not None
    return events[0].error.error_message, requests


def broken_off(
    fn: Callable[..., Any],
    make: Callable[..., Model],
    options: StreamOptions,
    *,
    after: int,
    body: Any,
    text: str,
) -> str:
    """A stream whose server sends ``text`` and, ``after`` chunks in, the mid-stream error ``body``
    ends in an ``error`` event; returns its message. ``make(server)`` is the test module's model."""
    with LLMServer([{"blocks": [{"text": text}], "stream_error": {"after": after, "body": body}}]) as server:
        events = collect(fn, make(server), context(), options)
    last = events[-1]
    assert last.type == "error" and last.error is not None and last.error.error_message is not None
    return last.error.error_message


def types(events: list[StreamEvent]) -> list[str]:
    """Event types without the deltas (the shape of a stream)."""
    return [e.type for e in events if not e.type.endswith("_delta")]


# -- the real pi's requests (tests/providers/fixtures/pi_requests) -------------------------------


def pi_fixture(api: str) -> dict[str, Any]:
    return dict(json.loads((PI_REQUESTS / f"{api}.json").read_text(encoding="utf-8")))


class PiRecording:
    """What the real pi sent for one API and the message it made of the answer
    (``tests/providers/fixtures/pi_requests/<api>.json``), and the checks that ours are the same.

    ``make(server, model_id, **fields)`` is a test module's model factory (``server`` is ``None``
    when only a request body is built)."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.fixture = pi_fixture(api)

    def request_model(self, make: Callable[..., Model], **fields: Any) -> Model:
        """The model pi's requests were made with (reasoning, images, 64000 output tokens)."""
        fixture = self.fixture
        fields = {"reasoning": True, "input": ["text", "image"], "max_tokens": 64000, **fields}
        return make(None, fixture["model"]["id"], provider=fixture["provider"], **fields)  # type: ignore[no-any-return]

    @staticmethod
    def tool_specs(tools: list[dict[str, Any]], schema: Callable[[dict[str, Any]], Any]) -> list[ToolSpec]:
        """The tools of pi's request body (each API nests them its own way) as tool specs."""
        return [ToolSpec(name=t["name"], description=t["description"], parameters=schema(t)) for t in tools]

    def assert_request_bodies(
        self, build: Callable[[list[Any], dict[str, Any]], Any]
    ) -> list[dict[str, Any]]:
        """``build(messages, pi's request)`` is our body for each of pi's two requests (request N saw
        the prompt and the messages of the N turns before it); each must equal pi's. Returns pi's
        requests, for the checks of their URL and headers."""
        messages = [message_from_wire(m) for m in self.fixture["messages"]]
        requests: list[dict[str, Any]] = self.fixture["requests"]
        assert len(requests) == 2
        for i, request in enumerate(requests):
            assert build(messages[: 1 + 2 * i], request) == request["body"]
        return requests

    def assert_responses_bodies(self, build: Callable[[Context, str], Any]) -> list[dict[str, Any]]:
        """:meth:`assert_request_bodies` for the Responses APIs (OpenAI's, Azure's): ``build(context,
        session_id)`` is our body for the context pi's request shows (its system prompt is the first
        input item) and the session id its ``prompt_cache_key`` carries."""

        def from_request(messages: list[Any], request: dict[str, Any]) -> Any:
            body = request["body"]
            tools = self.tool_specs(body["tools"], lambda t: t["parameters"])
            ctx = Context(system_prompt=body["input"][0]["content"], messages=messages, tools=tools)
            return build(ctx, body["prompt_cache_key"])

        return self.assert_request_bodies(from_request)

    def assert_streamed_message(
        self,
        stream: Callable[..., Any],
        make: Callable[..., Model],
        options: StreamOptions,
        *,
        ignore_ids: bool = False,
    ) -> None:
        """The server playing pi's first answer gives the assistant message pi made of it (ids,
        signatures, usage; ``ignore_ids`` where the ids are made from the clock)."""
        fixture = self.fixture
        with LLMServer([dict(fixture["turns"][0])]) as server:
            m = make(server, fixture["model"]["id"], provider=fixture["provider"], reasoning=True)
            m.cost.input, m.cost.output, m.cost.cache_read, m.cost.cache_write = 1, 2, 0.5, 0
            events = collect(stream, m, context("List the files.", tools=False), options)
        assert_same_message(events[-1].message, fixture["messages"][1], ignore_ids=ignore_ids)


def assert_same_message(ours: Any, theirs_wire: dict[str, Any], *, ignore_ids: bool = False) -> None:
    """Blocks equal in their wire form, token counts exact, costs to float rounding."""
    assert ours is not None
    theirs = message_from_wire(theirs_wire)
    ours_blocks = [to_wire(b) for b in ours.content]
    theirs_blocks = [to_wire(b) for b in theirs.content]
    if ignore_ids:
        for block in ours_blocks + theirs_blocks:
            block.pop("id", None)
    assert ours_blocks == theirs_blocks
    a, b = ours.usage, theirs.usage
    assert token_counts(a) == token_counts(b)
    for name in ("input", "output", "cache_read", "cache_write", "total"):
        assert getattr(a.cost, name) == pytest.approx(getattr(b.cost, name), rel=1e-12)
    assert ours.stop_reason == theirs.stop_reason
    assert ours.api == theirs.api
