"""Type-check piko as one package: mypy sees ``piko`` and ``piko.plugins`` the way Python does.

The source folders (``kernel/`` -> ``piko``, ``plugins/`` -> ``piko.plugins``) do not match the
import names, and the editable install maps them with an import hook that mypy cannot follow, so
a plain ``mypy kernel`` sees every ``from piko... import`` as unknown. This script builds a tree
of symbolic links in ``.typecheck/piko`` (files link back, so reported paths name the real
sources) and runs mypy on ``-p piko`` with the settings from ``pyproject.toml``.

    .venv/bin/python scripts/typecheck.py [extra mypy arguments]
    .venv/bin/python scripts/typecheck.py --public   # mypy --strict on the public API's modules
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / ".typecheck"


def build_tree() -> None:
    """``.typecheck/piko`` mirrors ``kernel/`` (its modules and subpackages), with ``plugins``
    linked inside it."""
    if TREE.exists():
        shutil.rmtree(TREE)
    package = TREE / "piko"
    package.mkdir(parents=True)
    for source in sorted((ROOT / "kernel").iterdir()):
        if source.suffix == ".py" or (source.is_dir() and (source / "__init__.py").exists()):
            (package / source.name).symlink_to(source, target_is_directory=source.is_dir())
    (package / "py.typed").touch()
    (package / "plugins").symlink_to(ROOT / "plugins", target_is_directory=True)


PUBLIC_API = [
    "piko",
    "piko.platform.protocols",
    "piko.platform.markers",
    "piko.platform.semantics",
    "piko.platform.hookspecs",
    "piko.platform.hookspecs.bootstrap",
    "piko.platform.hookspecs.services",
    "piko.platform.hookspecs.session_events",
    "piko.platform.hookspecs.turn_events",
    "piko.platform.hookspecs.tool_events",
    "piko.platform.hookspecs.reference_events",
    "piko.platform.registries",
    "piko.extensions.context",
    "piko.extensions.ui",
    "piko.extensions.extension_api",
    "piko.extensions.function_tools",
    "piko.app.sdk",
    "piko.app.sdk_options",
    "piko.data.messages",
    "piko.data.streaming",
    "piko.lib.abort",
    "piko.lib.records",
]
"""The modules whose names a plugin author uses: checked with ``mypy --strict``."""


def main(argv: list[str]) -> int:
    build_tree()
    if argv[:1] == ["--public"]:
        # the public API alone, strictly; what it imports is read but not reported on
        targets = ["--strict", "--follow-imports=silent"]
        for module in PUBLIC_API:
            targets += ["-m", module]
        argv = [*targets, *argv[1:]]
    else:
        argv = ["-p", "piko", *argv]
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *argv]
    env = {**os.environ, "MYPYPATH": str(TREE)}
    return subprocess.call(command, cwd=TREE, env=env)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
