"""Anthropic messages streaming (``POST .../v1/messages``) for the scripted LLM server."""

from __future__ import annotations

from typing import Any

from piko.testing.llm_server import TurnContext
from piko.testing.llm_server import WireFormat
from piko.testing.llm_server import as_bytes
from piko.testing.llm_server import block_hash
from piko.testing.llm_server import compact_json
from piko.testing.llm_server import pieces
from piko.testing.llm_server import posted_to
from piko.testing.llm_server import register_format
from piko.testing.llm_server import tool_arguments
from piko.testing.llm_server import turn_usage
from piko.testing.llm_server import words

ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


def error_object(status: int) -> dict[str, Any]:
    kind, message = ERRORS.get(status, ("api_error", f"Error {status}"))
    return {"type": "error", "error": {"type": kind, "message": message}}


def frame(event: dict[str, Any], ctx: TurnContext | None = None) -> bytes:
    return f"event: {event.get('type', 'message')}\ndata: {compact_json(event)}\n\n".encode()


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    """Events as the Anthropic API streams them, one content block after the other."""
    usage = turn_usage(turn)
    message: dict[str, Any] = {
        "id": turn.get("id") or f"msg_mock{ctx.seq:04d}",
        "type": "message",
        "role": "assistant",
        "model": turn.get("model") or ctx.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input"],
            "cache_creation_input_tokens": usage["cacheWrite"],
            "cache_read_input_tokens": usage["cacheRead"],
            "output_tokens": 1,
        },
    }
    out = [frame({"type": "message_start", "message": message})]
    has_tool = False
    for index, block in enumerate(turn.get("blocks") or []):
        if "text" in block:
            out.append(
                frame(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    }
                )
            )
            for word in words(str(block["text"])):
                out.append(
                    frame(
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": word},
                        }
                    )
                )
        elif "thinking" in block:
            start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            out.append(frame({"type": "content_block_start", "index": index, "content_block": start}))
            for word in words(str(block["thinking"])):
                delta = {"type": "thinking_delta", "thinking": word}
                out.append(frame({"type": "content_block_delta", "index": index, "delta": delta}))
            signature = block.get("signature", f"sig_{block_hash(ctx.seq, index, 48)}")
            if signature:
                delta = {"type": "signature_delta", "signature": signature}
                out.append(frame({"type": "content_block_delta", "index": index, "delta": delta}))
        elif "redacted_thinking" in block:
            start = {"type": "redacted_thinking", "data": str(block["redacted_thinking"])}
            out.append(frame({"type": "content_block_start", "index": index, "content_block": start}))
        elif "tool_call" in block:
            has_tool = True
            call = block["tool_call"]
            call_id = call.get("id") or f"toolu_{block_hash(ctx.seq, index)}"
            start = {"type": "tool_use", "id": call_id, "name": call["name"], "input": {}}
            out.append(frame({"type": "content_block_start", "index": index, "content_block": start}))
            text = tool_arguments(call)
            for piece in pieces(text):
                delta = {"type": "input_json_delta", "partial_json": piece}
                out.append(frame({"type": "content_block_delta", "index": index, "delta": delta}))
        else:
            continue
        out.append(frame({"type": "content_block_stop", "index": index}))
    stop = turn.get("stop_reason") or ("tool_use" if has_tool else "end_turn")
    out.append(
        frame(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {
                    "output_tokens": usage["output"],
                    **(
                        {"output_tokens_details": {"thinking_tokens": usage["reasoning"]}}
                        if "reasoning" in usage
                        else {}
                    ),
                    **(turn.get("usage_extra") or {}),
                },
            }
        )
    )
    out.append(frame({"type": "message_stop"}))
    return out


def error_body(status: int, ctx: TurnContext) -> bytes:
    return as_bytes(error_object(status))


def stream_error(body: Any, ctx: TurnContext) -> bytes:
    payload = body if body is not None else error_object(529)
    return b"event: error\ndata: " + as_bytes(payload) + b"\n\n"


register_format(WireFormat.of_module(__name__, "anthropic-messages", posted_to("/messages")))
