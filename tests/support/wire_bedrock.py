"""Bedrock ConverseStream (``POST /model/<id>/converse-stream``) for the scripted LLM server.

The body is an AWS event-stream (binary frames with CRC32 checks) built with the encoder of
:mod:`piko.plugins.providers.aws_eventstream`: ``messageStart``, per block ``contentBlockStart``
(tool use only), ``contentBlockDelta`` and ``contentBlockStop``, then ``messageStop`` and
``metadata`` with the usage. HTTP errors carry ``x-amzn-errortype`` when the turn comes from
:func:`error_turn`; ``stream_error`` sends an exception frame (``throttlingException``...).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from piko.plugins.providers.aws_eventstream import encode_event
from piko.plugins.providers.aws_eventstream import encode_exception
from piko.testing.llm_server import TurnContext
from piko.testing.llm_server import WireFormat
from piko.testing.llm_server import block_hash
from piko.testing.llm_server import compact_json
from piko.testing.llm_server import pieces
from piko.testing.llm_server import posted_to
from piko.testing.llm_server import register_format
from piko.testing.llm_server import turn_usage
from piko.testing.llm_server import words

ERRORS: dict[int, tuple[str, str]] = {
    400: ("ValidationException", "The provided model identifier is invalid."),
    403: ("AccessDeniedException", "You don't have access to the model with the specified model ID."),
    404: (
        "ResourceNotFoundException",
        "Could not resolve the foundation model from the provided model identifier.",
    ),
    429: ("ThrottlingException", "Too many requests, please wait before trying again."),
    500: (
        "InternalServerException",
        "The system encountered an unexpected error during processing. Try your request again.",
    ),
    503: ("ServiceUnavailableException", "Bedrock is unable to process your request."),
}


def error_turn(status: int, **extra: Any) -> dict[str, Any]:
    """An HTTP error turn with the ``x-amzn-errortype`` header Bedrock sends."""
    name = ERRORS.get(status, ("UnknownError", ""))[0]
    headers = {"x-amzn-errortype": f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    headers.update(extra.pop("headers", {}))
    return {"status": status, "headers": headers, **extra}


def signature(seq: int, block_index: int) -> str:
    return base64.b64encode(f"bedrock-sig {seq}/{block_index}".encode()).decode()


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    # Bedrock pads events with a "p" field of varying length
    return encode_event(kind, compact_json({**payload, "p": "abcdefghij"[: len(kind) % 10]}).encode())


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    out = [_event("messageStart", {"role": "assistant"})]
    has_calls = False
    for index, block in enumerate(turn.get("blocks") or []):
        if "text" in block:
            for word in words(str(block["text"])):
                out.append(_event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": word}}))
        elif "thinking" in block:
            for word in words(str(block["thinking"])):
                out.append(
                    _event(
                        "contentBlockDelta",
                        {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": word}}},
                    )
                )
            sig = block.get("signature") or signature(ctx.seq, index)
            out.append(
                _event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": sig}}},
                )
            )
        elif "tool_call" in block:
            has_calls = True
            call = block["tool_call"]
            call_id = call.get("id") or f"tooluse_{block_hash(ctx.seq, index, 22)}"
            start = {"toolUse": {"toolUseId": call_id, "name": call["name"]}}
            out.append(_event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            arguments = call.get("arguments", {})
            text = arguments if isinstance(arguments, str) else compact_json(arguments)
            for piece in pieces(text):
                out.append(
                    _event(
                        "contentBlockDelta",
                        {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}},
                    )
                )
        else:
            continue
        out.append(_event("contentBlockStop", {"contentBlockIndex": index}))
    stop = turn.get("stop_reason") or ("tool_use" if has_calls else "end_turn")
    out.append(_event("messageStop", {"stopReason": stop}))
    usage = turn_usage(turn)
    wire_usage: dict[str, Any] = {
        "inputTokens": usage["input"],
        "outputTokens": usage["output"],
        "totalTokens": usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"],
    }
    if usage["cacheRead"] or usage["cacheWrite"]:
        wire_usage["cacheReadInputTokens"] = usage["cacheRead"]
        wire_usage["cacheWriteInputTokens"] = usage["cacheWrite"]
    out.append(_event("metadata", {"usage": wire_usage, "metrics": {"latencyMs": 42}}))
    return out


def error_body(status: int, ctx: TurnContext) -> bytes:
    message = ERRORS.get(status, ("", f"Error {status}"))[1]
    return json.dumps({"message": message}).encode()


def stream_error(body: Any, ctx: TurnContext) -> bytes:
    body = body if isinstance(body, dict) else {}
    kind = body.get("type", "throttlingException")
    message = body.get("message", "Too many tokens, please wait before trying again.")
    return encode_exception(kind, json.dumps({"message": message}).encode())


def frame(event: Any, ctx: TurnContext) -> bytes:
    """A raw ``{"type": eventType, ...payload}`` as one event frame."""
    payload = {k: v for k, v in event.items() if k != "type"}
    return encode_event(event["type"], compact_json(payload).encode())


register_format(
    WireFormat.of_module(
        __name__,
        "bedrock-converse-stream",
        posted_to("/converse-stream"),
        content_type="application/vnd.amazon.eventstream",
    )
)
