"""pi's pattern rules for choosing resource files, shared by settings arrays and package manifests.

A list of entries selects among found files: plain globs keep only the files they match (all
files when there are none), ``!glob`` leaves matching files out, ``+path`` forces an exact path
back in and ``-path`` forces one out. A glob is tried on the path relative to the base folder, the
file name and the absolute path (for a ``SKILL.md`` also on its folder's); ``*`` and ``?`` stay
within one path segment and ``**`` crosses them, as minimatch does in pi.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "apply_patterns",
    "enabled_by_overrides",
    "glob_match",
    "glob_regex_source",
    "is_override",
    "is_pattern",
    "matches_any",
    "matches_exact",
]


def is_override(entry: str) -> bool:
    return entry.startswith(("!", "+", "-"))


def is_pattern(entry: str) -> bool:
    return is_override(entry) or "*" in entry or "?" in entry


# ---------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------


def glob_regex_source(pattern: str, *, backslash_escapes: bool = False) -> str:
    """A glob as regex source: ``*`` and ``?`` stay within one path segment, ``**`` crosses them.

    With ``backslash_escapes`` (gitignore files) ``\\x`` stands for a literal ``x``.
    """
    out = ""
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if backslash_escapes and ch == "\\" and i + 1 < len(pattern):
            out += re.escape(pattern[i + 1])
            i += 2
            continue
        if ch == "*":
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "[":
            close = pattern.find("]", i + 1)
            if close == -1:
                out += re.escape(ch)
            else:
                body = pattern[i + 1 : close].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += f"[{body}]"
                i = close
        else:
            out += re.escape(ch)
        i += 1
    return out


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(f"^{glob_regex_source(pattern)}$")


def glob_match(text: str, pattern: str) -> bool:
    return bool(_glob_regex(pattern).match(text))


def _posix(path: str | Path) -> str:
    return str(path).replace(os.sep, "/")


def _forms(path: Path, base: Path) -> tuple[list[str], list[str]]:
    """``(forms a glob may match, forms an exact path may equal)``: relative, name, absolute;
    for a ``SKILL.md`` also its folder's."""
    rel = _posix(os.path.relpath(path, base))
    absolute = _posix(path)
    globs = [rel, path.name, absolute]
    exact = [rel, absolute]
    if path.name == "SKILL.md":
        folder = path.parent
        folder_rel = _posix(os.path.relpath(folder, base))
        globs += [folder_rel, folder.name, _posix(folder)]
        exact += [folder_rel, _posix(folder)]
    return globs, exact


def matches_any(path: Path, patterns: Iterable[str], base: Path) -> bool:
    globs, _exact = _forms(path, base)
    return any(glob_match(form, _posix(p)) for p in patterns for form in globs)


def matches_exact(path: Path, patterns: Iterable[str], base: Path) -> bool:
    _globs, exact = _forms(path, base)
    for pattern in patterns:
        wanted = _posix(pattern[2:] if pattern.startswith(("./", ".\\")) else pattern)
        if wanted in exact:
            return True
    return False


def apply_patterns(paths: list[Path], patterns: list[str], base: Path) -> set[Path]:
    """The paths the patterns keep: includes (all when none), minus ``!``, plus ``+``, minus ``-``."""
    includes = [p for p in patterns if not is_override(p)]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    force_in = [p[1:] for p in patterns if p.startswith("+")]
    force_out = [p[1:] for p in patterns if p.startswith("-")]
    kept = [p for p in paths if not includes or matches_any(p, includes, base)]
    if excludes:
        kept = [p for p in kept if not matches_any(p, excludes, base)]
    if force_in:
        kept += [p for p in paths if p not in kept and matches_exact(p, force_in, base)]
    if force_out:
        kept = [p for p in kept if not matches_exact(p, force_out, base)]
    return set(kept)


def enabled_by_overrides(path: Path, entries: list[str], base: Path) -> bool:
    """Whether an automatically found file stays on under a scope's ``!``/``+``/``-`` entries."""
    excludes = [p[1:] for p in entries if p.startswith("!")]
    force_in = [p[1:] for p in entries if p.startswith("+")]
    force_out = [p[1:] for p in entries if p.startswith("-")]
    enabled = True
    if excludes and matches_any(path, excludes, base):
        enabled = False
    if force_in and matches_exact(path, force_in, base):
        enabled = True
    if force_out and matches_exact(path, force_out, base):
        enabled = False
    return enabled
