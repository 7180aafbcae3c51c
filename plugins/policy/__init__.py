"""Plugin ``policy.cli``: ``pi policy show``, the effective managed policy and where each rule comes from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piko import hookimpl

if TYPE_CHECKING:  # annotations only: start-up does not import the Protocols
    from piko import RegisterCliCommand


@hookimpl
def piko_register_cli_commands(register: RegisterCliCommand) -> None:
    register(
        "policy",
        "piko.plugins.policy.show:policy_command",
        help="Show the managed policy in force and the file each rule comes from",
    )
