"""The agent loop: stream a response, run its tool calls, repeat until the model stops.

Events come out in pi's order: ``agent_start``, ``turn_start``, the prompt's
``message_start``/``message_end``, then per turn the assistant message's ``message_start``,
``message_update`` per delta and ``message_end``; for tool calls ``tool_execution_start`` (each,
in order), ``tool_execution_update``/``tool_execution_end`` as tools progress (they run
concurrently), the tool results' ``message_start``/``message_end`` in call order, then
``turn_end``; finally ``agent_end``. Steering messages are taken between turns; follow-ups when
the model would stop. Everything that can be intercepted is reached through :class:`LoopConfig`
callbacks, so this module knows nothing of extensions or sessions. A failed response's error
message is redacted (:mod:`piko.lib.redaction`) before anyone sees it: providers may quote the key.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.events import AgentEndEvent
from piko.data.events import AgentStartEvent
from piko.data.events import MessageEndEvent
from piko.data.events import MessageStartEvent
from piko.data.events import MessageUpdateEvent
from piko.data.events import ToolExecutionEndEvent
from piko.data.events import ToolExecutionStartEvent
from piko.data.events import ToolExecutionUpdateEvent
from piko.data.events import TurnEndEvent
from piko.data.events import TurnStartEvent
from piko.data.messages import AssistantMessage
from piko.data.messages import CustomMessage
from piko.data.messages import Model
from piko.data.messages import StopReason
from piko.data.messages import ToolCall
from piko.data.messages import ToolResult
from piko.data.messages import ToolResultMessage
from piko.data.messages import Usage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.data.streaming import ToolSpec
from piko.data.wire import blocks_from_wire
from piko.data.wire import error_result
from piko.data.wire import normalize_tool_result
from piko.lib.abort import AbortSignal
from piko.lib.records import Record
from piko.lib.records import field
from piko.lib.records import replace
from piko.lib.redaction import redact

Emit = Callable[[Any], Awaitable[None]]


def now_ms() -> int:
    return int(time.time() * 1000)


class AgentState(Record):
    """What the loop works on: system prompt, conversation, active tools."""

    system_prompt: str = ""
    messages: list[Any] = field(factory=list)
    tools: list[Any] = field(factory=list)  # piko.platform.registries.ToolDefinition


class LoopConfig(Record):
    """How the loop reaches the model and the outside world."""

    model: Model
    stream_fn: Callable[[Model, Context, StreamOptions], AsyncIterator[StreamEvent]]
    make_options: Callable[[AbortSignal], Awaitable[StreamOptions]]
    convert_to_llm: Callable[[list[Any]], list[Any]]
    tool_ctx: Any = None
    transform_context: Callable[[list[Any]], Awaitable[list[Any]]] | None = None
    # after transform_context: the system prompt and messages of this request together
    transform_request: Callable[[str, list[Any]], Awaitable[tuple[str, list[Any]]]] | None = None
    on_assistant_message: Callable[[AssistantMessage], Awaitable[AssistantMessage]] | None = None
    before_tool_call: Callable[[ToolCall, dict[str, Any]], Awaitable[Any]] | None = None
    after_tool_call: Callable[[ToolCall, dict[str, Any], ToolResult, bool], Awaitable[Any]] | None = None
    get_steering: Callable[[], Awaitable[list[Any]]] | None = None
    get_follow_up: Callable[[], Awaitable[list[Any]]] | None = None


async def run_agent_loop(
    prompts: list[Any],
    state: AgentState,
    config: LoopConfig,
    emit: Emit,
    signal: AbortSignal,
) -> list[Any]:
    """Run a prompt (``prompts`` are the new user/custom messages); returns the messages added."""
    new_messages = list(prompts)
    state.messages.extend(prompts)
    await emit(AgentStartEvent())
    await emit(TurnStartEvent(turn_index=0, timestamp=now_ms()))
    for prompt in prompts:
        await emit(MessageStartEvent(message=prompt))
        await emit(MessageEndEvent(message=prompt))
    await _run_turns(state, config, emit, signal, new_messages)
    return new_messages


async def continue_agent_loop(
    state: AgentState, config: LoopConfig, emit: Emit, signal: AbortSignal
) -> list[Any]:
    """Run from the current context without a new prompt (retries)."""
    new_messages: list[Any] = []
    await emit(AgentStartEvent())
    await emit(TurnStartEvent(turn_index=0, timestamp=now_ms()))
    await _run_turns(state, config, emit, signal, new_messages)
    return new_messages


async def _run_turns(
    state: AgentState, config: LoopConfig, emit: Emit, signal: AbortSignal, new_messages: list[Any]
) -> None:
    first_turn = True
    turn_index = 0
    pending = await config.get_steering() if config.get_steering else []
    while True:
        more_tool_calls = True
        while more_tool_calls or pending:
            if not first_turn:
                turn_index += 1
                await emit(TurnStartEvent(turn_index=turn_index, timestamp=now_ms()))
            first_turn = False
            for message in pending:
                await emit(MessageStartEvent(message=message))
                await emit(MessageEndEvent(message=message))
                state.messages.append(message)
                new_messages.append(message)
            pending = []
            assistant = await _stream_assistant(state, config, emit, signal)
            new_messages.append(assistant)
            if assistant.stop_reason in ("error", "aborted"):
                await emit(TurnEndEvent(turn_index=turn_index, message=assistant, tool_results=[]))
                await emit(AgentEndEvent(messages=new_messages))
                return
            calls = [b for b in assistant.content if isinstance(b, ToolCall)]
            results: list[ToolResultMessage] = []
            more_tool_calls = False
            if calls:
                results, contexts = await _execute_tool_calls(state, config, emit, signal, assistant, calls)
                more_tool_calls = True
                state.messages.extend(results)
                new_messages.extend(results)
                for message in contexts:  # additionalContext: after the results, before the next request
                    await emit(MessageStartEvent(message=message))
                    await emit(MessageEndEvent(message=message))
                    state.messages.append(message)
                    new_messages.append(message)
            await emit(TurnEndEvent(turn_index=turn_index, message=assistant, tool_results=results))
            pending = await config.get_steering() if config.get_steering else []
        follow_ups = await config.get_follow_up() if config.get_follow_up else []
        if not follow_ups:
            break
        pending = follow_ups
    await emit(AgentEndEvent(messages=new_messages))


def _aborted_message(model: Model, text: str = "Request was aborted") -> AssistantMessage:
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="aborted",
        timestamp=now_ms(),
        error_message=text,
    )


async def _stream_assistant(
    state: AgentState, config: LoopConfig, emit: Emit, signal: AbortSignal
) -> AssistantMessage:
    """Stream one assistant response into ``state.messages`` and return it finalized."""
    messages = state.messages
    if config.transform_context is not None:
        messages = await config.transform_context(list(messages))
    system_prompt = state.system_prompt
    if config.transform_request is not None:
        system_prompt, messages = await config.transform_request(system_prompt, list(messages))
    llm_messages = config.convert_to_llm(messages)
    tools = [tool_spec(t) for t in state.tools]
    context = Context(system_prompt=system_prompt, messages=llm_messages, tools=tools)
    final: AssistantMessage | None = None
    partial: AssistantMessage | None = None
    reasoning: str | None = None
    started = time.monotonic()
    if signal.aborted:
        final = _aborted_message(config.model)
    else:
        try:
            options = await config.make_options(signal)
            reasoning = options.reasoning
            started = time.monotonic()
            stream = config.stream_fn(config.model, context, options)
            async for event in stream:
                kind = event.type
                if kind == "start":
                    partial = event.partial
                    assert partial is not None, "a start event carries the partial message"
                    state.messages.append(partial)
                    await emit(MessageStartEvent(message=_snapshot(partial, stop_reason="pending")))
                elif kind in ("done", "error"):
                    final = event.final
                    break
                elif partial is not None:
                    await emit(MessageUpdateEvent(assistant_message_event=event, message=partial))
        except Exception as exc:  # a provider must not raise, but one that does ends the turn cleanly
            final = _aborted_message(config.model, str(exc)) if signal.aborted else None
            if final is None:
                final = AssistantMessage(
                    api=config.model.api,
                    provider=config.model.provider,
                    model=config.model.id,
                    usage=Usage(),
                    stop_reason="error",
                    timestamp=now_ms(),
                    error_message=str(exc) or type(exc).__name__,
                )
        if final is None:  # the stream ended without done/error
            final = (
                partial
                if partial is not None
                else _aborted_message(config.model, "Stream ended unexpectedly")
            )
            if final.stop_reason not in ("error", "aborted"):
                final.stop_reason = "error"
                final.error_message = final.error_message or "Stream ended without a final event"
    if final.error_message:  # a provider's error may quote the key it was sent
        final.error_message = redact(final.error_message)
    if final.duration_ms is None:  # pi 1.6: from the request to the final event, in ms
        final.duration_ms = max(0, round((time.monotonic() - started) * 1000))
    final.thinking_level = reasoning or "off"  # the level asked for, whoever answered
    if config.on_assistant_message is not None and final.stop_reason not in ("error", "aborted"):
        final = await config.on_assistant_message(final)
    if partial is not None and state.messages and state.messages[-1] is partial:
        state.messages[-1] = final
    else:
        state.messages.append(final)
        await emit(MessageStartEvent(message=_snapshot(final)))
    await emit(MessageEndEvent(message=final))
    return final


def _snapshot(message: AssistantMessage, stop_reason: StopReason | None = None) -> AssistantMessage:
    """A shallow copy, so a ``message_start`` listener keeps what the message was then; a message
    that still streams says so with ``stop_reason="pending"`` (pi 1.6), the live one never does."""
    return replace(message, content=list(message.content), stop_reason=stop_reason or message.stop_reason)


async def _execute_tool_calls(
    state: AgentState,
    config: LoopConfig,
    emit: Emit,
    signal: AbortSignal,
    assistant: AssistantMessage,
    calls: list[ToolCall],
) -> tuple[list[ToolResultMessage], list[CustomMessage]]:
    """Prepare calls in order, run them concurrently; the results in call order, and the
    ``additionalContext`` messages that follow them."""
    jobs: list[Any] = []
    contexts: dict[str, CallContext] = {call.id: CallContext() for call in calls}
    for call in calls:
        await emit(ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments))
        prepared = await _prepare(state, config, call, contexts[call.id])
        if isinstance(prepared, ToolResult):
            await emit(
                ToolExecutionEndEvent(
                    tool_call_id=call.id, tool_name=call.name, result=prepared, is_error=True
                )
            )
            jobs.append((call, prepared))
        else:
            jobs.append((call, _run_tool(config, emit, signal, call, *prepared, contexts[call.id])))
    coroutines = [job for _call, job in jobs if not isinstance(job, ToolResult)]
    finished = iter(await asyncio.gather(*coroutines))
    results: list[ToolResultMessage] = []
    for call, job in jobs:
        result, duration_ms = (job, None) if isinstance(job, ToolResult) else next(finished)
        message = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=list(result.content),
            details=result.details,
            is_error=result.is_error,
            duration_ms=duration_ms,
            timestamp=now_ms(),
        )
        results.append(message)
    for message in results:
        await emit(MessageStartEvent(message=message))
        await emit(MessageEndEvent(message=message))
    return results, context_messages(calls, results, contexts)


class CallContext:
    """The ``additionalContext`` gathered for one tool call: the tool's own (``ctx.add_additional_context``),
    the ``tool_result`` handlers' and the ``tool_call`` handlers'."""

    __slots__ = ("call", "own", "result")

    def __init__(self) -> None:
        self.own: list[str] = []
        self.result: list[str] = []
        self.call: list[str] = []


def context_messages(
    calls: list[ToolCall], results: list[ToolResultMessage], contexts: dict[str, CallContext]
) -> list[CustomMessage]:
    """One hidden message per call with context, in call order; the ``tool_call`` handlers' part
    only when the call ran and succeeded, and a call's context repeating an earlier one's dropped."""
    out: list[CustomMessage] = []
    seen: set[str] = set()
    for call, result in zip(calls, results, strict=True):
        gathered = contexts[call.id]
        parts = [*gathered.own, *gathered.result, *([] if result.is_error else gathered.call)]
        text = "\n\n".join(part.strip() for part in parts if part.strip())
        if text and text not in seen:
            seen.add(text)
            out.append(
                CustomMessage(custom_type=ADDITIONAL_CONTEXT, content=text, display=False, timestamp=now_ms())
            )
    return out


ADDITIONAL_CONTEXT = "additional_context"
"""The ``custom_type`` of the messages carrying handlers' and tools' ``additionalContext``."""


async def _prepare(
    state: AgentState, config: LoopConfig, call: ToolCall, context: CallContext
) -> ToolResult | tuple[Any, dict[str, Any]]:
    """The tool and validated arguments, or an error result (unknown tool, bad arguments, blocked)."""
    tool = next((t for t in state.tools if t.name == call.name), None)
    if tool is None:
        return error_result(f"Tool {call.name} not found")
    try:
        from piko.engine.tool_validation import validate_tool_arguments

        arguments = call.arguments or {}
        if tool.prepare_arguments is not None:
            arguments = tool.resolved("prepare_arguments")(arguments)
        args = validate_tool_arguments(call.name, tool.parameters, arguments)
        if config.before_tool_call is not None:
            verdict = await config.before_tool_call(call, args)
            if verdict and verdict.get("block"):
                return error_result(verdict.get("reason") or "Tool execution was blocked")
            if verdict and isinstance(verdict.get("input"), dict):
                args = verdict["input"]
            if verdict and verdict.get("additional_context"):
                context.call.extend(verdict["additional_context"])
    except Exception as exc:
        return error_result(str(exc) or type(exc).__name__)
    return tool, args


async def _run_tool(
    config: LoopConfig,
    emit: Emit,
    signal: AbortSignal,
    call: ToolCall,
    tool: Any,
    args: dict[str, Any],
    context: CallContext,
) -> tuple[ToolResult, int]:
    """Run the tool; its result and how long ``execute`` took in ms (pi 1.6's ``durationMs``,
    from a monotonic clock)."""
    from piko.extensions.context import collecting_additional_context
    from piko.extensions.context import running_tool

    updates: list[asyncio.Future[None]] = []

    def on_update(partial: Any) -> None:
        event = ToolExecutionUpdateEvent(
            tool_call_id=call.id,
            tool_name=call.name,
            args=call.arguments,
            partial_result=normalize_tool_result(partial),
        )
        previous = updates[-1] if updates else None
        updates.append(asyncio.ensure_future(_after(previous, emit(event))))

    started = time.monotonic()
    try:
        with collecting_additional_context(context.own), running_tool(call.name, signal, on_update):
            result = await tool.run(call.id, args, signal, on_update, config.tool_ctx)
    except Exception as exc:
        result = error_result(str(exc) or type(exc).__name__)
        # an error that carries the result as data keeps it (pi 1.6's bash on a non-zero exit)
        result.structured_content = getattr(exc, "structured_content", None)
    duration_ms = max(0, round((time.monotonic() - started) * 1000))
    if updates:
        await asyncio.gather(*updates, return_exceptions=True)
    if config.after_tool_call is not None:
        try:
            patch = await config.after_tool_call(call, args, result, result.is_error)
            if patch and patch.get("additional_context"):
                context.result.extend(patch["additional_context"])
            if patch and any(
                patch.get(key) is not None for key in ("content", "details", "structured_content", "is_error")
            ):
                content = patch.get("content")
                result = ToolResult(
                    content=blocks_from_wire(content) if isinstance(content, list) else result.content,
                    details=patch["details"] if patch.get("details") is not None else result.details,
                    # replaced content without new structured content drops the old (pi 1.6)
                    structured_content=patch["structured_content"]
                    if "structured_content" in patch
                    else result.structured_content,
                    is_error=bool(patch["is_error"])
                    if patch.get("is_error") is not None
                    else result.is_error,
                )
        except Exception as exc:
            result = error_result(str(exc) or type(exc).__name__)
    await emit(
        ToolExecutionEndEvent(
            tool_call_id=call.id, tool_name=call.name, result=result, is_error=result.is_error,
            duration_ms=duration_ms,
        )
    )  # fmt: skip
    return result, duration_ms


def tool_spec(tool: Any) -> ToolSpec:
    """How the model sees ``tool`` (``strict`` from its definition's ``strict`` field)."""
    metadata = getattr(tool, "metadata", None)
    strict = bool(metadata.get("strict")) if isinstance(metadata, dict) else False
    return ToolSpec(name=tool.name, description=tool.description, parameters=tool.parameters, strict=strict)


async def _after(previous: asyncio.Future[None] | None, awaitable: Awaitable[None]) -> None:
    if previous is not None:
        try:
            await previous
        except Exception:
            pass
    await awaitable
