"""OpenAI chat-completions streaming (``POST .../chat/completions``) for the scripted LLM server."""

from __future__ import annotations

import time
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


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    """Chunks as the OpenAI API streams them: deltas, the finish reason, usage, ``[DONE]``."""
    response_id = turn.get("id") or f"chatcmpl-mock{ctx.seq:04d}"
    model = turn.get("model") or ctx.model
    created = int(time.time())
    reasoning_field = turn.get("reasoning_field", "reasoning_content")
    head = f'{{"id":{compact_json(response_id)},"object":"chat.completion.chunk","created":{created},"model":{compact_json(model)},"choices":['
    out: list[bytes] = []
    first = True

    def delta(value: dict[str, Any]) -> None:
        nonlocal first
        if first:
            value = {"role": "assistant", **value}
            first = False
        out.append(
            data_event(head + '{"index":0,"delta":' + compact_json(value) + ',"finish_reason":null}]}')
        )

    tool_index = 0
    for block_index, block in enumerate(turn.get("blocks") or []):
        if "text" in block:
            for word in words(str(block["text"])):
                delta({"content": word})
        elif "thinking" in block:
            for word in words(str(block["thinking"])):
                delta({reasoning_field: word})
        elif "tool_call" in block:
            call = block["tool_call"]
            call_id = call.get("id") or f"call_{block_hash(ctx.seq, block_index)}"
            text = tool_arguments(call)
            delta(
                {
                    "tool_calls": [
                        {
                            "index": tool_index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for piece in pieces(text):
                delta({"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]})
            tool_index += 1
    finish = turn.get("stop_reason") or ("tool_calls" if tool_index else "stop")
    if first:
        delta({"content": ""})
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
    WireFormat(
        name="openai-completions",
        matches=posted_to("/chat/completions"),
        encode=encode,
        error_body=error_body,
        frame=lambda event, ctx: data_event(event),
        stream_error=stream_error,
    )
)
