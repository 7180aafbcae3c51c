"""Registers the interactive mode (``pi`` in a terminal); the mode itself is imported only when it runs."""

from __future__ import annotations

from typing import Any

from piko import hookimpl


@hookimpl
def piko_register_modes(register: Any) -> None:
    register(
        name="interactive",
        run="piko.plugins.modes.interactive.interactive:run_interactive",
        description="The terminal UI: editor, streamed answers, slash commands (the default in a terminal)",
        interactive=True,
    )
