"""Where piko keeps things: pi's own directories (``~/.pi/agent``, project ``.pi/``) and a cache."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CONFIG_DIR_NAME = ".pi"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
OFFLINE_ENV = "PI_OFFLINE"


def offline() -> bool:
    """``PI_OFFLINE`` (``1``, ``true``, ``yes``; ``--offline`` sets it): no automatic network use."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("1", "true", "yes")


def expand_user(path: str) -> str:
    """Expand a leading ``~`` the way pi does (``~`` and ``~/...`` only)."""
    if path == "~" or path.startswith("~/"):
        return str(Path.home()) + path[1:]
    return path


def agent_dir() -> Path:
    """The global config directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    override = os.environ.get(AGENT_DIR_ENV)
    if override:
        return Path(expand_user(override))
    return Path.home() / CONFIG_DIR_NAME / "agent"


def project_dir(cwd: str | os.PathLike[str]) -> Path:
    """The project config directory ``<cwd>/.pi``."""
    return Path(cwd) / CONFIG_DIR_NAME


def cache_dir() -> Path:
    """piko's cache directory: ``$PIKO_CACHE_DIR``, else ``$XDG_CACHE_HOME/piko``, else ``~/.cache/piko``."""
    override = os.environ.get("PIKO_CACHE_DIR")
    if override:
        return Path(expand_user(override))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "piko"


def interpreter_key() -> str:
    """A short stable key for this interpreter and its import path (cache files are per environment)."""
    import zlib  # not hashlib: loading OpenSSL's digests costs a millisecond a start-up

    data = "\0".join([sys.executable, *sys.path]).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
