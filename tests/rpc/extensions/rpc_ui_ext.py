"""Test extension for RPC mode: an aborted dialog, the fire-and-forget ``ctx.ui`` methods, and other
edge cases (the dialogs are ``tests/support/dialogs_extension.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from piko.lib.abort import AbortController


def activate(pi: Any) -> None:
    async def abortable(args: str, ctx: Any) -> None:
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.15, controller.abort)
        answer = await ctx.ui.confirm("Abort me", "soon aborted", signal=controller.signal)
        ctx.ui.notify(f"aborted with {answer!r}")

    async def fire(args: str, ctx: Any) -> None:
        ui = ctx.ui
        ui.set_status("build", "compiling")
        ui.set_status("build")
        ui.set_widget("todo", ["first", "second"], placement="belowEditor")
        ui.set_widget("todo")
        ui.set_widget("fancy", lambda tui, theme: None)  # a component factory: not for RPC
        ui.set_title("piko - test")
        ui.set_editor_text("draft text")
        ui.set_working_message("working")
        ui.set_footer(None)
        ui.set_header(None)
        ui.set_editor_component(None)
        custom = await ui.custom(object())
        ui.notify(f"custom={custom!r} editor={ui.get_editor_text()!r} has_ui={ctx.has_ui!r}", "info")

    async def boom(args: str, ctx: Any) -> None:
        raise RuntimeError("the command blew up")

    def bye(args: str, ctx: Any) -> None:
        ctx.shutdown()

    def chatty(args: str, ctx: Any) -> None:
        print("this goes to stderr, never to the protocol")

    pi.register_command("abortable", description="A confirm that is aborted", handler=abortable)
    pi.register_command("fire", description="Fire-and-forget UI calls", handler=fire)
    pi.register_command("boom", description="Fails", handler=boom)
    pi.register_command("bye", description="Shuts down", handler=bye)
    pi.register_command("chatty", description="Prints", handler=chatty)

    async def guard(event: Any, ctx: Any) -> Any:
        if event.text == "guarded":
            allowed = await ctx.ui.confirm("Send it?", "The prompt is guarded")
            if not allowed:
                return {"action": "handled"}
        return None

    pi.on("input", guard)

    def broken(event: Any, ctx: Any) -> None:
        if event.text == "break things":
            raise ValueError("input handler failed")

    pi.on("input", broken)

    def on_shutdown(event: Any, ctx: Any) -> None:
        with open(Path(ctx.cwd) / "shutdown.txt", "a", encoding="utf-8") as fh:
            fh.write(f"{event.reason}\n")

    pi.on("session_shutdown", on_shutdown)
