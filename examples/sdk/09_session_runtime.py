"""Session runtime: new, switch, fork and import change this same session object's conversation.

Subscriptions stay bound across the change (in pi the runtime replaces its session object, so
they must be bound again; in piko they need not be).
"""

from __future__ import annotations

import asyncio
from typing import Any

import piko


async def main() -> None:
    async with await piko.create_agent_session() as session:
        runs = []
        session.subscribe(lambda event: runs.append(event) if event.TYPE == "agent_end" else None)

        await session.prompt("This is the first conversation.")
        first = session.session_file
        print("first:", first is not None)

        await session.new_session()
        await session.prompt("This is the second conversation.")
        print("second is another file:", session.session_file != first)

        assert first is not None
        await session.switch_session(first)
        print("back in the first:", len(session.messages), "messages")

        user_entries = [e for e in session.session_manager.get_entries() if _is_user_message(e)]
        outcome = await session.fork(user_entries[0].id)
        print("forked before:", outcome.text)

        print("runs heard by one subscription:", len(runs))


def _is_user_message(entry: Any) -> bool:
    return entry.type == "message" and getattr(entry.message, "ROLE", None) == "user"


if __name__ == "__main__":
    asyncio.run(main())
