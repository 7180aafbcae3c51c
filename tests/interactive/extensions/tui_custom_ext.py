"""Test extension for TUI customisation: an autocomplete provider, terminal input, long widgets,
the working indicator, a wrapping editor component and ``open_terminal``, written from the reference."""

from __future__ import annotations

import re
from typing import Any

ISSUES = [
    {"value": "#2983", "label": "#2983", "description": "Extension API for autocomplete"},
    {"value": "#2753", "label": "#2753", "description": "Reload stale resource settings"},
]


def activate(pi: Any) -> None:
    state: dict[str, Any] = {}

    def issues(current: Any) -> dict[str, Any]:
        async def get_suggestions(lines: list[str], line: int, col: int, options: Any) -> Any:
            match = re.search(r"(?:^|[ \t])#([^\s#]*)$", lines[line][:col])
            if not match:
                return current.get_suggestions(lines, line, col, options)
            typed = match.group(1)
            return {"prefix": f"#{typed}", "items": [i for i in ISSUES if i["value"][1:].startswith(typed)]}

        return {
            "triggerCharacters": ["#"],
            "getSuggestions": get_suggestions,
            "applyCompletion": lambda lines, line, col, item, prefix: current.apply_completion(
                lines, line, col, item, prefix
            ),
        }

    def on_start(_event: Any, ctx: Any) -> None:
        ctx.ui.add_autocomplete_provider(issues)

    pi.on("session_start", on_start)

    def keys_on(_args: str, ctx: Any) -> None:
        def listener(data: str) -> Any:
            if data == "%":
                return {"consume": True}
            if data == "~":
                return {"data": "tilde"}
            return None

        state["unsubscribe"] = ctx.ui.on_terminal_input(listener)
        ctx.ui.notify("listening to keys")

    def keys_off(_args: str, ctx: Any) -> None:
        state.pop("unsubscribe")()
        ctx.ui.notify("not listening")

    def long_widget(args: str, ctx: Any) -> None:
        ctx.ui.set_widget("long", [f"row {i:02d}" for i in range(int(args or 15))])

    def indicator(args: str, ctx: Any) -> None:
        if args == "off":
            ctx.ui.set_working_indicator()
        elif args == "none":
            ctx.ui.set_working_indicator({"frames": []})
        else:
            ctx.ui.set_working_indicator({"frames": ["<*>", "<+>"], "intervalMs": 120})
        ctx.ui.notify(f"indicator {args or 'on'}")

    def framed(_args: str, ctx: Any) -> None:
        from prompt_toolkit.layout import HSplit
        from prompt_toolkit.layout import Window
        from prompt_toolkit.layout.controls import BufferControl

        ctx.ui.set_editor_component(
            lambda buffer, theme: HSplit(
                [
                    Window(char="=", height=1),
                    Window(BufferControl(buffer), height=1),
                    Window(char="=", height=1),
                ]
            )
        )

    def wrap(_args: str, ctx: Any) -> None:
        from prompt_toolkit.layout import HSplit
        from prompt_toolkit.layout import Window
        from prompt_toolkit.layout.controls import FormattedTextControl

        previous = ctx.ui.get_editor_component()

        def factory(buffer: Any, theme: Any) -> Any:
            inner = ctx.ui.get_editor_component()  # inside the factory: the one it replaces
            label = "wrapping the previous editor" if inner is previous else "lost the previous editor"
            return HSplit([Window(FormattedTextControl(label), height=1), inner(buffer, theme)])

        ctx.ui.set_editor_component(factory)

    async def launch(args: str, ctx: Any) -> None:
        request = {
            "multiplexer": "tmux",
            "placement": "window",
            "command": ["sh", "-c", f"echo launched from piko > {args}"],
            "cwd": ctx.cwd,
            "focus": False,
        }
        result = await ctx.ui.open_terminal(request)
        ctx.ui.notify(f"launched {result['id']}")

    async def launch_bad(args: str, ctx: Any) -> None:
        request = {"multiplexer": args, "placement": "pane", "command": ["true"], "cwd": ctx.cwd}
        try:
            await ctx.ui.open_terminal(request)
        except Exception as exc:
            ctx.ui.notify(f"refused {type(exc).__name__}: {exc}")

    def render_call(args: Any, options: Any, theme: Any) -> Any:  # omp's signature
        return options.fg("accent", f"OMP CALL {args.get('text', '')}")

    def render_result(result: Any, options: Any, theme: Any, args: Any) -> Any:
        return theme.fg("muted", f"OMP RESULT for {args.get('text')} expanded={options['expanded']}")

    pi.register_tool(
        {
            "name": "echo_omp",
            "label": "Echo",
            "description": "Echo the text",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "execute": lambda _id, params, _signal, _update, _ctx: {
                "content": [{"type": "text", "text": params.get("text", "")}]
            },
            "renderCall": render_call,
            "renderResult": render_result,
        }
    )
    pi.register_assistant_thinking_renderer(
        lambda context, theme: theme.fg("dim", f"thinking chars: {len(context.text)}")
    )
    pi.register_assistant_thinking_renderer(
        lambda context, theme: f"block {context['contentIndex']} / thinking {context.thinking_index}"
    )
    pi.register_assistant_thinking_renderer(lambda context, theme: 1 / 0)  # a failing one is left out

    def card(entry: Any, options: Any, theme: Any) -> Any:
        data = entry.data
        extra = " (expanded)" if options["expanded"] else ""
        return theme.bold(f"CARD {data['title']}: {data['count']}{extra}")

    pi.register_entry_renderer("status-card", card)
    pi.register_command(
        "card",
        {
            "description": "Append a status card",
            "handler": lambda args, ctx: pi.append_entry("status-card", {"title": args, "count": 17}),
        },
    )
    pi.register_command(
        "plain-entry",
        {"description": "An entry nobody draws", "handler": lambda args, ctx: pi.append_entry("unseen", {})},
    )
    pi.register_command("keys-on", {"description": "Listen to raw input", "handler": keys_on})
    pi.register_command("keys-off", {"description": "Stop listening", "handler": keys_off})
    pi.register_command("long-widget", {"description": "A widget of many lines", "handler": long_widget})
    pi.register_command("indicator", {"description": "A custom working indicator", "handler": indicator})
    pi.register_command("framed", {"description": "A framed editor", "handler": framed})
    pi.register_command("wrap", {"description": "Wrap the current editor", "handler": wrap})
    pi.register_command("launch", {"description": "Open a tmux window", "handler": launch})
    pi.register_command("launch-bad", {"description": "Open an unsupported pane", "handler": launch_bad})
