"""Where the user's project trust decisions are kept: ``~/.pi/agent/trust.json``, pi 1.6's file.

The file is one JSON object, canonical folder path -> ``true`` (trusted) or ``false`` (not
trusted); the decision of the closest folder at or above the working directory applies. Paths
are canonical (links resolved), so a project reached through a symbolic link has one decision.
Decisions piko recorded before in ``trusted-projects.json`` (``{"projects": {...}}``) are read
when ``trust.json`` does not exist yet, and move into it on the next write.

A file that does not parse (or holds anything but ``true``/``false``/``null`` values) is never
overwritten: every folder counts as not trusted, :attr:`TrustStore.error` says why, and a write
raises :class:`TrustFileError` naming the file. Writes re-read the file under pi's lock
(``trust.json.lock``), so concurrent ``pi trust`` runs (of pi or piko) keep every decision.
"""

from __future__ import annotations

import os
from pathlib import Path

from piko.config.paths import agent_dir as default_agent_dir
from piko.lib import jsonio
from piko.lib.file_lock import FileLock

__all__ = ["LEGACY_TRUST_FILE", "TRUST_FILE", "TrustFileError", "TrustStore", "canonical"]

TRUST_FILE = "trust.json"
LEGACY_TRUST_FILE = "trusted-projects.json"


class TrustFileError(OSError):
    """The trust file cannot be read (or locked), so piko will not change it."""


class _TrustLock(FileLock):
    """pi's lock on ``trust.json`` (``trust.json.lock``), so that writers never lose a decision."""

    error = TrustFileError


def canonical(folder: str | os.PathLike[str]) -> Path:
    """The canonical form of ``folder`` (absolute, links resolved) that decisions are kept under."""
    return Path(os.path.realpath(os.path.abspath(folder)))


class TrustStore:
    """Read and record trust decisions."""

    def __init__(self, agent_dir: str | os.PathLike[str] | None = None) -> None:
        base = Path(agent_dir or default_agent_dir())
        self.path = base / TRUST_FILE
        self.legacy_path = base / LEGACY_TRUST_FILE
        self.error: str | None = None  # why the file could not be read (then nothing is trusted)

    def _load(self) -> dict[str, bool]:
        """The decisions on disk; sets :attr:`error` (and answers ``{}``) for a damaged file."""
        self.error = None
        try:
            data = jsonio.read_json_file(self.path)
        except FileNotFoundError:
            return self._load_legacy()
        except (OSError, ValueError) as exc:
            self.error = f"Could not read the trust file {self.path}: {exc}"
            return {}
        if not isinstance(data, dict):
            self.error = f"Invalid trust file {self.path}: expected a JSON object"
            return {}
        decisions: dict[str, bool] = {}
        for key, value in data.items():
            if value is None:
                continue
            if not isinstance(value, bool):
                self.error = f"Invalid trust file {self.path}: the value for {jsonio.dumps(key)} must be true, false or null"
                return {}
            decisions[str(key)] = value
        return decisions

    def _load_legacy(self) -> dict[str, bool]:
        try:
            data = jsonio.read_json_file(self.legacy_path)
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {str(k): v for k, v in projects.items() if isinstance(v, bool)}

    def _write(self, decisions: dict[str, bool]) -> None:
        jsonio.write_atomic(self.path, jsonio.dumps_pretty(dict(sorted(decisions.items()))) + "\n")

    def _writable(self) -> dict[str, bool]:
        decisions = self._load()
        if self.error is not None:
            raise TrustFileError(f"{self.error}; fix or remove it before piko records a decision")
        return decisions

    def decisions(self) -> dict[str, bool]:
        """Every recorded decision: canonical folder -> trusted (empty for a damaged file)."""
        return self._load()

    def entry(self, folder: str | os.PathLike[str]) -> tuple[Path, bool] | None:
        """``(folder the decision was recorded for, trusted)`` of the closest decision at or
        above ``folder``; None when there is none (or the file is damaged: see :attr:`error`)."""
        decisions = self._load()
        if not decisions:
            return None
        keyed = {str(canonical(k)) if os.path.isabs(k) else k: v for k, v in decisions.items()}
        for start in dict.fromkeys((Path(os.path.abspath(folder)), canonical(folder))):
            for candidate in (start, *start.parents):
                value = keyed.get(str(candidate))
                if value is not None:
                    return candidate, value
        return None

    def decision(self, folder: str | os.PathLike[str]) -> bool | None:
        """True or False for the closest recorded folder at or above ``folder``; None if none.

        A damaged file answers False: nothing is trusted until it is fixed.
        """
        found = self.entry(folder)
        if found is None:
            return False if self.error is not None else None
        return found[1]

    def is_trusted(self, folder: str | os.PathLike[str]) -> bool:
        """Whether the saved decisions trust ``folder``."""
        return self.decision(folder) is True

    def set(self, folder: str | os.PathLike[str], trusted: bool | None) -> Path:
        """Record a decision for ``folder`` (None removes it); returns the canonical folder.

        Raises :class:`TrustFileError` when the file is damaged (it is left as it is).
        """
        path = canonical(folder)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _TrustLock(self.path):
            decisions = self._writable()
            for key in [k for k in decisions if os.path.isabs(k) and canonical(k) == path]:
                del decisions[key]
            if trusted is not None:
                decisions[str(path)] = trusted
            self._write(decisions)
        return path

    def forget(self, folder: str | os.PathLike[str]) -> bool:
        """Remove the decision recorded for exactly ``folder``; whether there was one."""
        path = canonical(folder)
        decisions = self._writable()
        if not any(os.path.isabs(k) and canonical(k) == path for k in decisions):
            return False
        self.set(folder, None)
        return True
