"""OpenAI chat-completions streaming (``POST .../chat/completions``) for the scripted LLM server."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from piko.testing.llm_server import TurnContext
from piko.testing.llm_server import WireFormat
from piko.testing.llm_server import as_bytes
from piko.testing.llm_server import block_hash
from piko.testing.llm_server import compact_json
from piko.testing.llm_server import data_event
from piko.testing.llm_server import pieces
from piko.testing.llm_server import posted_to
from piko.testing.llm_server import register_format
from piko.testing.llm_server import tool_arguments
from piko.testing.llm_server import turn_usage
from piko.testing.llm_server import words

ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    403: ("You are not allowed to access this resource.", "invalid_request_error", None),
    404: (
        "The model does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    429: ("Rate limit reached for requests.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!", "server_error", None),
    502: ("Bad gateway.", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}


def error_object(status: int) -> dict[str, Any]:
    message, kind, code = ERRORS.get(status, (f"Error {status}.", "server_error", None))
    return {"message": message, "type": kind, "param": None, "code": code}


def chat_deltas(
    turn: dict[str, Any],
    thinking: Callable[[str], dict[str, Any]],
    tool_call: Callable[[dict[str, Any], int, int], list[dict[str, Any]]],
) -> tuple[list[dict[str, Any]], str]:
    """The ``delta`` objects of a chat-completions stream for ``turn``'s blocks, and its finish reason.

    Text goes word by word as ``content``; ``thinking(word)`` is the delta of one thinking word and
    ``tool_call(call, block_index, tool_index)`` the deltas of one tool call, as the provider sends
    them. The first delta names the ``assistant`` role. The finish reason is the turn's
    ``stop_reason``, else ``tool_calls`` when there were calls, else ``stop``. Mistral's stream
    (:mod:`piko.testing.wire_openai_mistral`) has these deltas too.
    """
    deltas: list[dict[str, Any]] = []
    tool_index = 0
    for block_index, block in enumerate(turn.get("blocks") or []):
        if "text" in block:
            deltas.extend({"content": word} for word in words(str(block["text"])))
        elif "thinking" in block:
            deltas.extend(thinking(word) for word in words(str(block["thinking"])))
        elif "tool_call" in block:
            deltas.extend(tool_call(block["tool_call"], block_index, tool_index))
            tool_index += 1
    if deltas:
        deltas[0] = {"role": "assistant", **deltas[0]}
    return deltas, turn.get("stop_reason") or ("tool_calls" if tool_index else "stop")


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    """Chunks as the OpenAI API streams them: deltas, the finish reason, usage, ``[DONE]``."""
    response_id = turn.get("id") or f"chatcmpl-mock{ctx.seq:04d}"
    model = turn.get("model") or ctx.model
    created = int(time.time())
    reasoning_field = turn.get("reasoning_field", "reasoning_content")
    head = f'{{"id":{compact_json(response_id)},"object":"chat.completion.chunk","created":{created},"model":{compact_json(model)},"choices":['

    def tool_call(call: dict[str, Any], block_index: int, tool_index: int) -> list[dict[str, Any]]:
        """The call's opening delta (its id and name, no arguments), then its arguments in pieces."""
        call_id = call.get("id") or f"call_{block_hash(ctx.seq, block_index)}"
        opening = {
            "index": tool_index,
            "id": call_id,
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        found = [{"tool_calls": [opening]}]
        for piece in pieces(tool_arguments(call)):
            found.append({"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]})
        return found

    deltas, finish = chat_deltas(turn, lambda word: {reasoning_field: word}, tool_call)
    out = [
        data_event(head + '{"index":0,"delta":' + compact_json(value) + ',"finish_reason":null}]}')
        for value in deltas or [{"role": "assistant", "content": ""}]
    ]
    out.append(data_event(head + '{"index":0,"delta":{},"finish_reason":' + compact_json(finish) + "}]}"))
    usage = turn_usage(turn)
    prompt = usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
    wire_usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": usage["output"],
        "total_tokens": prompt + usage["output"],
    }
    if usage["cacheRead"] or usage["cacheWrite"]:
        details: dict[str, int] = {"cached_tokens": usage["cacheRead"] + usage["cacheWrite"]}
        if usage["cacheWrite"]:
            details["cache_write_tokens"] = usage["cacheWrite"]
        wire_usage["prompt_tokens_details"] = details
    if "reasoning" in usage:
        wire_usage["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning"]}
    wire_usage.update(turn.get("usage_extra") or {})
    if not turn.get("no_usage"):
        out.append(data_event(head + "]," + '"usage":' + compact_json(wire_usage) + "}"))
    out.append(b"data: [DONE]\n\n")
    return out


def error_body(status: int, ctx: TurnContext) -> bytes:
    return as_bytes({"error": error_object(status)})


def stream_error(body: Any, ctx: TurnContext) -> bytes:
    return data_event(body if body is not None else {"error": error_object(500)})


register_format(
    WireFormat.of_module(
        __name__,
        "openai-completions",
        posted_to("/chat/completions"),
        frame=lambda event, ctx: data_event(event),
    )
)
