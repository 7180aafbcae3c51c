"""``import piko``'s public names: each resolves at run time, and type checkers see each one.

The names load on first use (start-up stays cheap), so a module ``__getattr__`` serves them at
run time; the ``if TYPE_CHECKING:`` imports of ``kernel/__init__.py`` are what type checkers
read. A name in one list and not the other is a bug either way.
"""

from __future__ import annotations

import ast
import inspect

import piko


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


def test_the_package_says_it_is_typed() -> None:
    from importlib.resources import files

    assert files("piko").joinpath("py.typed").is_file()
