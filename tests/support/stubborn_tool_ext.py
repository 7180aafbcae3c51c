"""Test extension: tools that ignore the abort signal (``-e tests/support/stubborn_tool_ext.py``).

``stubborn`` waits 1000 s and never looks at its signal; ``very_stubborn`` also swallows the
cancellation of its task and keeps waiting; ``blocking`` blocks a worker thread it waits for.
Each writes ``<cwd>/tool-started.txt`` when it starts, so a test knows when to strike.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from piko import TextContent
from piko import ToolResult

PARAMETERS = {"type": "object", "properties": {}}


def _started(ctx: Any, name: str) -> None:
    Path(ctx.cwd, "tool-started.txt").write_text(name)


def activate(pi: Any) -> None:
    async def stubborn(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
        _started(ctx, "stubborn")
        await asyncio.shield(asyncio.sleep(1000))
        return ToolResult(content=[TextContent(text="finally")])

    async def very_stubborn(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
        _started(ctx, "very_stubborn")
        deadline = time.monotonic() + 1000
        while time.monotonic() < deadline:
            try:
                await asyncio.sleep(1000)
            except asyncio.CancelledError:
                continue
        return ToolResult(content=[TextContent(text="finally")])

    async def blocking(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any) -> Any:
        _started(ctx, "blocking")
        await asyncio.shield(asyncio.to_thread(time.sleep, 1000))
        return ToolResult(content=[TextContent(text="finally")])

    for name, execute in (("stubborn", stubborn), ("very_stubborn", very_stubborn), ("blocking", blocking)):
        pi.register_tool(
            name=name, label=name, description="Ignores aborts", parameters=PARAMETERS, execute=execute
        )
