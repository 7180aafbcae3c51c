"""``pi audit verify FILE``: walk the hash chain; exit 0 when intact, 1 naming the first broken line."""

from __future__ import annotations

import json
from typing import Any

import click

from piko.plugins.audit.log import line_hash


def first_break(path: str) -> tuple[int, str] | None:
    """``(line number, what is wrong)`` of the first line that breaks the chain, or ``None``."""
    prev = ""
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            try:
                line = json.loads(text)
            except ValueError:
                return number, "not a JSON object"
            if not isinstance(line, dict) or "hash" not in line:
                return number, "no hash"
            if line.get("prev") != prev:
                return number, "does not follow the line before it (a line was removed, added or reordered)"
            if line_hash(line) != line["hash"]:
                return number, "its content does not match its hash (the line was edited)"
            prev = line["hash"]
    return None


@click.group("audit", help="The audit log piko writes (see docs/enterprise.md).")
def audit_command() -> None:
    pass


@audit_command.command("verify", help="Check that no line of an audit log was removed or edited.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.pass_obj
def verify_command(app: Any, file: str) -> int:
    broken = first_break(file)
    if broken is None:
        with open(file, encoding="utf-8") as handle:
            count = sum(1 for _ in handle)
        click.echo(f"{file}: intact ({count} lines)")
        return 0
    number, reason = broken
    click.echo(f"{file}: line {number} {reason}", err=True)
    return 1
