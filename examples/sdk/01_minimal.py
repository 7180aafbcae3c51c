"""Minimal: create a session as ``pi`` would in this directory, prompt it, print the answer."""

from __future__ import annotations

import asyncio

import piko


async def main() -> None:
    async with await piko.create_agent_session() as session:
        await session.prompt("What files are in the current directory?")
        print(session.get_last_assistant_text())


if __name__ == "__main__":
    asyncio.run(main())
