"""``import piko``'s public names: each resolves at run time, and type checkers see each one.

The names load on first use (start-up stays cheap), so a module ``__getattr__`` serves them at
run time; the ``if TYPE_CHECKING:`` imports of ``kernel/__init__.py`` are what type checkers
read. A name in one list and not the other is a bug either way.
"""

from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
from pathlib import Path

import piko

ROOT = Path(__file__).resolve().parents[2]


def _type_checking_statements() -> list[ast.stmt]:
    tree = ast.parse(inspect.getsource(piko))
    return [
        statement
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for statement in node.body
    ]


def _type_checking_names() -> set[str]:
    """The public names the ``if TYPE_CHECKING:`` block binds (imports from piko, and aliases)."""
    names: set[str] = set()
    for statement in _type_checking_statements():
        if isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith("piko"):
            names.update(alias.asname or alias.name for alias in statement.names)
        elif isinstance(statement, ast.Assign):
            names.update(target.id for target in statement.targets if isinstance(target, ast.Name))
    return {name for name in names if not name.startswith("_")}


def test_every_public_name_resolves() -> None:
    for name in piko.__all__:
        assert getattr(piko, name) is not None, name


def test_type_checkers_see_every_public_name() -> None:
    public = set(piko.__all__) - {"__version__"}
    assert public == _type_checking_names()


def test_each_public_import_is_written_as_a_re_export() -> None:
    # under mypy --strict ``from m import name`` exports nothing; ``from m import name as name`` does
    for statement in _type_checking_statements():
        if isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith("piko"):
            for alias in statement.names:
                assert alias.asname == alias.name or (alias.asname or "").startswith("_"), alias.name
    assert (
        ast.parse("from piko.version import __version__ as __version__").body[0].names[0].asname
    )  # the form
    assert "from piko.version import __version__ as __version__" in inspect.getsource(piko)


def test_a_program_using_the_public_names_passes_mypy_strict(tmp_path: Path) -> None:
    """Under ``--strict`` a name imported only for type checkers is exported only in the
    re-export form; a program of a plugin author or SDK user must see every public name, and a
    misspelt one is an error (no module ``__getattr__`` that type checkers would see)."""
    program = tmp_path / "uses_piko.py"
    names = sorted(piko.__all__)
    program.write_text(
        "import piko\n\n"
        + "\n".join(f"print(piko.{name})" for name in names)
        + "\nprint(piko.NoSuchName)  # the one error\n",
        encoding="utf-8",
    )
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "typecheck.py"), "--version"], check=True, capture_output=True
    )
    tree = ROOT / ".typecheck"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-incremental",
            str(program),
        ],
        cwd=tree,
        env={**os.environ, "MYPYPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and 'has no attribute "NoSuchName"' in errors[0], done.stdout + done.stderr


def test_the_package_says_it_is_typed() -> None:
    from importlib.resources import files

    assert files("piko").joinpath("py.typed").is_file()
