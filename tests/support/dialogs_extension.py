"""Test extension: one command per ``ctx.ui`` dialog, driven by the interactive and the RPC tests alike.

``/pick`` (select), ``/sure`` (confirm), ``/ask`` and ``/secret`` (input, the second hidden),
``/edit-it`` (editor) and ``/quick [ms]`` (a select that times out, after 1500 ms unless told).
Each notifies what the dialog gave back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PATH = Path(__file__).resolve()
"""This file, for ``-e``."""


def activate(pi: Any) -> None:
    async def pick(args: str, ctx: Any) -> None:
        choice = await ctx.ui.select("Pick one", ["alpha", "beta", "gamma"])
        ctx.ui.notify(f"picked {choice!r}", "info")

    async def sure(args: str, ctx: Any) -> None:
        answer = await ctx.ui.confirm("Sure?", "Really do it?")
        ctx.ui.notify(f"confirmed {answer!r}", "warning")

    async def ask(args: str, ctx: Any) -> None:
        name = await ctx.ui.input("Your name", "e.g. Ada")
        ctx.ui.notify(f"name {name!r}")

    async def secret(args: str, ctx: Any) -> None:
        value = await ctx.ui.input("Your token", password=True)
        ctx.ui.notify(f"token has {len(value or '')} characters")

    async def edit(args: str, ctx: Any) -> None:
        text = await ctx.ui.editor("Edit the text", "prefilled")
        ctx.ui.notify(f"edited {text!r}")

    async def quick(args: str, ctx: Any) -> None:
        choice = await ctx.ui.select("Quick!", ["a", "b"], timeout=int(args or 1500))
        ctx.ui.notify(f"timed out with {choice!r}", "error")

    pi.register_command("pick", description="Pick from a list", handler=pick)
    pi.register_command("sure", description="Confirm something", handler=sure)
    pi.register_command("ask", description="Ask for a name", handler=ask)
    pi.register_command("secret", description="Ask for a token, hidden", handler=secret)
    pi.register_command("edit-it", description="Edit a text", handler=edit)
    pi.register_command("quick", description="A dialog that times out", handler=quick)
