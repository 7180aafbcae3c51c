"""An extension calling every ``ctx.ui`` method of the extension reference, in any mode (``/uiwalk``).

Each call's outcome is one JSON line in ``$PIKO_TEST_LOG``: ``{"method", "ok", "error"}``. Dialogs
are given a 50 ms ``timeout`` so that a mode which shows them ends them by itself.
"""

import json
import os

# The reference's ExtensionUIContext methods (extensions.md "UI integration points", pi 1.6's
# ctx.ui), snake_case, with harmless arguments.
CALLS = [
    ("select", ("Pick", ["a", "b"]), {"timeout": 50}),
    ("confirm", ("Sure?", "Really?"), {"timeout": 50}),
    ("input", ("Name", "e.g. Ada"), {"timeout": 50}),
    ("editor", ("Edit", "text"), {"timeout": 50}),
    ("custom", (lambda done: None,), {"timeout": 50}),
    ("notify", ("walking", "info"), {}),
    ("set_status", ("walk", "on"), {}),
    ("set_widget", ("walk", ["line 1", "line 2"]), {}),
    ("set_footer", (None,), {}),
    ("set_header", (None,), {}),
    ("set_title", ("walk",), {}),
    ("set_working_message", ("walking",), {}),
    ("set_working_visible", (True,), {}),
    ("set_working_indicator", (None,), {}),
    ("set_hidden_thinking_label", ("hmm",), {}),
    ("set_editor_text", ("draft",), {}),
    ("get_editor_text", (), {}),
    ("paste_to_editor", ("pasted",), {}),
    ("set_editor_component", (None,), {}),
    ("get_editor_component", (), {}),
    ("add_autocomplete_provider", (lambda current: current,), {}),
    ("on_terminal_input", (lambda data: None,), {}),
    ("get_tools_expanded", (), {}),
    ("set_tools_expanded", (False,), {}),
    ("get_all_themes", (), {}),
    ("get_theme", ("dark",), {}),
    ("set_theme", ("dark",), {}),
    ("set_widget", ("walk", None), {}),
    ("set_status", ("walk", None), {}),
]
ATTRIBUTES = ["theme", "has_ui", "supports_editor"]


def _record(row):
    with open(os.environ["PIKO_TEST_LOG"], "a") as fh:
        fh.write(json.dumps(row) + "\n")


def activate(pi):
    async def walk(args, ctx):
        for name, call_args, options in CALLS:
            try:
                result = getattr(ctx.ui, name)(*call_args, **options)
                if hasattr(result, "__await__"):
                    await result
                _record({"method": name, "ok": True})
            except Exception as exc:  # the test reports which method failed and how
                _record({"method": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
        for name in ATTRIBUTES:
            try:
                getattr(ctx.ui, name)
                _record({"method": name, "ok": True})
            except Exception as exc:
                _record({"method": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
        _record({"mode": ctx.mode, "has_ui": ctx.has_ui})
        ctx.ui.notify("uiwalk done", "info")

    pi.register_command("uiwalk", {"description": "Call every ctx.ui method", "handler": walk})
