"""OpenAI responses streaming (``POST .../responses``) for the scripted LLM server.

Serves both ``openai-responses`` and ``azure-openai-responses`` (Azure adds ``?api-version``).
Each block becomes an output item with the events the API sends for it: reasoning items with a
summary part and ``encrypted_content``, message items with one ``output_text`` part, and
function calls with argument deltas; ``response.completed`` carries the usage (cached tokens
inside ``input_tokens``). A turn may set ``status`` in ``stop_reason`` (``incomplete``...).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from piko.testing.llm_server import TurnContext
from piko.testing.llm_server import WireFormat
from piko.testing.llm_server import as_bytes
from piko.testing.llm_server import block_hash
from piko.testing.llm_server import data_event
from piko.testing.llm_server import pieces
from piko.testing.llm_server import posted_to
from piko.testing.llm_server import register_format
from piko.testing.llm_server import tool_arguments
from piko.testing.llm_server import turn_usage
from piko.testing.llm_server import words
from piko.testing.wire_openai_completions import error_object


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: ".encode() + as_bytes(event) + b"\n\n"


def encrypted_content(seq: int, block_index: int) -> str:
    """The opaque reasoning state the server hands out (and expects back verbatim)."""
    return "gAAAA" + base64.b64encode(f"reasoning {seq}/{block_index}".encode()).decode()


def stream_part(
    add: Callable[..., None], part_kind: str, text_kind: str, where: dict[str, Any], part: dict[str, Any]
) -> None:
    """The events of one text part of an item: the part added empty, its text word by word, both done.

    ``where`` names the item and the part (``item_id``, ``output_index`` and ``summary_index`` or
    ``content_index``); ``part`` is the finished part, its ``text`` the whole text.
    """
    text = part["text"]
    add(f"response.{part_kind}.added", **where, part={**part, "text": ""})
    for word in words(text):
        add(f"response.{text_kind}.delta", **where, delta=word)
    add(f"response.{text_kind}.done", **where, text=text)
    add(f"response.{part_kind}.done", **where, part=part)


def encode(turn: dict[str, Any], ctx: TurnContext) -> list[bytes]:
    seq = ctx.seq
    response_id = turn.get("id") or f"resp_{block_hash(seq, 999, 32)}"
    model = turn.get("model") or ctx.model
    created = int(time.time())
    events: list[dict[str, Any]] = []

    def add(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    base = {"id": response_id, "object": "response", "created_at": created, "model": model}
    add("response.created", response={**base, "status": "in_progress", "output": []})
    add("response.in_progress", response={**base, "status": "in_progress", "output": []})
    output: list[dict[str, Any]] = []
    for index, block in enumerate(turn.get("blocks") or []):
        position = len(output)
        if "thinking" in block:
            item_id = f"rs_{block_hash(seq, index, 32)}"
            text = str(block["thinking"])
            add(
                "response.output_item.added",
                output_index=position,
                item={"id": item_id, "type": "reasoning", "summary": []},
            )
            done_part = {"type": "summary_text", "text": text}
            where = {"item_id": item_id, "output_index": position, "summary_index": 0}
            stream_part(add, "reasoning_summary_part", "reasoning_summary_text", where, done_part)
            item = {
                "id": item_id,
                "type": "reasoning",
                "summary": [done_part],
                "encrypted_content": block.get("encrypted_content") or encrypted_content(seq, index),
            }
            add("response.output_item.done", output_index=position, item=item)
            output.append(item)
        elif "text" in block:
            item_id = f"msg_{block_hash(seq, index, 32)}"
            text = str(block["text"])
            item = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            if block.get("phase"):
                item["phase"] = block["phase"]
            add("response.output_item.added", output_index=position, item=item)
            full = {"type": "output_text", "annotations": [], "text": text}
            where = {"item_id": item_id, "output_index": position, "content_index": 0}
            stream_part(add, "content_part", "output_text", where, full)
            done_item = {**item, "status": "completed", "content": [full]}
            add("response.output_item.done", output_index=position, item=done_item)
            output.append(done_item)
        elif "tool_call" in block:
            call = block["tool_call"]
            item_id = f"fc_{block_hash(seq, index, 32)}"
            call_id = call.get("id") or f"call_{block_hash(seq, index)}"
            text = tool_arguments(call)
            item = {
                "id": item_id,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": call_id,
                "name": call["name"],
            }
            add("response.output_item.added", output_index=position, item=item)
            for piece in pieces(text):
                add(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=position,
                    delta=piece,
                )
            add(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=position,
                arguments=text,
            )
            done_item = {**item, "status": "completed", "arguments": text}
            add("response.output_item.done", output_index=position, item=done_item)
            output.append(done_item)
    usage = turn_usage(turn)
    prompt = usage["input"] + usage["cacheRead"]
    wire_usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage["cacheRead"]},
        "output_tokens": usage["output"],
        "output_tokens_details": {"reasoning_tokens": usage.get("reasoning", 0)},
        "total_tokens": prompt + usage["output"],
    }
    status = turn.get("stop_reason") or "completed"
    final: dict[str, Any] = {**base, "status": status, "output": output, "usage": wire_usage}
    if status == "incomplete":
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    if turn.get("service_tier"):
        final["service_tier"] = turn["service_tier"]
    add("response.completed", response=final)
    return [_sse(e) for e in events]


def error_body(status: int, ctx: TurnContext) -> bytes:
    return as_bytes({"error": error_object(status)})


def stream_error(body: Any, ctx: TurnContext) -> bytes:
    event = (
        body
        if isinstance(body, dict)
        else {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error while processing your request.",
            "param": None,
        }
    )
    event = {"type": "error", **event}
    return _sse(event)


def frame(event: Any, ctx: TurnContext) -> bytes:
    return _sse(event) if isinstance(event, dict) and "type" in event else data_event(event)


register_format(WireFormat.of_module(__name__, "openai-responses", posted_to("/responses")))
