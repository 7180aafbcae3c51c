"""Editor completion: slash commands and their arguments, ``@file`` references, and paths on Tab.

``/`` at the start of the input lists built-in commands, extension commands, prompt templates
and ``/skill:name`` (fuzzy, best first); after ``/name `` the command's own argument
completions are offered. ``@`` starts a fuzzy search of the project's files as ``rg --files``
lists them (so ``.gitignore`` is respected); Tab completes a file system path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import define
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.completion import Completer
from prompt_toolkit.completion import Completion
from prompt_toolkit.document import Document

from piko.lib.fuzzy import fuzzy_filter

MAX_FILES = 20000
FILE_CACHE_SECONDS = 10.0


@define(kw_only=True)
class CommandEntry:
    """A command the editor can complete."""

    name: str
    description: str = ""
    source: str = "builtin"  # builtin | extension | template | skill
    argument_completions: Callable[[str], Any] | None = None


def find_rg() -> str | None:
    """``rg`` on PATH or next to the running interpreter (the ``ripgrep`` wheel puts it there)."""
    found = shutil.which("rg")
    if found:
        return found
    exe = "rg.exe" if os.name == "nt" else "rg"
    for directory in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(directory or "", exe)
        if directory and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class ProjectFiles:
    """The project's files as ``rg --files`` lists them (cached for a few seconds)."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self._files: list[str] = []
        self._at = 0.0

    def files(self) -> list[str]:
        now = time.monotonic()
        if self._files and now - self._at < FILE_CACHE_SECONDS:
            return self._files
        files = self._rg_files()
        if files is None:
            files = self._walk()
        directories: set[str] = set()
        for path in files:
            parent = os.path.dirname(path)
            while parent and parent not in directories:
                directories.add(parent)
                parent = os.path.dirname(parent)
        self._files = sorted(f"{d}/" for d in directories) + files
        self._at = now
        return self._files

    def _rg_files(self) -> list[str] | None:
        rg = find_rg()
        if rg is None:
            return None
        try:
            done = subprocess.run(
                [rg, "--files", "--hidden", "--glob", "!.git"],
                cwd=self.cwd,
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        files = [line for line in done.stdout.splitlines() if line]
        files.sort()
        return files[:MAX_FILES]

    def _walk(self) -> list[str]:
        out: list[str] = []
        for root, dirs, names in os.walk(self.cwd):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
            for name in names:
                out.append(os.path.relpath(os.path.join(root, name), self.cwd))
                if len(out) >= MAX_FILES:
                    return sorted(out)
        return sorted(out)


def _argument_items(values: Any) -> list[tuple[str, str, str]]:
    """``(value, label, description)`` from a command's argument completions (texts or dicts)."""
    items: list[tuple[str, str, str]] = []
    for value in values or []:
        if isinstance(value, str):
            items.append((value, value, ""))
        elif isinstance(value, dict) and isinstance(value.get("value"), str):
            items.append(
                (
                    value["value"],
                    str(value.get("label") or value["value"]),
                    str(value.get("description") or ""),
                )
            )
        else:
            label = getattr(value, "label", None)
            val = getattr(value, "value", None)
            if isinstance(val, str):
                items.append((val, str(label or val), str(getattr(value, "detail", "") or "")))
    return items


class EditorCompleter(Completer):
    """Completions for the main editor (see the module docstring)."""

    def __init__(self, commands: Callable[[], list[CommandEntry]], cwd: str) -> None:
        self._commands = commands
        self.cwd = cwd
        self.files = ProjectFiles(cwd)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and "\n" not in before:
            yield from self._slash(before)
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._files(word)
            return
        if complete_event.completion_requested and word:
            yield from self._paths(word)

    def _slash(self, before: str) -> Iterable[Completion]:
        name, space, args = before[1:].partition(" ")
        commands = self._commands()
        if not space:
            matches = fuzzy_filter(commands, name, lambda c: c.name) if name else commands
            for command in matches:
                yield Completion(
                    command.name,
                    start_position=-len(name),
                    display=command.name,
                    display_meta=command.description,
                )
            return
        chosen = next((c for c in commands if c.name == name), None)
        if chosen is None or chosen.argument_completions is None:
            return
        try:
            values = chosen.argument_completions(args)
        except Exception:
            return
        for value, label, description in _argument_items(values):
            yield Completion(value, start_position=-len(args), display=label, display_meta=description)

    def _files(self, word: str) -> Iterable[Completion]:
        query = word[1:]
        files = self.files.files()
        matches = fuzzy_filter(files, query, lambda f: f)[:50] if query else files[:50]
        for path in matches:
            quoted = f'"{path}"' if " " in path else path
            yield Completion(f"@{quoted}", start_position=-len(word), display=path)

    def _paths(self, word: str) -> Iterable[Completion]:
        expanded = os.path.expanduser(word)
        base = Path(expanded if os.path.isabs(expanded) else os.path.join(self.cwd, expanded))
        directory, prefix = (base, "") if word.endswith("/") else (base.parent, base.name)
        try:
            entries = sorted(directory.iterdir(), key=lambda p: p.name)
        except OSError:
            return
        typed_dir = word[: len(word) - len(prefix)]
        for entry in entries:
            if not entry.name.startswith(prefix) or (
                entry.name.startswith(".") and not prefix.startswith(".")
            ):
                continue
            suffix = "/" if entry.is_dir() else ""
            yield Completion(
                typed_dir + entry.name + suffix, start_position=-len(word), display=entry.name + suffix
            )
