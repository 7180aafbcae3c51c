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


def _type_checking_names() -> set[str]:
    tree = ast.parse(inspect.getsource(piko))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in ast.walk(node):
                if isinstance(statement, ast.ImportFrom):
                    names.update(alias.asname or alias.name for alias in statement.names)
    return names


def test_every_public_name_resolves() -> None:
    for name in piko.__all__:
        assert getattr(piko, name) is not None, name


def test_type_checkers_see_every_public_name() -> None:
    public = set(piko.__all__) - {"__version__"}
    assert public == _type_checking_names()


def test_all_lists_exactly_what_loads_on_first_use() -> None:
    # ``__all__`` is written out so that mypy --strict exports the names; it must match the table
    assert set(piko.__all__) == {"__version__", *piko._EXPORTS}
    assert len(piko.__all__) == len(set(piko.__all__))


def test_a_program_using_the_public_names_passes_mypy_strict(tmp_path: Path) -> None:
    """Under ``--strict`` a name imported only for type checkers is exported only when ``__all__``
    lists it; a program of a plugin author or SDK user must see every public name."""
    program = tmp_path / "uses_piko.py"
    names = sorted(set(piko.__all__) - {"__version__"})
    program.write_text(
        "import piko\n\n" + "\n".join(f"print(piko.{name})" for name in names) + "\n", encoding="utf-8"
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
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_says_it_is_typed() -> None:
    from importlib.resources import files

    assert files("piko").joinpath("py.typed").is_file()
