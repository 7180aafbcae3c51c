"""Where the user's project trust decisions are kept: ``~/.pi/agent/trusted-projects.json``.

The file holds ``{"projects": {"/abs/path": true|false}}``; trusting a folder covers everything
below it, and the nearest decision wins.
"""

from __future__ import annotations

import os
from pathlib import Path

from piko.config.paths import agent_dir as default_agent_dir
from piko.lib import jsonio

__all__ = ["TRUST_FILE", "TrustStore"]

TRUST_FILE = "trusted-projects.json"


class TrustStore:
    """Read and record trust decisions."""

    def __init__(self, agent_dir: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(agent_dir or default_agent_dir()) / TRUST_FILE

    def _load(self) -> dict[str, bool]:
        try:
            data = jsonio.read_json_file(self.path)
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {str(k): bool(v) for k, v in projects.items()}

    def decisions(self) -> dict[str, bool]:
        """Every recorded decision: absolute folder -> trusted."""
        return self._load()

    def decision(self, folder: str | os.PathLike[str]) -> bool | None:
        """True or False for the nearest recorded folder at or above ``folder``; None if none."""
        projects = self._load()
        if not projects:
            return None
        path = Path(os.path.abspath(folder))
        for candidate in (path, *path.parents):
            value = projects.get(str(candidate))
            if value is not None:
                return value
        return None

    def is_trusted(self, folder: str | os.PathLike[str]) -> bool:
        """Whether code from ``folder`` may run."""
        return self.decision(folder) is True

    def set(self, folder: str | os.PathLike[str], trusted: bool) -> Path:
        """Record a decision for ``folder``; returns the absolute folder."""
        path = Path(os.path.abspath(folder))
        projects = self._load()
        projects[str(path)] = trusted
        jsonio.write_atomic(self.path, jsonio.dumps_pretty({"projects": projects}) + "\n")
        return path

    def forget(self, folder: str | os.PathLike[str]) -> bool:
        """Remove the decision recorded for exactly ``folder``."""
        path = str(Path(os.path.abspath(folder)))
        projects = self._load()
        if path not in projects:
            return False
        del projects[path]
        jsonio.write_atomic(self.path, jsonio.dumps_pretty({"projects": projects}) + "\n")
        return True
