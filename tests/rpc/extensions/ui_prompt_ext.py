"""Test extension for RPC mode: records ``ui_prompt_start``/``ui_prompt_end`` around dialogs."""

from __future__ import annotations

import asyncio
import json
from typing import Any


def activate(pi: Any) -> None:
    seen: list[dict[str, Any]] = []
    pi.on(
        "ui_prompt_start", lambda e, ctx: seen.append({"start": e.kind, "title": e.title, "reason": e.reason})
    )
    pi.on("ui_prompt_end", lambda e, ctx: seen.append({"end": e.kind, "cancelled": e.cancelled}))

    async def ask(args: str, ctx: Any) -> None:
        await ctx.ui.confirm("Sure?", "Really?")

    async def both(args: str, ctx: Any) -> None:  # two dialogs at once: one waiting span
        await asyncio.gather(ctx.ui.input("First"), ctx.ui.select("Second", ["a", "b"]))

    async def report(args: str, ctx: Any) -> None:
        ctx.ui.notify(json.dumps(seen))
        seen.clear()

    pi.register_command("ask", {"description": "one dialog", "handler": ask})
    pi.register_command("both", {"description": "two dialogs", "handler": both})
    pi.register_command("report", {"description": "what was seen", "handler": report})
