"""A test extension that misbehaves on one event, as ``CHAOS_EVENT`` and ``CHAOS_MODE`` say.

Modes: ``raise``; ``hang_sync`` (a plain function that sleeps for ever); ``hang_async`` (a
coroutine that sleeps for ever); ``garbage`` (a result of no use to the event). ``CHAOS_TOOL=1``
adds a ``stall`` tool whose plain-function ``execute`` blocks, and ``CHAOS_MARK`` names a file
each misbehaving call appends the event name to (so a test can see the handler was reached).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

EVENT = os.environ.get("CHAOS_EVENT", "")
MODE = os.environ.get("CHAOS_MODE", "")
MARK = os.environ.get("CHAOS_MARK", "")
FOREVER = 1000.0

GARBAGE: dict[str, Any] = {
    "tool_call": "allow it",
    "tool_result": 42,
    "input": ["not", "a", "result"],
    "before_agent_start": "be brief",
    "context": {"messages": "none"},
    "message_update": {"anything": True},
}


def _mark() -> None:
    if MARK:
        with open(MARK, "a", encoding="utf-8") as handle:
            handle.write(EVENT + "\n")


def plain(event: Any, ctx: Any) -> Any:
    _mark()
    if MODE == "raise":
        raise RuntimeError(f"chaos in {EVENT}")
    if MODE == "hang_sync":
        time.sleep(FOREVER)
    if MODE == "garbage":
        return GARBAGE.get(EVENT, "garbage")
    return None


async def coroutine(event: Any, ctx: Any) -> Any:
    _mark()
    await asyncio.sleep(FOREVER)


def stall(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> Any:
    _mark()
    time.sleep(FOREVER)
    return "never"


def activate(pi: Any) -> None:
    if EVENT:
        pi.on(EVENT, coroutine if MODE == "hang_async" else plain)
    if os.environ.get("CHAOS_TOOL"):
        pi.register_tool(
            name="stall",
            label="Stall",
            description="Blocks for ever",
            parameters={"type": "object", "properties": {}},
            execute=stall,
        )
