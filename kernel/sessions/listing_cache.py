"""The listing cache: what listing found in each session file, kept per session folder, so that
listing thousands of sessions reads only what changed since the last listing.

A session file only grows (entries are appended; a migration rewrites it whole). For each file
the cache keeps its size and modification time, the scan of its complete lines
(:class:`~piko.sessions.listing.ListingScan`), where that scan stopped, and the first bytes of
the file and the bytes just before that point. Listing then stats every file and:

- opens none whose size and modification time are unchanged;
- reads a file that grew from where the last scan stopped, once its first bytes and the bytes
  before that point are still the same (the file was appended to, not rewritten);
- reads anything else whole (a rewritten, shrunk or new file).

The cache lives in ``<cache dir>/session-lists/`` (``PIKO_CACHE_DIR``); a cache that cannot be
read or written is ignored: listing is then as slow as without it, never wrong. With
``PIKO_NO_CACHE=1`` it is neither read nor written, like piko's other caches.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import IO
from typing import Any

from piko.config import cache
from piko.config.paths import cache_dir
from piko.lib import jsonio
from piko.lib.records import replace
from piko.sessions.listing import ListingScan
from piko.sessions.listing import SessionInfo
from piko.sessions.listing import line_blocks
from piko.sessions.listing import lines_of

CACHE_VERSION = 1
_CHECK_BYTES = 32  # the bytes before the scanned point that must be unchanged for an append


def _cache_file(directory: str) -> str:
    digest = hashlib.sha256(os.path.abspath(directory).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(str(cache_dir()), "session-lists", f"{digest}.json")


def _scan_to_json(scan: ListingScan) -> dict[str, Any]:
    return {
        "header": scan.header,
        "count": scan.message_count,
        "first": scan.first_message,
        "name": scan.name,
        "last": scan.last_activity,
    }


def _scan_from_json(data: Any) -> ListingScan | None:
    if not isinstance(data, dict):
        return None
    header, count, first = data.get("header"), data.get("count"), data.get("first")
    name, last = data.get("name"), data.get("last")
    if not (
        (header is None or isinstance(header, dict))
        and isinstance(count, int)
        and isinstance(first, str)
        and (name is None or isinstance(name, str))
        and (last is None or isinstance(last, int))
    ):
        return None
    return ListingScan(header=header, message_count=count, first_message=first, name=name, last_activity=last)


class _Folder:
    """The cache records of one session folder: loaded once, written back if anything changed."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.path = _cache_file(directory)
        self.records: dict[str, dict[str, Any]] = {}
        self.changed = False
        self.enabled = cache.enabled()
        if not self.enabled:
            return
        try:
            data = jsonio.read_json_file(self.path)
        except (OSError, ValueError):
            return
        if (
            isinstance(data, dict)
            and data.get("version") == CACHE_VERSION
            and isinstance(data.get("files"), dict)
        ):
            self.records = data["files"]

    def save(self) -> None:
        """Write the records back (those of files no longer in the folder dropped)."""
        if not (self.changed and self.enabled):
            return
        try:
            names = set(os.listdir(self.directory))
        except OSError:
            names = set()
        kept = {name: record for name, record in self.records.items() if name in names}
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            data = jsonio.dumpb({"version": CACHE_VERSION, "files": kept})
            jsonio.write_atomic(self.path, data, 0o600, fsync=False)
        except (OSError, ValueError, TypeError):
            pass  # a cache that cannot be written: the next listing reads again


def _info(folder: _Folder, path: str) -> SessionInfo | None:
    """The listing record of ``path``, from the cache where it can be, scanning what it must."""
    name = os.path.basename(path)
    try:
        stat = os.stat(path)
    except OSError:
        return None
    record = folder.records.get(name)
    if (
        isinstance(record, dict)
        and record.get("size") == stat.st_size
        and record.get("mtime") == stat.st_mtime_ns
    ):
        result = _scan_from_json(record.get("result"))
        if result is not None:
            return result.info(path, stat.st_mtime) if record.get("session", True) else None
    committed = _scan_from_json(record.get("scan")) if isinstance(record, dict) else None
    offset = record.get("offset") if isinstance(record, dict) else None
    prefix = b""  # the bytes just before where this read starts
    try:
        with open(path, "rb") as fh:
            appendable = (  # only an append makes a file longer and leaves its start as it was
                isinstance(record, dict)
                and record.get("session", True)
                and committed is not None
                and isinstance(offset, int)
                and 0 < offset <= stat.st_size
                and stat.st_size > int(record.get("size") or 0)
            )
            if appendable and committed is not None and isinstance(offset, int):
                start = fh.read(min(offset, _CHECK_BYTES))  # the file's first bytes, as cached?
                back = min(offset, _CHECK_BYTES)
                fh.seek(offset - back)
                prefix = fh.read(back)
                if start.hex() != record.get("head") or prefix.hex() != record.get("check"):  # type: ignore[union-attr]
                    committed, offset, prefix = ListingScan(), 0, b""  # rewritten: read it all again
                    fh.seek(0)
            else:
                committed, offset = ListingScan(), 0
            assert committed is not None and isinstance(offset, int)
            is_session, read, first_bytes, tail, rest = _scan_rest(fh, committed)
    except OSError:
        return None
    result = replace(committed)  # a copy: the committed scan stays as it was
    if is_session and rest:
        is_session = result.add_lines(lines_of(rest))
    new_offset = offset + read
    new_check = (prefix + tail)[-_CHECK_BYTES:].hex()
    kept_head = record.get("head") if isinstance(record, dict) else None
    new_head = first_bytes.hex() if offset == 0 else str(kept_head or "")
    folder.records[name] = {
        "size": stat.st_size,
        "mtime": stat.st_mtime_ns,
        "offset": new_offset,
        "check": new_check,
        "head": new_head,
        "session": is_session,
        "scan": _scan_to_json(committed),
        "result": _scan_to_json(result),
    }
    folder.changed = True
    return result.info(path, stat.st_mtime) if is_session else None


def _scan_rest(fh: IO[bytes], scan: ListingScan) -> tuple[bool, int, bytes, bytes, bytes]:
    """Give ``scan`` the complete lines from ``fh``'s position on, a block at a time (memory for
    one block, whatever the file's size); stops at a first line that is no session header.

    Returns whether the file is a session, how many bytes of complete lines were read, their
    first and last ``_CHECK_BYTES`` bytes, and what follows the last newline (a line maybe cut
    short, which the caller scans on a copy)."""
    read = 0
    head = tail = b""
    for block in line_blocks(fh):
        if not block.endswith(b"\n"):
            return True, read, head, tail, block
        if len(head) < _CHECK_BYTES:
            head += block[: _CHECK_BYTES - len(head)]
        tail = (tail + block[-_CHECK_BYTES:])[-_CHECK_BYTES:]
        read += len(block)
        if not scan.add_lines(lines_of(block)):
            return False, read, head, tail, b""
    return True, read, head, tail, b""


def cached_session_infos(files: Iterable[str]) -> list[SessionInfo]:
    """The listing records of ``files`` (not sorted); files that are not sessions are left out."""
    by_folder: dict[str, list[str]] = {}
    for path in files:
        by_folder.setdefault(os.path.dirname(path), []).append(path)
    infos: list[SessionInfo] = []
    for directory, paths in by_folder.items():
        folder = _Folder(directory)
        for path in paths:
            info = _info(folder, path)
            if info is not None:
                infos.append(info)
        folder.save()
    return infos
