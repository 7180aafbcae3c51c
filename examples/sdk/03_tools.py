"""Tools: choose built-in tools by name and add tools made from plain, typed Python functions."""

from __future__ import annotations

import asyncio
from typing import Literal

import piko


@piko.tool
def convert_temperature(value: float, to: Literal["celsius", "fahrenheit"]) -> str:
    """Convert a temperature.

    Args:
        value: The temperature to convert.
        to: The unit to convert to.
    """
    result = (value - 32) * 5 / 9 if to == "celsius" else value * 9 / 5 + 32
    return f"{result:.1f} degrees {to}"


@piko.tool(name="word_count")
async def count_words(text: str, ctx: piko.HandlerContext) -> str:
    """Count the words of a text. ``ctx`` is filled in by piko, not by the model."""
    return f"{len(text.split())} words (working in {ctx.cwd})"


async def main() -> None:
    async with await piko.create_agent_session(
        tools=["read", "grep"],  # built-in tools to activate (exactly these)
        custom_tools=[convert_temperature, count_words],  # always active
    ) as session:
        print("active tools:", ", ".join(session.get_active_tools()))
        await session.prompt("What is 212 fahrenheit in celsius?")
        for message in session.messages:
            if message.ROLE == "toolResult":
                print(f"{message.tool_name} -> {message.content[0].text}")
        print(session.get_last_assistant_text())


if __name__ == "__main__":
    asyncio.run(main())
