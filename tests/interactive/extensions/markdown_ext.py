"""Test extension for pi 1.6's markdown transformers: arrows in answers, shouted thinking, user text."""

from __future__ import annotations

from typing import Any


def activate(pi: Any) -> None:
    pi.register_markdown_transformer(lambda markdown, context: "replaced before use")  # replaced below
    seen: list[str] = []

    def arrows(markdown: str, context: Any) -> str:
        seen.append(context["messageType"])
        if context.message_type == "assistant-thinking":
            return markdown.upper()
        if context.message_type == "user":
            return markdown.replace(":warning:", "[WARN]")
        return markdown.replace("-->", "→")

    surfaces = ["user", "assistant", "assistant-thinking", "custom", "summary"]
    pi.register_markdown_transformer(arrows, {"messageTypes": surfaces})
    pi.register_command(
        "say",
        {
            "description": "A custom message",
            "handler": lambda args, ctx: pi.send_message(
                {"customType": "note", "content": args, "display": True}
            ),
        },
    )
    pi.register_command(
        "seen",
        {
            "description": "Surfaces seen",
            "handler": lambda args, ctx: ctx.ui.notify(f"seen {sorted(set(seen))}"),
        },
    )
