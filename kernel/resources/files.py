"""Finding resource files in folders as pi does: skills, markdown templates, themes, ignore files.

A folder with a ``SKILL.md`` is one skill; other folders are searched for one. Hidden entries
and ``node_modules`` are skipped, links are followed, entries are taken in name order. While
walking, the ``.gitignore``, ``.ignore`` and ``.fdignore`` of each folder apply to what is below
it, with pi's reading of them: a folder's patterns are prefixed with its path from the scan's
root (so ``foo`` in ``sub/.gitignore`` means ``sub/foo``), a leading ``/`` is dropped, a pattern
without a ``/`` matches at any depth, a trailing ``/`` matches folders only, ``!`` re-includes.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from piko.resources.patterns import glob_regex_source

__all__ = ["IgnoreRules", "files_with_suffix", "markdown_files", "skill_files", "visible_entries"]

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


@functools.lru_cache(maxsize=512)
def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A gitignore pattern (no ``!``, no trailing ``/``) as a regex over ``/``-separated paths:
    anchored when it holds a ``/``, else matching at any depth; what is inside a match matches."""
    prefix = "^" if "/" in pattern else "^(?:.*/)?"
    return re.compile(f"{prefix}{glob_regex_source(pattern, backslash_escapes=True)}(?:/.*)?$")


class IgnoreRules:
    """The ignore patterns met so far in one scan, matched against paths relative to its root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rules: list[tuple[re.Pattern[str], bool, bool]] = []  # (regex, negated, folders only)

    def add_folder(self, folder: Path) -> None:
        """Read ``folder``'s ignore files (if any)."""
        relative = os.path.relpath(folder, self.root).replace(os.sep, "/")
        prefix = "" if relative == "." else f"{relative}/"
        for name in IGNORE_FILE_NAMES:
            try:
                text = (folder / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for line in text.splitlines():
                self._add(line, prefix)

    def _add(self, line: str, prefix: str) -> None:
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not stripped.startswith("\\#")):
            return
        pattern = line.rstrip()
        negated = pattern.startswith("!")
        if negated:
            pattern = pattern[1:]
        elif pattern.startswith("\\!"):
            pattern = pattern[1:]
        pattern = pattern.removeprefix("/")
        folders_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        if not pattern:
            return
        self.rules.append((_pattern_regex(prefix + pattern), negated, folders_only))

    def ignores(self, path: Path, *, is_dir: bool) -> bool:
        """Whether the last pattern matching ``path`` excludes it."""
        if not self.rules:
            return False
        relative = os.path.relpath(path, self.root).replace(os.sep, "/")
        ignored = False
        for regex, negated, folders_only in self.rules:
            if folders_only and not is_dir and not _inside_match(regex, relative):
                continue
            if regex.match(relative):
                ignored = not negated
        return ignored


def _inside_match(regex: re.Pattern[str], relative: str) -> bool:
    """Whether a folders-only pattern matches a folder that contains ``relative``."""
    parent = relative.rpartition("/")[0]
    return bool(parent) and bool(regex.match(parent))


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _kind(entry: os.DirEntry[str]) -> str | None:
    """``"dir"``, ``"file"`` or None (a broken link or anything else), following links."""
    try:
        if entry.is_dir():
            return "dir"
        if entry.is_file():
            return "file"
    except OSError:
        pass
    return None


def visible_entries(folder: Path, rules: IgnoreRules) -> list[tuple[Path, str]]:
    """``(path, "dir" | "file")`` of ``folder``'s entries in name order, after reading its ignore
    files into ``rules``: hidden entries, ``node_modules``, broken links and ignored paths left out."""
    rules.add_folder(folder)
    found: list[tuple[Path, str]] = []
    for entry in _entries(folder):
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        kind = _kind(entry)
        if kind is None:
            continue
        path = Path(entry.path)
        if not rules.ignores(path, is_dir=kind == "dir"):
            found.append((path, kind))
    return found


def skill_files(folder: Path, *, root_files: bool, rules: IgnoreRules | None = None) -> list[Path]:
    """The skills under ``folder``: a folder with a ``SKILL.md`` is one skill (not searched
    further); other folders are searched; with ``root_files`` the ``*.md`` files directly in
    ``folder`` are skills too."""
    rules = rules or IgnoreRules(folder)
    entries = visible_entries(folder, rules)
    for path, kind in entries:
        if kind == "file" and path.name == "SKILL.md":  # an ignored one is not listed: search on
            return [path]
    found: list[Path] = []
    for path, kind in entries:
        if kind == "dir":
            found.extend(skill_files(path, root_files=False, rules=rules))
        elif root_files and path.name.endswith(".md"):
            found.append(path)
    return found


def files_with_suffix(
    folder: Path, suffix: str, *, recursive: bool = True, rules: IgnoreRules | None = None
) -> list[Path]:
    """Files ending in ``suffix`` in ``folder`` (and below it when ``recursive``)."""
    rules = rules or IgnoreRules(folder)
    found: list[Path] = []
    for path, kind in visible_entries(folder, rules):
        if kind == "dir":
            if recursive:
                found.extend(files_with_suffix(path, suffix, recursive=True, rules=rules))
        elif path.name.endswith(suffix):
            found.append(path)
    return found


def markdown_files(folder: Path, *, recursive: bool) -> list[Path]:
    """``*.md`` files in ``folder`` (and below it when ``recursive``)."""
    return files_with_suffix(folder, ".md", recursive=recursive)
