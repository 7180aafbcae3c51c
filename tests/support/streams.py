"""Helpers for provider tests: models pointing at the scripted server, and collecting stream events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import Usage
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.lib.records import replace
from piko.plugins.providers.custom_models import custom_model
from piko.testing.home import MOCK_ANTHROPIC_PROVIDER
from piko.testing.home import MOCK_PROVIDER
from piko.testing.home import mock_providers

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SAMPLES = FIXTURES / "pi_llm_samples"
CASSETTES = FIXTURES / "pi_agent_rust" / "vcr"
"""pi_agent_rust's recorded provider answers (VCR cassettes), replayed by the scripted server."""

StreamFn = Callable[[Model, Context, StreamOptions], AsyncIterator[StreamEvent]]


def mock_model(mock: str, base_url: str, **changes: Any) -> Model:
    """The model of piko.testing's mock provider ``mock`` (its models.json entry, read as the
    registry reads it) at ``base_url`` (the server's), with ``changes``."""
    entry = mock_providers(base_url)[mock]
    return replace(custom_model(mock, entry, entry["models"][0]), **changes)


def openai_model(base_url: str, **changes: Any) -> Model:
    """The transcripts' ``mock/mock-1`` (openai-completions) at ``base_url`` (the server's)."""
    return mock_model(MOCK_PROVIDER, base_url, **changes)


def anthropic_model(base_url: str, **changes: Any) -> Model:
    """The transcripts' ``mock-anthropic/mock-claude`` (anthropic-messages) at ``base_url``."""
    return mock_model(MOCK_ANTHROPIC_PROVIDER, base_url, **changes)


async def gather(fn: StreamFn, model: Model, context: Context, options: StreamOptions) -> list[StreamEvent]:
    return [event async for event in fn(model, context, options)]


def collect(
    fn: StreamFn, model: Model, context: Context, options: StreamOptions | None = None
) -> list[StreamEvent]:
    """All events of one stream call (run in a fresh event loop)."""
    return asyncio.run(gather(fn, model, context, options or StreamOptions(api_key="mock-key")))


def final(events: list[StreamEvent]) -> AssistantMessage:
    """The finished message of the last event (``done`` or ``error``), checking there is one."""
    assert events, "no events"
    last = events[-1]
    assert last.type in ("done", "error"), last.type
    assert sum(1 for e in events if e.type in ("done", "error")) == 1
    message = last.final
    assert message is not None
    return message


def token_counts(usage: Usage) -> tuple[int, int, int, int, int]:
    """``(input, output, cache_read, cache_write, total_tokens)`` of a message's usage."""
    return usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens


def summary(events: list[StreamEvent]) -> list[dict[str, Any]]:
    """Events in pi's JSON form without the partial message (comparable with pi's stdout)."""
    out = []
    for event in events:
        wire = event.to_wire()
        wire.pop("partial", None)
        out.append(wire)
    return out


def pi_updates(stdout: Path, message_index: int = 0) -> list[dict[str, Any]]:
    """The ``assistantMessageEvent``s (without partial) of the Nth assistant message in pi's
    ``--mode json`` output."""
    turns: list[list[dict[str, Any]]] = []
    for line in stdout.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if data.get("type") == "message_start" and data["message"].get("role") == "assistant":
            turns.append([])
        elif data.get("type") == "message_update":
            event = dict(data["assistantMessageEvent"])
            event.pop("partial", None)
            turns[-1].append(event)
    return turns[message_index]


def update_delta(record: dict[str, Any]) -> dict[str, Any]:
    """The change a ``message_update`` record carries, comparable across pi generations.

    pi 0.73.1 adds ``partial`` snapshots (serialized after the stream moved on, so they show
    later text than their delta: not comparable); pi 1.6 and piko write the change alone and name
    a starting tool call (``id``, ``toolName`` on ``toolcall_start``), which 0.73.1 did not.
    """
    change = {k: v for k, v in record["assistantMessageEvent"].items() if k != "partial"}
    if change.get("type") == "toolcall_start":
        change.pop("id", None)
        change.pop("toolName", None)
    return change
