"""Extensions: inline factories (named or not) get the same ``pi`` object as extension files."""

from __future__ import annotations

import asyncio
from typing import Any

import piko


def guard(pi: piko.ExtensionAPI) -> None:
    """Refuse ``rm -rf`` in bash; count the turns."""
    turns = {"count": 0}

    def on_tool_call(event: Any, ctx: piko.HandlerContext) -> dict[str, Any] | None:
        if event.tool_name == "bash" and "rm -rf" in str(event.input.get("command", "")):
            return {"block": True, "reason": "rm -rf is not allowed here"}
        return None

    def on_turn_end(event: Any, ctx: piko.HandlerContext) -> None:
        turns["count"] += 1

    def on_shutdown(event: Any, ctx: piko.HandlerContext) -> None:
        print(f"guard: {turns['count']} turn(s)")

    pi.on("tool_call", on_tool_call)
    pi.on("turn_end", on_turn_end)
    pi.on("session_shutdown", on_shutdown)


async def greeter(pi: piko.ExtensionAPI) -> None:
    """An async factory registering a command: ``/greet name`` runs without the model."""

    async def greet(args: str, ctx: piko.HandlerContext) -> None:
        print(f"Hello, {args or 'world'}!")

    pi.register_command("greet", description="Say hello", handler=greet)


async def main() -> None:
    async with await piko.create_agent_session(
        extensions=[piko.InlineExtension(name="guard", factory=guard), greeter],
    ) as session:
        await session.prompt("/greet SDK")  # an extension command: no model call
        await session.prompt("Clean up the build folder.")
        for message in session.messages:
            if message.ROLE == "toolResult":
                print("tool result:", message.content[0].text)
        print(session.get_last_assistant_text())


if __name__ == "__main__":
    asyncio.run(main())
