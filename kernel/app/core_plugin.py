"""The kernel's own plugin (essential): the ``pi plugins`` subcommand."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl


@hookimpl
def piko_register_cli_commands(register: Any) -> None:
    register(
        "plugins",
        "piko.app.plugins_command:plugins_command",
        help="List plugins, where they come from, and what is blocked",
        reports_diagnostics=True,  # its table ends with them
    )
