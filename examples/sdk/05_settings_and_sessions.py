"""Settings in memory and sessions in memory; then a saved session continued later."""

from __future__ import annotations

import asyncio

import piko


async def main() -> None:
    # Nothing is read from or written to settings files or session files.
    async with await piko.create_agent_session(
        settings={"retry": {"enabled": False}, "compaction": {"enabled": False}},
        session_manager=piko.SessionManager.in_memory(),
    ) as session:
        await session.prompt("Remember the number 7.")
        print("in memory:", session.session_file, "-", session.get_last_assistant_text())

    # A saved session (the default), continued by a second session.
    async with await piko.create_agent_session() as session:
        await session.prompt("Remember the word kite.")
        saved = session.session_file
    async with await piko.create_agent_session(
        session_manager=piko.SessionManager.continue_recent(session.cwd)
    ) as session:
        print("continued:", session.session_file == saved, len(session.messages), "messages")
        await session.prompt("Which word?")
        print(session.get_last_assistant_text())


if __name__ == "__main__":
    asyncio.run(main())
