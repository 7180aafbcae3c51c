"""``pi policy show [--json]``: every rule of the managed policy in force, with its file."""

from __future__ import annotations

import json
from typing import Any

import click

from piko.config.policy import SECTIONS
from piko.config.policy import policy_paths


def policy_rules(policy: Any) -> dict[str, Any]:
    """The effective policy as data: files, rules by section (each with its file), forced settings."""
    from piko.config.policy import _ATTRS

    sections: dict[str, Any] = {}
    for section in SECTIONS:
        rule = getattr(policy, _ATTRS[section])
        entries = [
            {"rule": "allow", "patterns": patterns, "file": source}
            for patterns, source in zip(rule.allow, rule.allow_from, strict=False)
        ]
        entries += [
            {"rule": "block", "patterns": [p], "file": rule.block_from.get(p, "policy")} for p in rule.block
        ]
        entries += [
            {"rule": "require", "patterns": [n], "file": rule.require_from.get(n, "policy")}
            for n in rule.require
        ]
        if entries:
            sections[section] = entries
    return {
        "files": list(policy.paths),
        "searched": [str(p) for p in policy_paths()],
        "errors": list(policy.errors),
        "rules": sections,
        "settings": [
            {"key": key, "value": value, "file": policy.settings_from.get(key, "policy")}
            for key, value in policy.settings.items()
        ],
        "allowProjectCode": policy.allow_project_code,
        "allowOverrides": policy.allow_overrides,
    }


@click.group("policy", help="The managed policy a company sets for piko (see docs/policy.md).")
def policy_command() -> None:
    pass


@policy_command.command("show", help="Print the policy in force and the file each rule comes from.")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON")
@click.pass_obj
def show_command(app: Any, as_json: bool) -> int:
    data = policy_rules(app.policy)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return 0
    if not data["files"]:
        click.echo("No managed policy: nothing is restricted.")
        click.echo("Looked for: " + ", ".join(data["searched"]))
        return 0
    click.echo("Managed policy from: " + ", ".join(data["files"]))
    for error in data["errors"]:
        click.secho(
            f"  unusable: {error} (third-party plugins, package sources and project code are off)", fg="red"
        )
    for section, entries in data["rules"].items():
        for entry in entries:
            click.echo(f"  {section}.{entry['rule']:<6} {', '.join(entry['patterns']):<40} {entry['file']}")
    for forced in data["settings"]:
        click.echo(f"  settings.{forced['key']:<12} = {json.dumps(forced['value']):<28} {forced['file']}")
    if not data["allowProjectCode"]:
        click.echo("  allowProjectCode: false (no project is trusted)")
    if not data["allowOverrides"]:
        click.echo(
            "  allowOverrides: false (no plugin may replace another's tool, provider, mode or command)"
        )
    return 0
