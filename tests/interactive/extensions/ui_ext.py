"""Test extension for the interactive mode: widgets, custom components, a shortcut, renderers, a tool
(the dialogs are ``tests/support/dialogs_extension.py``)."""

from __future__ import annotations

from typing import Any

from rich.text import Text


def activate(pi: Any) -> None:
    def decorate(args: str, ctx: Any) -> None:
        ctx.ui.set_status("ext", "ext-status-on")
        ctx.ui.set_widget("w", ["widget line one", "widget line two"])
        ctx.ui.set_widget("b", ["below the editor"], placement="belowEditor")

    def undecorate(args: str, ctx: Any) -> None:
        ctx.ui.set_status("ext", None)
        ctx.ui.set_widget("w", None)
        ctx.ui.set_widget("b", None)

    def note(args: str, ctx: Any) -> None:
        pi.send_message({"custom_type": "ext-note", "content": args or "noted", "display": True})

    def editor_text(args: str, ctx: Any) -> None:
        ctx.ui.set_editor_text("text from the extension")

    def component(label: str) -> Any:
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.layout import Window
        from prompt_toolkit.layout.controls import FormattedTextControl

        def factory(done: Any) -> Any:
            keys = KeyBindings()
            keys.add("q")(lambda event: done(f"{label} closed"))
            return Window(
                FormattedTextControl(f"{label}: press q", focusable=True, key_bindings=keys), height=3
            )

        return factory

    async def panel(args: str, ctx: Any) -> None:
        ctx.ui.notify(str(await ctx.ui.custom(component("custom panel"))))

    async def overlay(args: str, ctx: Any) -> None:
        ctx.ui.notify(str(await ctx.ui.custom(component("floating overlay"), overlay=True)))

    def footer(args: str, ctx: Any) -> None:
        ctx.ui.set_footer(None if args == "off" else (lambda width: [f"custom footer {width}"]))

    def framed_editor(args: str, ctx: Any) -> None:
        from prompt_toolkit.layout import HSplit
        from prompt_toolkit.layout import Window
        from prompt_toolkit.layout.controls import BufferControl

        def factory(buffer: Any, theme: Any) -> Any:
            return HSplit(
                [
                    Window(char="=", height=1),
                    Window(BufferControl(buffer), height=1),
                    Window(char="=", height=1),
                ]
            )

        ctx.ui.set_editor_component(None if args == "off" else factory)

    pi.register_command("panel", description="A custom component", handler=panel)
    pi.register_command("overlay", description="A custom overlay", handler=overlay)
    pi.register_command("footer", description="A custom footer", handler=footer)
    pi.register_command("framed", description="A custom editor", handler=framed_editor)
    pi.register_command("decorate", description="Status and widgets", handler=decorate)
    pi.register_command("undecorate", description="Remove status and widgets", handler=undecorate)
    pi.register_command("note", description="Send a custom message", handler=note)
    pi.register_command("fill", description="Put text in the editor", handler=editor_text)
    pi.register_command(
        "colour",
        description="Pick a colour",
        handler=lambda args, ctx: ctx.ui.notify(f"colour {args}"),
        get_argument_completions=lambda prefix: [c for c in ("red", "green", "blue") if c.startswith(prefix)],
    )
    pi.register_shortcut("alt+x", description="Say hi", handler=lambda ctx: ctx.ui.notify("shortcut fired"))
    pi.register_shortcut("ctrl+t", description="Reserved", handler=lambda ctx: ctx.ui.notify("must not fire"))
    pi.register_message_renderer(
        "ext-note", lambda message, options, theme: Text(f"NOTE>> {message.content}", style="bold")
    )
    pi.register_tool(
        name="shout",
        label="Shout",
        description="Shout the text",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        execute=lambda tool_call_id, params, signal, on_update, ctx: {
            "content": [{"type": "text", "text": params.get("text", "").upper()}]
        },
        render_call=lambda args, theme: f"SHOUTING {args.get('text', '')}",
        render_result=lambda result, options, theme: Text(
            "loud: "
            + "".join(
                b.get("text", "") if isinstance(b, dict) else getattr(b, "text", "")
                for b in result["content"]
            )
        ),
    )
