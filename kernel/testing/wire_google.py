"""Gemini streaming (``POST .../models/<id>:streamGenerateContent?alt=sse``) for the scripted server.

Each chunk is a ``GenerateContentResponse`` (``data: {...}`` and a CRLF blank line, as Google
sends them): text word by word, thinking as ``thought: true`` parts, function calls whole in one
part carrying a ``thoughtSignature``; the last chunk has ``finishReason`` and ``usageMetadata``.
"""

from __future__ import annotations

import base64
from typing import Any

from piko.testing.llm_server import TurnContext
from piko.testing.llm_server import WireFormat
from piko.testing.llm_server import as_bytes
from piko.testing.llm_server import block_hash
from piko.testing.llm_server import data_event
from piko.testing.llm_server import posted_to
from piko.testing.llm_server import register_format
from piko.testing.llm_server import turn_usage
from piko.testing.llm_server import words

STATUSES = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "Permission denied."),
    404: ("NOT_FOUND", "models/unknown is not found for API version v1beta."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}


def signature(seq: int, block_index: int) -> str:
    """A base64 thought signature, as Gemini hands them out."""
    return base64.b64encode(f"sig {seq}/{block_index}".encode()).decode()


def _sse(data: Any) -> bytes:
    return data_event(data, end=b"\r\n\r\n")


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    response_id = turn.get("id") or f"resp-{block_hash(ctx.seq, 999, 16)}"
    model = turn.get("model") or ctx.model
    parts: list[dict[str, Any]] = []  # one part per chunk
    blocks = turn.get("blocks") or []
    for index, block in enumerate(blocks):
        if "thinking" in block:
            for word in words(str(block["thinking"])):
                parts.append({"text": word, "thought": True})
            if parts:
                parts[-1]["thoughtSignature"] = block.get("signature") or signature(ctx.seq, index)
        elif "text" in block:
            chunk_parts = [{"text": word} for word in words(str(block["text"]))]
            if block.get("signature") and chunk_parts:
                chunk_parts[-1]["thoughtSignature"] = block["signature"]
            parts.extend(chunk_parts)
        elif "tool_call" in block:
            call = block["tool_call"]
            function_call: dict[str, Any] = {"name": call["name"], "args": call.get("arguments", {})}
            if call.get("id"):
                function_call["id"] = call["id"]
            parts.append(
                {
                    "functionCall": function_call,
                    "thoughtSignature": call.get("signature") or signature(ctx.seq, index),
                }
            )
    usage = turn_usage(turn)
    prompt = usage["input"] + usage["cacheRead"]
    thoughts = usage.get("reasoning", 0)  # Gemini counts thoughts beside the candidates
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage["output"] - thoughts,
        "totalTokenCount": prompt + usage["output"],
    }
    if "reasoning" in usage:
        metadata["thoughtsTokenCount"] = thoughts
    if usage["cacheRead"]:
        metadata["cachedContentTokenCount"] = usage["cacheRead"]
    finish = turn.get("stop_reason") or "STOP"
    chunks: list[bytes] = []
    if not parts:
        parts = [{"text": ""}]
    for i, part in enumerate(parts):
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if i == len(parts) - 1:
            candidate["finishReason"] = finish
            chunk["usageMetadata"] = metadata
        else:
            chunk["usageMetadata"] = {"promptTokenCount": prompt, "totalTokenCount": prompt}
        chunk["modelVersion"] = model
        chunk["responseId"] = response_id
        chunks.append(_sse(chunk))
    return chunks


def error_object(status: int) -> dict[str, Any]:
    name, message = STATUSES.get(status, ("UNKNOWN", f"Error {status}."))
    return {"error": {"code": status, "message": message, "status": name}}


def error_body(status: int, ctx: TurnContext) -> bytes:
    return as_bytes(error_object(status))


def stream_error(body: Any, ctx: TurnContext) -> bytes:
    return _sse(body if body is not None else error_object(500))


register_format(
    WireFormat.of_module(
        __name__,
        "google-generative-ai",
        posted_to(":streamGenerateContent"),
        frame=lambda event, ctx: _sse(event),
    )
)
