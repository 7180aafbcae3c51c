"""Where skills and prompt templates are found: folder scans and the settings' path and pattern lists.

The ``skills``/``prompts`` arrays of ``settings.json`` hold paths (relative to ``~/.pi/agent``
for the global file, to ``.pi`` for a project's) and patterns, as in pi: a glob (``*``, ``?``)
keeps only the matching files of the listed paths, ``!pattern`` leaves matching files out (also
the ones found automatically in that scope's folders), ``+path`` forces an exact path in and
``-path`` forces one out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from typing import Protocol
from typing import TypeVar

from piko.resources.patterns import apply_patterns
from piko.resources.patterns import enabled_by_overrides
from piko.resources.patterns import is_pattern


def resolve_entry(value: str, base: Path) -> Path:
    """A settings or command-line path: ``~`` is the home folder, relative paths are under ``base``."""
    text = value.strip()
    if text == "~":
        text = str(Path.home())
    elif text.startswith("~/"):
        text = os.path.join(str(Path.home()), text[2:])
    elif text.startswith("~"):
        text = os.path.join(str(Path.home()), text[1:])
    return Path(os.path.normpath(os.path.join(str(base), text)))


def setting_list(data: Any, key: str) -> list[str]:
    """The string entries of a settings array (anything else is ignored)."""
    value = data.get(key) if isinstance(data, dict) else None
    return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []


# ---------------------------------------------------------------------------
# Folder scans
# ---------------------------------------------------------------------------


def agents_skill_dirs(cwd: Path) -> list[Path]:
    """``.agents/skills`` of cwd and each parent, up to the git root (or the filesystem root)."""
    start = Path(os.path.abspath(cwd))
    git_root = next((d for d in (start, *start.parents) if (d / ".git").exists()), None)
    dirs = []
    for directory in (start, *start.parents):
        dirs.append(directory / ".agents" / "skills")
        if git_root is not None and directory == git_root:
            break
    return dirs


def settings_files(entries: list[str], base: Path, collect: Any) -> list[tuple[Path, bool]]:
    """``(file, enabled)`` for a settings array: its plain paths collected, its patterns applied."""
    plain = [e for e in entries if not is_pattern(e)]
    patterns = [e for e in entries if is_pattern(e)]
    files: list[Path] = []
    for entry in plain:
        path = resolve_entry(entry, base)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(collect(path))
    enabled = apply_patterns(files, patterns, base)
    return [(f, f in enabled) for f in files]


# pi's precedence ranks: settings paths of the project, the project's folders, the global
# settings' paths, the user's folders, packages (the first of a name wins)
PROJECT_SETTINGS, PROJECT_AUTO, USER_SETTINGS, USER_AUTO, PACKAGES, COMMAND_LINE, EXTENSIONS = range(7)


class Found:
    """Resource paths gathered from every place, handed out in precedence order.

    The first mention of a path decides whether it is on (a ``!pattern`` in the project's
    settings turns a file off even if a later place names it too).
    """

    def __init__(self) -> None:
        self._items: dict[str, tuple[int, Path, str, bool]] = {}

    def add(self, path: Path, source: str, rank: int, enabled: bool = True) -> None:
        self._items.setdefault(str(path), (rank, path, source, enabled))

    def add_settings_paths(
        self, settings: Any, key: str, project_base: Path, agent: Path, collect: Any, *, project: bool = True
    ) -> tuple[list[str], list[str]]:
        """The paths the project's (``project``: it is trusted) and the global settings' ``key``
        arrays name; returns both arrays."""
        project_entries = setting_list(getattr(settings, "project_data", None), key) if project else []
        global_entries = setting_list(getattr(settings, "global_data", None), key)
        for path, enabled in settings_files(project_entries, project_base, collect):
            self.add(path, "project", PROJECT_SETTINGS, enabled)
        for path, enabled in settings_files(global_entries, agent, collect):
            self.add(path, "user", USER_SETTINGS, enabled)
        return project_entries, global_entries

    def add_discovered(
        self,
        request: Any,
        key: str,
        collect: Callable[[Path], list[Path]],
        project_auto: Callable[[Path, Path], list[Path]],
        user_auto: Callable[[Path], list[Path]],
    ) -> None:
        """What discovery finds: the paths the settings' ``key`` arrays name (folders listed with
        ``collect``), then the files found automatically, ``project_auto(cwd, cwd / ".pi")`` and
        ``user_auto(agent dir)``, each on unless that scope's settings turn it off. A project
        that is not trusted gives nothing."""
        cwd = Path(os.path.abspath(request.cwd))
        agent = Path(request.agent_dir)
        project_base = cwd / ".pi"
        trusted = bool(getattr(request, "project_trusted", True))
        project_entries, global_entries = self.add_settings_paths(
            request.settings, key, project_base, agent, collect, project=trusted
        )
        for path in project_auto(cwd, project_base) if trusted else []:
            self.add(path, "project", PROJECT_AUTO, enabled_by_overrides(path, project_entries, project_base))
        for path in user_auto(agent):
            self.add(path, "user", USER_AUTO, enabled_by_overrides(path, global_entries, agent))

    def add_explicit_paths(
        self, request: Any, *, option: str, extra_key: str, what: str, discovery_off: bool
    ) -> None:
        """Paths from the command line (``--<option>``), then from packages and extensions.

        Package paths count as discovered ones (``discovery_off`` drops them); a missing
        command-line path is reported as ``<what> path does not exist``.
        """
        cwd = Path(os.path.abspath(request.cwd))
        for value in request.options.get(option) or ():
            path = resolve_entry(str(value), cwd)
            if not path.exists():
                request.diagnostics.append(f"{what} path does not exist: {path}")
                continue
            self.add(path, "path", COMMAND_LINE)
        for value in request.extra_paths.get(extra_key, []):
            if request.extra_sources.get(value, "").startswith("packages"):
                if not discovery_off:
                    self.add(Path(value), "package", PACKAGES)
            else:
                self.add(Path(value), "path", EXTENSIONS)

    def ordered(self) -> list[tuple[Path, str]]:
        """``(path, source)`` of the enabled paths, by rank, each real file once."""
        items = sorted(self._items.values(), key=lambda item: item[0])
        out: list[tuple[Path, str]] = []
        seen: set[str] = set()
        for _rank, path, source, enabled in items:
            real = os.path.realpath(path)
            if enabled and real not in seen:
                seen.add(real)
                out.append((path, source))
        return out


class _Named(Protocol):
    name: str
    file_path: str


_NamedT = TypeVar("_NamedT", bound=_Named)


def first_of_each_name(
    found: Iterable[_NamedT],
    diagnostics: list[str],
    label: Callable[[_NamedT], str],
    same_file: Callable[[_NamedT], str] | None = None,
) -> list[_NamedT]:
    """``found`` in order, the first of each name kept: a later one of a taken name is reported
    (``<label> at <file> ignored: <file> has the name``) and left out; one whose ``same_file``
    key matches a kept one's is the same file reached again and left out silently."""
    kept: list[_NamedT] = []
    by_name: dict[str, _NamedT] = {}
    kept_files: set[str] = set()
    for item in found:
        key = same_file(item) if same_file is not None else None
        if key is not None and key in kept_files:
            continue
        winner = by_name.get(item.name)
        if winner is not None:
            diagnostics.append(f"{label(item)} at {item.file_path} ignored: {winner.file_path} has the name")
            continue
        by_name[item.name] = item
        kept.append(item)
        if key is not None:
            kept_files.add(key)
    return kept
