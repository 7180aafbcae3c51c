"""``pi plugins new NAME [--kind tool|provider|mode|extension]``: write a ready plugin package.

The package is made from the templates in ``kernel/app/templates/`` (``common/`` for every kind,
then the kind's folder): a ``pyproject.toml`` with the ``piko`` entry point, the plugin module, a
test using piko.testing's fixtures and a README. ``__init__.py.tmpl`` becomes the package's
``__init__.py``, ``test.py.tmpl`` the test, any other ``X.py.tmpl`` the module ``X.py`` of the
package. Placeholders are ``$name`` (as given), ``$module`` (a Python name), ``$tool``, ``$model``,
``$env`` (the prefix of the package's environment variables), ``$title`` and ``$description``.
"""

from __future__ import annotations

import re
import string
from importlib import resources
from pathlib import Path

import click

KINDS: dict[str, str] = {
    "tool": "a piko plugin adding a tool the model can call",
    "provider": "a piko provider for a company gateway speaking OpenAI's chat-completions API",
    "mode": "a piko run mode",
    "extension": "a piko extension in pi's activate(pi) style: a tool-call guard and a command",
}

# What each kind's README says about its files, and how to try the plugin by hand.
_FILES: dict[str, list[tuple[str, str]]] = {
    "tool": [
        ("$module/__init__.py", "registers the `$tool` tool (light: piko imports it at start-up)"),
        ("$module/tool.py", "the tool's `execute`, imported the first time the model calls it"),
    ],
    "provider": [("$module/__init__.py", "registers the `$name` provider and its model `$model`")],
    "mode": [
        ("$module/__init__.py", "registers the `$name` mode"),
        ("$module/mode.py", "the mode's `run(app)`, imported when the mode runs"),
    ],
    "extension": [("$module/__init__.py", "`activate(pi)`: a guard on `tool_call` and the `/$name` command")],
}
_TRY: dict[str, str] = {
    "tool": 'pi -p "Reverse the word stressed with the $tool tool"',
    "provider": '${env}_BASE_URL=https://gateway/v1 ${env}_API_KEY=... pi --provider $name -p "Hello"',
    "mode": 'pi --mode $name "Hello"',
    "extension": "pi      # then /$name",
}

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")


class TemplateError(click.ClickException):
    """The package cannot be written (a bad name, a folder in the way); nothing was written."""


def placeholders(name: str, kind: str) -> dict[str, str]:
    """The values of the template placeholders for a plugin ``name`` of ``kind``."""
    if not _NAME.match(name):
        raise TemplateError(
            f"plugin name '{name}' must start with a letter and hold only letters, digits, '.', '_' and '-'"
        )
    module = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    words = [word for word in re.split(r"[^A-Za-z0-9]+", name) if word]
    values = {
        "name": name,
        "module": module,
        "tool": module,
        "model": f"{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}-large",
        "env": module.upper(),
        "title": " ".join(word[:1].upper() + word[1:] for word in words),
        "description": f"{name}: {KINDS[kind]}",
        "kind": kind,
    }
    rows = [f"| `{path}` | {text} |" for path, text in _FILES[kind]]
    rows.append(f"| `tests/test_{module}.py` | its tests, with piko.testing's fixtures |")
    values["files"] = string.Template("\n".join(rows) + "\n").substitute(values)
    values["try_it"] = string.Template(_TRY[kind]).substitute(values)
    return values


def render(name: str, kind: str) -> dict[str, str]:
    """The files of the package, relative path -> text (nothing is written)."""
    if kind not in KINDS:
        raise TemplateError(f"unknown kind '{kind}' (choose one of {', '.join(KINDS)})")
    values = placeholders(name, kind)
    module = values["module"]
    files: dict[str, str] = {}
    root = resources.files("piko.app") / "templates"
    for folder in ("common", kind):
        for template in sorted((root / folder).iterdir(), key=lambda t: t.name):
            if not template.name.endswith(".tmpl"):
                continue
            stem = template.name.removesuffix(".tmpl")
            if folder == "common":
                target = stem
            elif stem == "test.py":
                target = f"tests/test_{module}.py"
            else:
                target = f"{module}/{stem}"
            files[target] = string.Template(template.read_text(encoding="utf-8")).substitute(values)
    return files


def write_package(name: str, kind: str, directory: Path) -> list[Path]:
    """Write the package into ``directory`` (which must not exist or be empty); the files written."""
    files = render(name, kind)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise TemplateError(f"{directory} already exists and is not empty; nothing was written")
    written: list[Path] = []
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


@click.command("new", help="Write a ready plugin package: pyproject, plugin module, a test, a README.")
@click.argument("name")
@click.option(
    "--kind", type=click.Choice(list(KINDS)), default="tool", show_default=True, help="What the plugin adds"
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write it (default: ./NAME)",
)
def new_command(name: str, kind: str, directory: Path | None) -> None:
    target = directory if directory is not None else Path(name)
    written = write_package(name, kind, target)
    values = placeholders(name, kind)
    click.echo(f"Created {target}/ ({KINDS[kind]}):")
    for path in written:
        click.echo(f"  {path}")
    click.echo("")
    click.echo("Next:")
    click.echo(f"  cd {target}")
    click.echo("  pip install -e '.[test]'   # into the venv where piko is installed")
    click.echo("  pytest                     # its tests use piko.testing's fixtures")
    click.echo(f"  pi plugins                 # {name} shows up, active")
    click.echo(f"  {values['try_it']}")
