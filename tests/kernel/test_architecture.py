"""The import rules of docs/architecture.md, checked over every module (also imports inside functions).

1. The kernel's subpackages import downwards only: ``lib`` < ``data`` < ``config`` < ``platform``
   < ``sessions`` / ``models`` / ``resources`` / ``extensions`` < ``engine`` < ``app`` < ``testing``
   (the four in the middle do not import each other). Imports under ``if TYPE_CHECKING:`` are exempt: they only name
   types for readers and type checkers (the hook specs name ``App``) and never run.
2. The kernel never imports ``piko.plugins``.
3. A plugin imports the kernel and plugins of its own kind only (``plugins/tools`` never imports
   ``piko.plugins.providers``): plugins of different kinds talk through hooks and registries.
4. The sizes the redesign set: the plugin platform (``kernel/platform``, the microkernel) under
   4,000 lines, the ``AgentSession`` class under 400; what grows past them is a part of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "kernel"
PLUGINS = ROOT / "plugins"

LAYERS: dict[str, int] = {
    "lib": 0,
    "data": 1,
    "config": 2,
    "platform": 3,
    "sessions": 4,
    "models": 4,
    "resources": 4,
    "extensions": 4,
    "engine": 5,
    "app": 6,
    "testing": 7,
}
ANYWHERE = {"version"}  # ``piko.version`` holds one string


def _running_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, except what sits under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", None) == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            stack.append(child)


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of every ``piko`` import in a file that runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _running_nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "piko":
                for alias in node.names:
                    yield node.lineno, f"piko.{alias.name}"
            elif node.module.startswith("piko."):
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("piko."):
                    yield node.lineno, alias.name


def kernel_files() -> list[Path]:
    return sorted(p for p in KERNEL.rglob("*.py") if "__pycache__" not in p.parts)


def plugin_files() -> list[Path]:
    return sorted(p for p in PLUGINS.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_kernel_subpackage_has_a_layer() -> None:
    folders = {p.name for p in KERNEL.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


def test_kernel_layers_import_downwards_only() -> None:
    wrong: list[str] = []
    for path in kernel_files():
        relative = path.relative_to(KERNEL)
        if len(relative.parts) < 2:
            continue  # piko/__init__.py (the public API) and piko/__main__.py sit above every layer
        own = relative.parts[0]
        for line, module in imported_modules(path):
            target = module.split(".")[1]
            if target == "plugins":
                wrong.append(f"{relative}:{line} imports {module} (the kernel never imports plugins)")
            elif target in ANYWHERE or target == own or target not in LAYERS:
                continue
            elif LAYERS[target] >= LAYERS[own]:
                wrong.append(f"{relative}:{line}: {own} imports {module} ({target} is not below {own})")
    assert wrong == []


@pytest.mark.parametrize("kind", sorted(p.name for p in PLUGINS.iterdir() if (p / "__init__.py").exists()))
def test_plugins_import_the_kernel_and_their_own_kind_only(kind: str) -> None:
    wrong: list[str] = []
    for path in plugin_files():
        relative = path.relative_to(PLUGINS)
        if relative.parts[0] != kind:
            continue
        for line, module in imported_modules(path):
            parts = module.split(".")
            if parts[1] == "plugins" and len(parts) > 2 and parts[2] != kind:
                wrong.append(f"plugins/{relative}:{line} imports {module}")
    assert wrong == []


def test_the_microkernel_stays_under_4000_lines() -> None:
    lines = sum(
        len(path.read_text(encoding="utf-8").splitlines()) for path in (KERNEL / "platform").rglob("*.py")
    )
    assert lines < 4000


def test_the_agent_session_class_stays_under_400_lines() -> None:
    tree = ast.parse((KERNEL / "engine" / "session.py").read_text(encoding="utf-8"))
    (found,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "AgentSession"]
    assert found.end_lineno is not None and found.end_lineno - found.lineno + 1 < 400
