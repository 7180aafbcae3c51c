"""Which extensions, skills, prompt templates and themes a package folder holds, with pi's rules.

A package declares its resources in a manifest: ``[tool.piko]`` in ``pyproject.toml``
(Python projects) or the ``pi`` key of ``package.json`` (pi's manifest, npm and git packages),
each a mapping of ``extensions``/``skills``/``prompts``/``themes`` to lists of paths relative to
the package root (globs, ``!exclude``, ``+force-include``, ``-force-exclude``). Without a
manifest the conventional folders ``extensions/``, ``skills/``, ``prompts/`` and ``themes/``
are used. A package entry in settings may filter further (``{"source": ..., "skills": [...]}``):
an omitted kind loads all, ``[]`` loads none.

Extensions are Python files (``*.py``) and Python package folders; pi's TypeScript and
JavaScript extensions are found too, so that they can be reported as unsupported.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from piko.lib import jsonio
from piko.resources.files import IgnoreRules
from piko.resources.files import files_with_suffix
from piko.resources.files import skill_files
from piko.resources.files import visible_entries
from piko.resources.patterns import apply_patterns
from piko.resources.patterns import is_override

KINDS = ("extensions", "skills", "prompts", "themes")
JS_SUFFIXES = (".ts", ".js", ".mts", ".mjs", ".cts", ".cjs")


def read_manifest(root: Path) -> dict[str, Any] | None:
    """``[tool.piko]`` of ``pyproject.toml``, else the ``pi`` key of ``package.json``, else None."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            import tomllib

            table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("piko")
        except (OSError, ValueError):
            table = None
        if isinstance(table, dict):
            return table
    package_json = root / "package.json"
    if package_json.is_file():
        try:
            data = jsonio.read_json_file(package_json)
        except (OSError, ValueError):
            return None
        manifest = data.get("pi") if isinstance(data, dict) else None
        if isinstance(manifest, dict):
            return manifest
    return None


def _extension_entries(folder: Path) -> list[Path]:
    """Python extension files and package folders in ``folder`` (and pi's JS/TS ones, to report)."""
    if (folder / "__init__.py").is_file():
        return [folder]
    for index in ("index.ts", "index.js"):
        if (folder / index).is_file():
            return [folder / index]
    found: list[Path] = []
    for path, kind in visible_entries(folder, IgnoreRules(folder)):
        if path.name.startswith("_"):
            continue
        if kind == "file" and (path.name.endswith(".py") or path.name.endswith(JS_SUFFIXES)):
            found.append(path)
        elif kind == "dir":
            if (path / "__init__.py").is_file():
                found.append(path)
            else:
                found.extend(p for p in (path / "index.ts", path / "index.js") if p.is_file())
    return found


def collect_kind(folder: Path, kind: str) -> list[Path]:
    """The resources of ``kind`` under ``folder``."""
    if kind == "skills":
        return skill_files(folder, root_files=True)
    if kind == "extensions":
        return _extension_entries(folder)
    return files_with_suffix(folder, ".md" if kind == "prompts" else ".json")


def files_from_paths(paths: Iterable[Path], kind: str) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(collect_kind(path, kind))
    return found


# ---------------------------------------------------------------------------
# Patterns (pi's: plain globs include, !glob excludes, +path / -path force)
# ---------------------------------------------------------------------------


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def manifest_files(entries: list[str], root: Path, kind: str) -> list[Path]:
    """Every resource the manifest's plain entries (globs expanded) name, before overrides."""
    paths: list[Path] = []
    for entry in entries:
        if is_override(entry):
            continue
        if _has_glob(entry):
            matches = sorted(glob.glob(entry, root_dir=str(root), recursive=True))
            paths.extend(root / m for m in matches)
        else:
            paths.append(root / entry)
    return files_from_paths([Path(os.path.normpath(p)) for p in paths], kind)


# ---------------------------------------------------------------------------
# One package
# ---------------------------------------------------------------------------


def _entries(manifest: dict[str, Any] | None, kind: str) -> list[str] | None:
    value = manifest.get(kind) if manifest else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return None


def _available(root: Path, manifest: dict[str, Any] | None, kind: str) -> list[Path]:
    """What the package offers of ``kind`` (the manifest's own overrides applied)."""
    entries = _entries(manifest, kind)
    if entries:
        files = manifest_files(entries, root, kind)
        overrides = [e for e in entries if is_override(e)]
        enabled = apply_patterns(files, overrides, root) if overrides else set(files)
        return [f for f in files if f in enabled]
    if entries is not None:  # an explicit empty list: nothing of this kind
        return []
    if manifest is not None and any(_entries(manifest, k) is not None for k in KINDS):
        return []  # a manifest lists only what it declares
    folder = root / kind
    return collect_kind(folder, kind) if folder.is_dir() else []


def package_resources(
    root: Path,
    package_filter: dict[str, Any] | None = None,
    extra: dict[str, list[Path]] | None = None,
    *,
    base: Path | None = None,
    scan_root: bool = True,
) -> dict[str, list[tuple[Path, bool]]]:
    """Each kind's resources of the package at ``root`` and whether each is enabled.

    ``extra`` adds folders or files the package declares elsewhere (the entry points of an
    installed Python distribution); ``package_filter`` is the settings entry's object form, its
    patterns relative to ``base`` (default ``root``). With ``scan_root`` false only ``extra``
    counts (``root`` is not a package folder).
    """
    scan = scan_root and root.is_dir()
    base = base or root
    manifest = read_manifest(root) if scan else None
    out: dict[str, list[tuple[Path, bool]]] = {}
    for kind in KINDS:
        available = _available(root, manifest, kind) if scan else []
        for extra_path in files_from_paths((extra or {}).get(kind, []), kind):
            if extra_path not in available:
                available.append(extra_path)
        patterns = _entries(package_filter, kind) if package_filter else None
        if patterns is None:
            out[kind] = [(p, True) for p in available]
        elif not patterns:
            out[kind] = [(p, False) for p in available]
        else:
            enabled = apply_patterns(available, patterns, base)
            out[kind] = [(p, p in enabled) for p in available]
    return out
