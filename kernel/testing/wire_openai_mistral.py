"""Mistral chat streaming (``POST /mistral/v1/chat/completions``) for the scripted LLM server.

Mistral's endpoint has the same path as OpenAI's chat completions, so tests give Mistral models
a base URL ending in ``/mistral``; this module's name sorts after ``wire_openai_completions`` so
its more specific matcher is registered later and tried first. Chunks as Mistral sends them:
text deltas, thinking as ``[{"type": "thinking", "thinking": [...]}]`` content, each tool call
whole in one delta with a nine-character id, the finish reason and usage in the last chunk.
"""

from __future__ import annotations

import time
from typing import Any

from piko.testing.llm_server import TurnContext
from piko.testing.llm_server import WireFormat
from piko.testing.llm_server import as_bytes
from piko.testing.llm_server import block_hash
from piko.testing.llm_server import data_event
from piko.testing.llm_server import register_format
from piko.testing.llm_server import tool_arguments
from piko.testing.llm_server import turn_usage
from piko.testing.wire_openai_completions import chat_deltas

ERRORS: dict[int, dict[str, Any]] = {
    400: {
        "object": "error",
        "message": "Invalid model: unknown",
        "type": "invalid_model",
        "param": None,
        "code": "1500",
    },
    401: {"message": "Unauthorized", "request_id": "0b6a3e1c9f2d4e5a8b7c6d5e4f3a2b1c"},
    429: {
        "object": "error",
        "message": "Rate limit exceeded",
        "type": "rate_limited",
        "param": None,
        "code": "1300",
    },
    500: {
        "object": "error",
        "message": "Internal server error",
        "type": "internal_server_error",
        "param": None,
        "code": "3000",
    },
}


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    response_id = turn.get("id") or block_hash(ctx.seq, 999, 32)
    model = turn.get("model") or ctx.model
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
        body: dict[str, Any] = {
            "id": response_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            body["usage"] = usage
        return data_event(body)

    def tool_call(call: dict[str, Any], index: int, tool_index: int) -> list[dict[str, Any]]:
        """The whole call in one delta, its id nine characters."""
        call_id = call.get("id") or block_hash(ctx.seq, index, 9)
        function = {"name": call["name"], "arguments": tool_arguments(call)}
        return [{"tool_calls": [{"id": call_id, "function": function, "index": tool_index}]}]

    def thinking(word: str) -> dict[str, Any]:
        return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": word}]}]}

    deltas, finish = chat_deltas(turn, thinking, tool_call)
    out = [chunk(delta) for delta in deltas]
    usage = turn_usage(turn)
    wire_usage = {
        "prompt_tokens": usage["input"],
        "total_tokens": usage["input"] + usage["output"],
        "completion_tokens": usage["output"],
    }
    out.append(chunk({} if deltas else {"role": "assistant"}, finish, wire_usage))
    out.append(b"data: [DONE]\n\n")
    return out


def error_body(status: int, ctx: TurnContext) -> bytes:
    return as_bytes(
        ERRORS.get(
            status,
            {"object": "error", "message": f"Error {status}", "type": "error", "param": None, "code": None},
        )
    )


register_format(
    WireFormat.of_module(
        __name__,
        "mistral-conversations",
        lambda method, path: (
            method == "POST" and path.startswith("/mistral/") and path.endswith("/chat/completions")
        ),
        frame=lambda event, ctx: data_event(event),
        stream_error=lambda body, ctx: data_event(body if body is not None else ERRORS[500]),
    )
)
