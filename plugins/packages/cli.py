"""Plugin ``packages.cli``: ``pi install``, ``remove``/``uninstall``, ``update``, ``list``, ``config``, ``trust``, ``untrust``."""

from __future__ import annotations

from typing import Any

from piko.platform.markers import hookimpl

_COMMANDS = "piko.plugins.packages.commands"


@hookimpl
def piko_register_cli_commands(register: Any) -> None:
    register(
        "install",
        f"{_COMMANDS}:install_command",
        help="Install a package (pip:, git:, path:, npm:) and add it to settings",
    )
    register("remove", f"{_COMMANDS}:remove_command", help="Remove a package and its source from settings")
    register("uninstall", f"{_COMMANDS}:uninstall_command", help="Alias for remove")
    register("update", f"{_COMMANDS}:update_command", help="Update installed packages that are not pinned")
    register(
        "list", f"{_COMMANDS}:list_command", help="List installed packages from user and project settings"
    )
    register(
        "config",
        f"{_COMMANDS}:config_command",
        help="Enable or disable installed plugins and package resources",
    )
    register(
        "trust",
        f"{_COMMANDS}:trust_command",
        help="Trust a project folder: its .pi settings, resources and code load",
    )
    register("untrust", f"{_COMMANDS}:untrust_command", help="Stop trusting a project folder")
