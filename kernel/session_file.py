"""Reading a session file: its header and entries, what is broken skipped and reported, older
versions migrated in memory (the manager rewrites them, as pi does)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from piko import jsonio
from piko.records import Record
from piko.session_entries import (
    CURRENT_SESSION_VERSION,
    EntryParseError,
    MessageEntry,
    SessionEntry,
    SessionHeader,
    entry_from_dict,
    gc_paused,
    read_entries,
)
from piko.session_migrations import migrate_to_current_version


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
        return f"{self.path}:{self.line}: {self.message}"


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


def read_session_file(
    path: str,
) -> tuple[SessionHeader | None, list[SessionEntry], list[SessionDiagnostic], bool]:
    """Read a session file (see :func:`_read_session_file_unpaused`) with the collector paused."""
    with gc_paused():
        return _read_session_file_unpaused(path)


def _read_session_file_unpaused(
    path: str,
) -> tuple[SessionHeader | None, list[SessionEntry], list[SessionDiagnostic], bool]:
    """``(header, entries, diagnostics, migrated)`` of a session file.

    A blank file gives no header. A file whose first readable line is not a session header
    raises :class:`SessionFileError` (pi would overwrite it; piko leaves it alone). Older
    versions are migrated in memory (``migrated`` is then true and every line is new).
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
            return None, [], problems, False
        if header.version < CURRENT_SESSION_VERSION:
            return _read_old_version(path, header, lines, number, problems)
        rest = fh.readlines()
    entries, skipped = read_entries(rest)
    for index, problem in skipped:
        problems.append(SessionDiagnostic(path, number + 1 + index, f"{problem}, line skipped"))
    return header, entries, problems, False


def _read_old_version(
    path: str,
    header: SessionHeader,
    lines: Iterator[bytes],
    number: int,
    problems: list[SessionDiagnostic],
) -> tuple[SessionHeader, list[SessionEntry], list[SessionDiagnostic], bool]:
    objects: list[dict[str, Any]] = [header.raw]
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
    migrate_to_current_version(objects)
    entries: list[SessionEntry] = []
    for obj in objects[1:]:
        if obj.get("type") == "session":
            continue
        try:
            entry = entry_from_dict(obj)
        except EntryParseError as exc:
            problems.append(SessionDiagnostic(path, 0, f"{exc}, entry skipped"))
            continue
        if isinstance(entry, MessageEntry):
            entry._raw = None
        entries.append(entry)
    return SessionHeader(objects[0]), entries, problems, True
