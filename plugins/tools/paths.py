"""Path resolution shared by the file tools, with pi's normalisation rules (path-utils)."""

from __future__ import annotations

import os
import re
import unicodedata

__all__ = [
    "expand_path",
    "normalize_at_prefix",
    "normalize_unicode_spaces",
    "resolve_path",
    "resolve_read_path",
    "resolve_to_cwd",
]

# Space-like characters models (and macOS file names) produce where a plain space is meant.
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NO_BREAK_SPACE = "\u202f"
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)


def normalize_unicode_spaces(text: str) -> str:
    """Replace non-breaking and other unicode spaces with a plain space."""
    return _UNICODE_SPACES.sub(" ", text)


def normalize_at_prefix(path: str) -> str:
    """Drop one leading ``@`` (models copy pi's ``@file`` mention syntax into paths)."""
    return path[1:] if path.startswith("@") else path


def expand_path(path: str) -> str:
    """Normalise ``@`` and unicode spaces, then expand a leading ``~`` / ``~/``."""
    normalized = normalize_unicode_spaces(normalize_at_prefix(path))
    if normalized == "~":
        return _home()
    if normalized.startswith("~/"):
        return _home() + normalized[1:]
    return normalized


def resolve_to_cwd(path: str, cwd: str) -> str:
    """Resolve ``path`` against ``cwd``; absolute paths are returned as given (after expansion)."""
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return expanded
    return _node_resolve(cwd, expanded)


def resolve_path(path: str, cwd: str) -> str:
    """Alias of :func:`resolve_to_cwd`, the resolution every tool uses for its ``path`` argument."""
    return resolve_to_cwd(path, cwd)


def resolve_read_path(path: str, cwd: str) -> str:
    """Resolve a path to read, trying macOS screenshot-name variants when the plain one is missing."""
    resolved = resolve_to_cwd(path, cwd)
    if _exists(resolved):
        return resolved
    am_pm = _AM_PM.sub(lambda m: f"{_NARROW_NO_BREAK_SPACE}{m.group(1)}.", resolved)
    if am_pm != resolved and _exists(am_pm):
        return am_pm
    nfd = unicodedata.normalize("NFD", resolved)
    if nfd != resolved and _exists(nfd):
        return nfd
    curly = resolved.replace("'", "\u2019")
    if curly != resolved and _exists(curly):
        return curly
    nfd_curly = nfd.replace("'", "\u2019")
    if nfd_curly != resolved and _exists(nfd_curly):
        return nfd_curly
    return resolved


def _home() -> str:
    return os.path.expanduser("~")


def _exists(path: str) -> bool:
    # Follows symlinks, like access(F_OK): a dangling link counts as missing.
    return os.path.exists(path)


def _node_resolve(cwd: str, rel: str) -> str:
    """Join and normalise like Node's ``path.resolve`` (no trailing slash, ``//`` collapsed)."""
    base = cwd if os.path.isabs(cwd) else os.path.join(os.getcwd(), cwd)
    joined = os.path.normpath(os.path.join(base, rel))
    if joined.startswith("//"):
        joined = "/" + joined.lstrip("/")
    return joined
