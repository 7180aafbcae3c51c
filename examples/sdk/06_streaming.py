"""Streaming: write the answer to stdout as it arrives, two ways."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import piko


def is_text_delta(event: Any) -> bool:
    return bool(event.TYPE == "message_update" and event.assistant_message_event.type == "text_delta")


async def main() -> None:
    async with await piko.create_agent_session() as session:
        # 1. An async iterator over one prompt's events; it ends when the run is settled.
        async for event in session.stream("Tell me a short story."):
            if is_text_delta(event):
                sys.stdout.write(event.assistant_message_event.delta)
                sys.stdout.flush()
        print()

        # 2. A callback for every event; subscribe returns the function that unsubscribes.
        def on_event(event: Any) -> None:
            if is_text_delta(event):
                sys.stdout.write(event.assistant_message_event.delta)
            elif event.TYPE == "tool_execution_start":
                sys.stdout.write(f"\n[{event.tool_name}]\n")

        unsubscribe = session.subscribe(on_event)
        try:
            await session.prompt("And another one.")
        finally:
            unsubscribe()
        print()


if __name__ == "__main__":
    asyncio.run(main())
