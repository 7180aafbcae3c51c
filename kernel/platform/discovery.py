"""Find the ``piko`` entry points of installed distributions without importing them.

``importlib.metadata`` parses every distribution's metadata (about 50 ms here before any work).
This module reads only ``*.dist-info/entry_points.txt`` (and legacy ``*.egg-info``) files on
``sys.path``, and caches the result per interpreter, keyed by the modification times of the
``sys.path`` directories: installing or removing a distribution changes its directory's mtime,
so the cache is rebuilt exactly when it has to be.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from piko.config import cache
from piko.config.paths import cache_dir
from piko.config.paths import interpreter_key
from piko.lib.records import Record

ENTRY_POINT_GROUP = "piko"
CACHE_VERSION = 2  # 2: the shared {version, key, payload} document of piko.config.cache


class EntryPointRecord(Record, kw_only=False, frozen=True):
    """One ``name = module[:attr]`` line of the ``[piko]`` group, and where it came from."""

    name: str
    value: str
    dist_name: str
    dist_version: str
    location: str

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0].strip()

    @property
    def attr(self) -> str | None:
        parts = self.value.split(":", 1)
        return parts[1].strip() if len(parts) == 2 else None


def parse_entry_points(text: str, group: str = ENTRY_POINT_GROUP) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs of one group in an ``entry_points.txt`` file."""
    pairs: list[tuple[str, str]] = []
    in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            in_group = line[1:-1].strip() == group
            continue
        if in_group and "=" in line:
            name, value = line.split("=", 1)
            value = value.split("[", 1)[0]  # drop extras: "mod:attr [extra]"
            pairs.append((name.strip(), value.strip()))
    return pairs


def _split_dist_dir(name: str) -> tuple[str, str]:
    stem = name.rsplit(".", 1)[0]
    dist, _, version = stem.partition("-")
    return dist, version.split("-", 1)[0]


def _scan_directory(directory: str, group: str) -> list[EntryPointRecord]:
    records: list[EntryPointRecord] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return records
    for name in sorted(names):
        if not (name.endswith(".dist-info") or name.endswith(".egg-info")):
            continue
        ep_file = os.path.join(directory, name, "entry_points.txt")
        try:
            with open(ep_file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            continue
        if f"[{group}]" not in text:
            continue
        dist, version = _split_dist_dir(name)
        for ep_name, value in parse_entry_points(text, group):
            records.append(EntryPointRecord(ep_name, value, dist, version, directory))
    return records


def _path_state(paths: Iterable[str]) -> list[list[Any]]:
    state: list[list[Any]] = []
    for entry in paths:
        directory = entry or "."
        try:
            st = os.stat(directory)
        except OSError:
            continue
        if not os.path.isdir(directory):
            continue
        state.append([directory, st.st_mtime_ns])
    return state


def scan(
    group: str = ENTRY_POINT_GROUP,
    paths: list[str] | None = None,
    *,
    use_cache: bool = True,
) -> list[EntryPointRecord]:
    """All entry points of ``group`` on ``paths`` (default ``sys.path``), in path order."""
    search = list(sys.path if paths is None else paths)
    state = _path_state(search)
    cache_file = cache_dir() / f"entry-points-{group}-{interpreter_key()}.json"
    if use_cache:
        rows = cache.read(cache_file, CACHE_VERSION, state)
        if isinstance(rows, list):
            try:
                return [EntryPointRecord(*row) for row in rows]
            except TypeError:  # rows of another shape: scan again
                pass
    records: list[EntryPointRecord] = []
    for directory, _mtime in state:
        records.extend(_scan_directory(directory, group))
    if use_cache:
        rows = [[r.name, r.value, r.dist_name, r.dist_version, r.location] for r in records]
        cache.write(cache_file, CACHE_VERSION, state, rows)
    return records
