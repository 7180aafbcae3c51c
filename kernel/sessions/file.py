"""Reading a session file: its header and entries, what is broken skipped and reported, older
versions migrated in memory (the manager rewrites them, as pi does), unknown versions flagged."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any
from typing import NamedTuple

from piko.lib import jsonio
from piko.lib.records import Record
from piko.sessions.entries import CURRENT_SESSION_VERSION
from piko.sessions.entries import EntryParseError
from piko.sessions.entries import MessageEntry
from piko.sessions.entries import SessionEntry
from piko.sessions.entries import SessionHeader
from piko.sessions.entries import gc_paused
from piko.sessions.migrations import migrate_to_current_version
from piko.sessions.reading import entry_from_dict
from piko.sessions.reading import read_entries_from


class SessionError(ValueError):
    """A session operation that cannot be done; the message says why."""


class SessionFileError(SessionError):
    """A file that cannot be used as a session file (not one, unreadable)."""


class SessionDiagnostic(Record, kw_only=False, frozen=True):
    """A problem met while reading a session file (the line was skipped)."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


class SessionFileContents(NamedTuple):
    """What :func:`read_session_file` found.

    ``migrated``: an older version was brought to v3 in memory (every line is new).
    ``unknown_version``: the header's ``version`` is not one piko knows; the entries were read as
    v3 and the file must not be written.
    """

    header: SessionHeader | None
    entries: list[SessionEntry]
    diagnostics: list[SessionDiagnostic]
    migrated: bool
    unknown_version: bool = False


def ends_torn(path: str) -> bool:
    """Whether a non-empty file does not end in a newline (its last line was cut short)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except OSError:
        return False


def read_session_file(path: str) -> SessionFileContents:
    """Read a session file (see :func:`_read_session_file_unpaused`) with the collector paused."""
    with gc_paused():
        return _read_session_file_unpaused(path)


def _read_session_file_unpaused(path: str) -> SessionFileContents:
    """The header, entries and diagnostics of a session file.

    A blank file gives no header. A file whose first readable line is not a session header
    raises :class:`SessionFileError` (pi would overwrite it; piko leaves it alone). Older
    versions are migrated in memory (``migrated`` is then true and every line is new); a
    version piko does not know is read as v3 and flagged (``unknown_version``).
    """
    problems: list[SessionDiagnostic] = []
    header: SessionHeader | None = None
    entries: list[SessionEntry] = []
    seen_content = False
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise SessionFileError(f"Cannot read session file {path}: {exc.strerror or exc}") from exc
    with fh:
        lines = iter(fh)
        number = 0
        for raw_line in lines:
            number += 1
            if not raw_line.strip():
                continue
            seen_content = True
            try:
                obj = jsonio.loads(raw_line)
            except ValueError:
                try:
                    obj = jsonio.loads(raw_line.decode("utf-8", "replace"))
                except ValueError:
                    problems.append(SessionDiagnostic(path, number, "invalid JSON, line skipped"))
                    continue
            if (
                not isinstance(obj, dict)
                or obj.get("type") != "session"
                or not isinstance(obj.get("id"), str)
            ):
                raise SessionFileError(
                    f"{path} is not a session file: its first line is not a session header"
                )
            header = SessionHeader(obj, raw_line if raw_line.endswith(b"\n") else raw_line + b"\n")
            break
        if header is None:
            if seen_content:
                raise SessionFileError(f"{path} is not a session file: no session header")
            return SessionFileContents(None, [], problems, False)
        version = header.version
        if version is not None and version < CURRENT_SESSION_VERSION:
            return _read_old_version(path, header, lines, number, problems)
        entries, skipped = read_entries_from(fh, fh.tell(), path)
    for index, problem in skipped:
        problems.append(SessionDiagnostic(path, number + 1 + index, f"{problem}, line skipped"))
    return SessionFileContents(header, entries, problems, False, version is None)


def _read_old_version(
    path: str,
    header: SessionHeader,
    lines: Iterator[bytes],
    number: int,
    problems: list[SessionDiagnostic],
) -> SessionFileContents:
    objects: list[dict[str, Any]] = [header.raw]
    numbers = [number]  # the line of each object, for the diagnostics
    for raw_line in lines:
        number += 1
        if not raw_line.strip():
            continue
        try:
            obj = jsonio.loads(raw_line)
        except ValueError:
            problems.append(SessionDiagnostic(path, number, "invalid JSON, line skipped"))
            continue
        if not isinstance(obj, dict):
            problems.append(SessionDiagnostic(path, number, "not a JSON object, line skipped"))
            continue
        objects.append(obj)
        numbers.append(number)
    migrate_to_current_version(objects)
    entries: list[SessionEntry] = []
    for obj, line in zip(objects[1:], numbers[1:], strict=True):
        if obj.get("type") == "session":
            problems.append(SessionDiagnostic(path, line, "a second session header, line skipped"))
            continue
        try:
            entry = entry_from_dict(obj)
        except EntryParseError as exc:
            problems.append(SessionDiagnostic(path, line, f"{exc}, line skipped"))
            continue
        if isinstance(entry, MessageEntry):
            entry._raw = None
        entries.append(entry)
    return SessionFileContents(SessionHeader(objects[0]), entries, problems, True)


def keep_backup(path: str) -> str:
    """Copy ``path`` to ``<path>.bak`` (``.bak.1``, ``.bak.2``... when that exists); the copy's path."""
    backup = f"{path}.bak"
    number = 0
    while os.path.exists(backup):
        number += 1
        backup = f"{path}.bak.{number}"
    shutil.copy2(path, backup)
    return backup


def lines_of_ids(path: str, entry_ids: list[str]) -> dict[str, list[int]]:
    """The line numbers (1-based) of the lines that carry each id, for diagnostics (a scan of the
    file; only done when something is wrong)."""
    import re

    found: dict[str, list[int]] = {}
    if not entry_ids:
        return found
    pattern = re.compile(rb'"id"\s*:\s*"(' + b"|".join(re.escape(i.encode()) for i in entry_ids) + rb')"')
    try:
        with open(path, "rb") as fh:
            for number, line in enumerate(fh, 1):
                match = pattern.search(line)
                if match is not None:
                    found.setdefault(match.group(1).decode(), []).append(number)
    except OSError:
        pass
    return found


def write_session_bytes(path: str, data: bytes) -> None:
    """Replace a session file whole, keeping its permissions (new files get the usual 0644)."""
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        mode = 0o644
    jsonio.write_atomic(path, data, mode, fsync=False)
