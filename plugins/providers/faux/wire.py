"""The ``faux`` provider's stream: scripted replies without a network or a key (demos, offline use, tests).

Provider ``faux``, model ``faux-1``, API ``faux`` (pi's names). Replies come, in order, from:

* code: :func:`set_responses` / :func:`append_responses` (plugin authors' tests), or
* a JSON file named by ``PIKO_FAUX_SCRIPT``: a list of turns, one per request.

A turn is an object with

``blocks``
    the reply's content, in order: ``{"text": "..."}``, ``{"thinking": "..."}`` and
    ``{"tool_call": {"name": "...", "arguments": {...}, "id": "..."}}`` (``arguments`` an object
    or its JSON text; ``id`` optional);
``error``, ``status``
    a failed request: ``"error": "text"`` or ``"error": {"status": 429, "message": "..."}``
    (``"429 ..."``), or ``"status": 500`` alone;
``stop_reason``
    ``stop``, ``length``, ``toolUse``, ``error`` or ``aborted`` instead of the natural one;
``usage``
    token counts (``input``, ``output``, ``cacheRead``, ``cacheWrite``) instead of faux's estimate;
``delay_s``
    seconds to wait before each streamed piece.

These are the scripted LLM server's names (:mod:`piko.testing.llm_server`), so a script of text,
thinking and tool calls plays on both; what only a server can do (``headers``, ``stall_s``,
``repeat``, ...) is refused. A turn that is not this shape (an unknown key, a block with none of
``text``/``thinking``/``tool_call``, a tool call without a name) fails its request with an error
saying what is wrong and which turn it is (:class:`ScriptError`); the script goes on with the next
turn. A turn may also be a plain string (one text block), an
:class:`~piko.data.messages.AssistantMessage`, or a function ``(context, options, state, model)``
returning one of these (or awaitable). Once a script runs out, a request fails with pi's ``No more
faux responses queued``. With no script at all, faux answers with a short note explaining what it
is and how to set up a real provider.

Text is streamed in pieces of 3-5 "tokens" (4 characters each), as pi's faux provider does;
``PIKO_FAUX_TOKENS_PER_SECOND`` (or :func:`configure`) paces them like a real model.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import math
import os
import random
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import Usage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.plugins.providers.faux import faux_model as faux_model

SCRIPT_ENV = "PIKO_FAUX_SCRIPT"
PACE_ENV = "PIKO_FAUX_TOKENS_PER_SECOND"
NO_MORE_RESPONSES = "No more faux responses queued"
ABORTED = "Request was aborted"

DEMO_REPLY = (
    "Hi! I'm faux, piko's offline demo provider: this reply is scripted, no model wrote it. "
    "To talk to a real model, set an API key (for example ANTHROPIC_API_KEY or OPENAI_API_KEY) "
    "or run /login, then choose a model with --provider and --model, or /model. "
    f"To script faux replies for a demo or a test, point {SCRIPT_ENV} at a JSON file of turns."
)


# ---------------------------------------------------------------------------
# Script state
# ---------------------------------------------------------------------------


class _State:
    def __init__(self) -> None:
        self.responses: list[Any] | None = None  # None: no script (demo mode)
        self.script_loaded_from: str | None = None
        self.script_is_file = False  # the turns came from PIKO_FAUX_SCRIPT (errors name the file)
        self.turns_served = 0
        self.call_count = 0
        self.tokens_per_second: float | None = None
        self.token_size = (3, 5)
        self.prompt_cache: dict[str, str] = {}

    def load_env_script(self) -> None:
        path = os.environ.get(SCRIPT_ENV)
        if not path or self.script_loaded_from == path or self.responses is not None:
            return
        self.script_loaded_from = path
        try:
            turns = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{SCRIPT_ENV}: cannot read {path}: {exc}") from exc
        if not isinstance(turns, list):
            raise ValueError(f"{SCRIPT_ENV}: {path} must hold a JSON list of turns")
        self.responses = list(turns)
        self.script_is_file = True

    def turn_name(self, number: int) -> str:
        """How an error names the turn ``number`` (1-based) of the script."""
        if self.script_is_file:
            return f"turn {number} of {SCRIPT_ENV} ({self.script_loaded_from})"
        return f"scripted turn {number}"


_STATE = _State()


def set_responses(responses: list[Any]) -> None:
    """Replace the scripted replies (turn dicts, strings, AssistantMessages or functions)."""
    _STATE.responses = list(responses)
    _STATE.script_is_file = False
    _STATE.turns_served = 0


def append_responses(responses: list[Any]) -> None:
    """Queue more scripted replies."""
    if _STATE.responses is None:
        _STATE.responses = []
    _STATE.responses.extend(responses)


def pending_count() -> int:
    """How many scripted replies are left."""
    return len(_STATE.responses or [])


def call_count() -> int:
    """How many requests faux has answered since the last :func:`reset`."""
    return _STATE.call_count


def configure(*, tokens_per_second: float | None = None, token_size: tuple[int, int] | None = None) -> None:
    """Pacing: ``tokens_per_second`` (``None`` streams at once), piece size in tokens (min, max)."""
    _STATE.tokens_per_second = tokens_per_second
    if token_size is not None:
        low = max(1, min(token_size))
        _STATE.token_size = (low, max(low, max(token_size)))


def reset() -> None:
    """Forget scripts, counters, pacing and the prompt cache (back to demo mode)."""
    global _STATE
    _STATE = _State()


# ---------------------------------------------------------------------------
# Turns -> messages
# ---------------------------------------------------------------------------


def _call_id(seq: int, index: int) -> str:
    return "call_" + hashlib.sha256(f"faux:{seq}/{index}".encode()).hexdigest()[:24]


TURN_KEYS = ("blocks", "error", "status", "stop_reason", "usage", "delay_s")
# what the scripted LLM server of piko.testing plays and faux cannot (no HTTP here)
SERVER_ONLY_KEYS = ("headers", "repeat", "headers_delay_s", "stall_s", "pause", "cut_after", "stream_error", "sse",
                    "replay", "coalesce", "error_body")  # fmt: skip
BLOCK_KINDS = ("text", "thinking", "tool_call")
STOP_REASONS = ("stop", "length", "toolUse", "error", "aborted")
USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite", "cache_read", "cache_write")


class ScriptError(ValueError):
    """A scripted turn faux cannot play; the message says what is wrong with it."""


def _quoted(names: Any) -> str:
    return ", ".join(f"'{name}'" for name in names)


def _kind(value: Any) -> str:
    return type(value).__name__


def check_turn(turn: dict[str, Any]) -> None:
    """Raise :class:`ScriptError` when a turn object is not the script format (see the module docstring)."""
    server_only = [key for key in turn if key in SERVER_ONLY_KEYS]
    if server_only:
        raise ScriptError(
            f"{_quoted(server_only)}: only the scripted LLM server (piko.testing) plays that; "
            f"a faux turn has {_quoted(TURN_KEYS)}"
        )
    unknown = [key for key in turn if key not in TURN_KEYS]
    if unknown:
        raise ScriptError(f"unknown key {_quoted(unknown)} (a turn has {_quoted(TURN_KEYS)})")
    if "blocks" not in turn and not (turn.get("error") or turn.get("status")):
        raise ScriptError("a turn needs 'blocks' or an 'error'")
    blocks = turn.get("blocks", [])
    if not isinstance(blocks, list):
        raise ScriptError(f"'blocks' must be a list of blocks, not {_kind(blocks)}")
    for number, block in enumerate(blocks, 1):
        _check_block(number, block)
    stop = turn.get("stop_reason")
    if stop is not None and stop not in STOP_REASONS:
        raise ScriptError(f"'stop_reason' must be one of {_quoted(STOP_REASONS)}, not {stop!r}")
    delay = turn.get("delay_s")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0):
        raise ScriptError(f"'delay_s' must be a number of seconds, not {delay!r}")
    usage = turn.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise ScriptError(f"'usage' must be an object of token counts, not {_kind(usage)}")
        for key, value in usage.items():
            if key not in USAGE_KEYS:
                raise ScriptError(f"'usage' has an unknown key '{key}' (it takes {_quoted(USAGE_KEYS[:4])})")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ScriptError(f"'usage' {key} must be a number, not {_kind(value)}")


def _check_block(number: int, block: Any) -> None:
    if not isinstance(block, dict):
        raise ScriptError(f"block {number} must be an object, not {_kind(block)}")
    kinds = [kind for kind in BLOCK_KINDS if kind in block]
    if not kinds:
        raise ScriptError(f"block {number} has none of {_quoted(BLOCK_KINDS)} (it has {_quoted(block)})")
    if len(kinds) > 1:
        raise ScriptError(f"block {number} has more than one of {_quoted(BLOCK_KINDS)}")
    kind = kinds[0]
    if kind != "tool_call":
        if not isinstance(block[kind], str):
            raise ScriptError(f"block {number}: '{kind}' must be a string, not {_kind(block[kind])}")
        return
    call = block["tool_call"]
    if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
        raise ScriptError(f"block {number}: a tool_call needs a 'name' (a string)")
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise ScriptError(
                f"block {number}: tool_call 'arguments' is not JSON: {call['arguments']!r}"
            ) from None
    if not isinstance(arguments, dict):
        raise ScriptError(f"block {number}: tool_call 'arguments' must be an object, not {_kind(arguments)}")
    if "id" in call and not isinstance(call["id"], str):
        raise ScriptError(f"block {number}: tool_call 'id' must be a string, not {_kind(call['id'])}")


def message_from_turn(turn: Any, seq: int) -> AssistantMessage:
    """An assistant message from a scripted turn (see the module docstring); raises
    :class:`ScriptError` for a turn that is not the script format."""
    if isinstance(turn, AssistantMessage):
        return turn
    if isinstance(turn, str):
        return AssistantMessage(content=[TextContent(text=turn)])
    if not isinstance(turn, dict):
        raise ScriptError(f"a turn must be an object, a string or an AssistantMessage, not {_kind(turn)}")
    check_turn(turn)
    content: list[Any] = []
    for index, block in enumerate(turn.get("blocks") or []):
        if "text" in block:
            content.append(TextContent(text=block["text"]))
        elif "thinking" in block:
            content.append(ThinkingContent(thinking=block["thinking"]))
        else:
            call = block["tool_call"]
            arguments = call.get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            content.append(
                ToolCall(id=call.get("id") or _call_id(seq, index), name=call["name"], arguments=arguments)
            )
    message = AssistantMessage(content=content)
    error = turn.get("error")
    status = turn.get("status") or (error.get("status") if isinstance(error, dict) else None)
    if error or status:
        message.stop_reason = "error"
        if isinstance(error, str):
            message.error_message = error
        else:
            text = (error or {}).get("message") if isinstance(error, dict) else None
            message.error_message = (
                f"{status} {text or 'status code (no body)'}" if status else (text or "faux error")
            )
    elif turn.get("stop_reason"):
        message.stop_reason = turn["stop_reason"]
    elif any(isinstance(b, ToolCall) for b in content):
        message.stop_reason = "toolUse"
    if turn.get("usage"):
        message.extra["fauxUsage"] = dict(turn["usage"])
    if turn.get("delay_s"):
        message.extra["fauxDelay"] = float(turn["delay_s"])
    return message


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            parts.append(block.thinking)
        elif isinstance(block, ToolCall):
            parts.append(f"{block.name}:{json.dumps(block.arguments, separators=(',', ':'))}")
        elif hasattr(block, "mime_type"):
            parts.append(f"[image:{block.mime_type}:{len(getattr(block, 'data', ''))}]")
    return "\n".join(parts)


def _serialize_context(context: Context) -> str:
    parts = []
    if context.system_prompt:
        parts.append(f"system:{context.system_prompt}")
    for message in context.messages:
        role = getattr(message, "ROLE", "")
        if role == "toolResult":
            text = "\n".join(
                [getattr(message, "tool_name", ""), _content_text(getattr(message, "content", []))]
            )
        else:
            text = _content_text(getattr(message, "content", ""))
        parts.append(f"{role}:{text}")
    if context.tools:
        tools = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in context.tools
        ]
        parts.append(f"tools:{json.dumps(tools, separators=(',', ':'))}")
    return "\n\n".join(parts)


def _usage(message: AssistantMessage, context: Context, options: StreamOptions) -> Usage:
    """pi's estimate: a token per 4 characters; a session id simulates prompt caching."""
    scripted = message.extra.pop("fauxUsage", None)
    prompt = _serialize_context(context)
    prompt_tokens = _estimate_tokens(prompt)
    output = _estimate_tokens(_content_text(message.content))
    input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
    if options.session_id and options.cache_retention != "none":
        previous = _STATE.prompt_cache.get(options.session_id)
        if previous is not None:
            shared = 0
            for a, b in zip(previous, prompt, strict=False):
                if a != b:
                    break
                shared += 1
            cache_read = _estimate_tokens(previous[:shared])
            cache_write = _estimate_tokens(prompt[shared:])
            input_tokens = max(0, prompt_tokens - cache_read)
        else:
            cache_write = prompt_tokens
        _STATE.prompt_cache[options.session_id] = prompt
    usage = Usage(input=input_tokens, output=output, cache_read=cache_read, cache_write=cache_write)
    if isinstance(scripted, dict):
        usage.input = int(scripted.get("input", usage.input) or 0)
        usage.output = int(scripted.get("output", usage.output) or 0)
        usage.cache_read = int(scripted.get("cacheRead", scripted.get("cache_read", usage.cache_read)) or 0)
        usage.cache_write = int(
            scripted.get("cacheWrite", scripted.get("cache_write", usage.cache_write)) or 0
        )
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    return usage


def _pieces(text: str, rng: random.Random) -> list[str]:
    low, high = _STATE.token_size
    out = []
    index = 0
    while index < len(text):
        size = max(1, rng.randint(low, high) * 4)
        out.append(text[index : index + size])
        index += size
    return out or [""]


# ---------------------------------------------------------------------------
# Streaming
# ---------------------------------------------------------------------------


async def _next_message(model: Model, context: Context, options: StreamOptions) -> AssistantMessage:
    _STATE.load_env_script()
    _STATE.call_count += 1
    seq = _STATE.call_count
    if _STATE.responses is None:
        return AssistantMessage(content=[TextContent(text=DEMO_REPLY)])
    if not _STATE.responses:
        raise LookupError(NO_MORE_RESPONSES)  # only the error event, as pi's faux
    step = _STATE.responses.pop(0)
    _STATE.turns_served += 1
    number = _STATE.turns_served
    if callable(step):
        step = step(context, options, {"callCount": _STATE.call_count}, model)
        if inspect.isawaitable(step):
            step = await step
    try:
        return message_from_turn(step, seq)
    except ScriptError as exc:
        raise ScriptError(f"faux: {_STATE.turn_name(number)}: {exc}") from None


async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream the next scripted reply (or the demo reply) as a real provider would."""
    from piko.plugins.providers.builder import MessageBuilder

    builder = MessageBuilder(model)
    signal = options.signal
    try:
        if options.on_response is not None:
            await options.on_response(200, {}, model)
        scripted = await _next_message(model, context, options)
        builder.message.usage = _usage(scripted, context, options)
    except Exception as exc:  # a bad script is an error event, not a crash
        yield builder.error(str(exc) or type(exc).__name__)
        return
    delay = float(scripted.extra.pop("fauxDelay", 0) or 0)
    if scripted.response_id:
        builder.message.response_id = scripted.response_id
    if signal is not None and signal.aborted:
        yield builder.error(ABORTED, aborted=True)
        return
    yield builder.start()
    tokens_per_second = _STATE.tokens_per_second
    if tokens_per_second is None and os.environ.get(PACE_ENV):
        try:
            tokens_per_second = float(os.environ[PACE_ENV])
        except ValueError:
            tokens_per_second = None
    rng = random.Random(_STATE.call_count)

    async def pace(chunk: str) -> bool:
        """Wait as a model would (and the turn's ``delay_s``); False once aborted."""
        if tokens_per_second and tokens_per_second > 0:
            await asyncio.sleep(_estimate_tokens(chunk) / tokens_per_second + delay)
        else:
            await asyncio.sleep(delay)
        return not (signal is not None and signal.aborted)

    for block in scripted.content:
        delta: Callable[[int, str], StreamEvent]
        end: Callable[[], StreamEvent]
        if isinstance(block, ThinkingContent):
            index, event = builder.thinking_start()
            text, delta = block.thinking, builder.thinking_delta
            end = functools.partial(builder.thinking_end, index)
        elif isinstance(block, TextContent):
            index, event = builder.text_start()
            text, delta = block.text, builder.text_delta
            end = functools.partial(builder.text_end, index)
        elif isinstance(block, ToolCall):
            index, event = builder.toolcall_start(block.id, block.name)
            text = json.dumps(block.arguments, separators=(",", ":"), ensure_ascii=False)
            delta = builder.toolcall_delta
            end = functools.partial(builder.toolcall_end, index, block.arguments)
        else:
            continue
        yield event
        for piece in _pieces(text, rng):
            if not await pace(piece):
                yield builder.error(ABORTED, aborted=True)
                return
            yield delta(index, piece)
        yield end()
    if scripted.stop_reason in ("error", "aborted"):
        yield builder.error(scripted.error_message or "faux error", aborted=scripted.stop_reason == "aborted")
        return
    yield builder.done(scripted.stop_reason)


StreamFunction = Callable[[Model, Context, StreamOptions], AsyncIterator[StreamEvent]]
