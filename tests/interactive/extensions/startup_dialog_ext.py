"""Test extension: asks a question in ``session_start`` (the editor must already run)."""

from __future__ import annotations

from typing import Any


def activate(pi: Any) -> None:
    async def on_start(event: Any, ctx: Any) -> None:
        choice = await ctx.ui.select("Start how?", ["fresh", "careful"])
        ctx.ui.notify(f"starting {choice}")

    pi.on("session_start", on_start)
