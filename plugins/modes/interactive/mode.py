"""Registers the interactive mode (``pi`` in a terminal) and reserves the keys it binds itself;
the mode itself is imported only when it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piko import hookimpl
from piko import registers

if TYPE_CHECKING:  # annotations only: start-up does not import the Protocols
    from piko import RegisterShortcut

# The keys the mode binds for itself, which extensions may not take (pi reserves the same).
RESERVED_KEYS: dict[str, str] = {
    "ctrl+c": "Clear the editor, or quit when it is empty",
    "ctrl+d": "Quit when the editor is empty",
    "ctrl+z": "Suspend to the shell",
    "ctrl+k": "Delete to the end of the line",
    "ctrl+p": "Next model",
    "shift+ctrl+p": "Previous model",
    "ctrl+shift+p": "Previous model",
    "ctrl+l": "Choose a model",
    "ctrl+o": "Expand or collapse tool output",
    "ctrl+t": "Show or hide thinking",
    "ctrl+g": "Edit the message in an external editor",
    "ctrl+q": "Quit",
    "alt+m": "Choose a model (alternative key)",
    "shift+tab": "Next thinking level",
    "alt+enter": "Queue a follow-up message",
    "escape": "Interrupt the agent",
    "enter": "Send the message",
}


piko_register_modes = registers(
    name="interactive",
    run="piko.plugins.modes.interactive.interactive:run_interactive",
    description="The terminal UI: editor, streamed answers, slash commands (the default in a terminal)",
    interactive=True,
)

piko_register_flags = registers(
    name="tui-mode",
    description="Interactive terminal UI: fullscreen or regular (overrides the tuiMode setting)",
    type="string",
    value_name="<mode>",
)


@hookimpl(tryfirst=True)
def piko_register_shortcuts(register: RegisterShortcut) -> None:
    for key, description in RESERVED_KEYS.items():
        register(key=key, description=description, reserved=True)
