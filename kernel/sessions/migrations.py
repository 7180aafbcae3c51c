"""Upgrading old session files to v3 (as pi does on load) and moving misplaced session files.

Version 1 files are a flat list: no ``id``/``parentId``, compactions point at the first kept
entry by its index in the file (``firstKeptEntryIndex``, the header being index 0) and the
header has no ``version``. Version 2 added the tree; version 3 renamed the message role
``hookMessage`` to ``custom``. Any other ``version`` (a string, a fraction, a newer version) is
not migrated: the manager leaves such a file as it is. Migration works on the parsed JSON objects in place, adding
keys at the end as JavaScript does, so the rewritten file is the one pi would write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from piko.lib import jsonio
from piko.sessions.entries import CURRENT_SESSION_VERSION
from piko.sessions.entries import session_version
from piko.sessions.ids import new_entry_id

__all__ = [
    "encode_cwd",
    "file_version",
    "migrate_sessions_from_agent_root",
    "migrate_to_current_version",
]


def file_version(objects: list[dict[str, Any]]) -> int | None:
    """The version of a parsed file: its header's ``version`` (1 when absent), ``None`` when it
    is not a version piko knows (see :func:`piko.sessions.entries.session_version`)."""
    header = next((o for o in objects if o.get("type") == "session"), None)
    return session_version(header.get("version") if header is not None else None)


def _v1_to_v2(objects: list[dict[str, Any]]) -> None:
    ids: set[str] = set()
    previous: str | None = None
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 2
            continue
        # pi checks new ids against an empty set here; uniqueness within the file still holds
        # with overwhelming probability, and we add the check.
        obj["id"] = entry_id = new_entry_id(ids)
        ids.add(entry_id)
        obj["parentId"] = previous
        previous = entry_id
        if obj.get("type") == "compaction":
            index = obj.get("firstKeptEntryIndex")
            if isinstance(index, int) and not isinstance(index, bool):
                target = objects[index] if 0 <= index < len(objects) else None
                if target is not None and target.get("type") != "session" and "id" in target:
                    obj["firstKeptEntryId"] = target["id"]
                del obj["firstKeptEntryIndex"]


def _v2_to_v3(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 3
            continue
        if obj.get("type") == "message":
            message = obj.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


def migrate_to_current_version(objects: list[dict[str, Any]]) -> bool:
    """Bring parsed file objects (header included) to v3 in place; True when anything changed.

    A version piko does not know is left alone (False): guessing would rewrite the file wrongly.
    """
    version = file_version(objects)
    if version is None or version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _v1_to_v2(objects)
    if version < 3:
        _v2_to_v3(objects)
    return True


def encode_cwd(cwd: str) -> str:
    """The directory name of a cwd's sessions: ``/home/u/p`` -> ``--home-u-p--``."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + trimmed.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def migrate_sessions_from_agent_root(agent_dir: str | os.PathLike[str]) -> list[Path]:
    """Move ``<agent_dir>/*.jsonl`` session files (pi 0.30.0 put them there) to ``sessions/<cwd>/``.

    Files whose first line is not a session header with a cwd, or whose target exists, stay.
    Returns the new paths.
    """
    root = Path(agent_dir)
    moved: list[Path] = []
    try:
        files = sorted(p for p in root.iterdir() if p.name.endswith(".jsonl") and p.is_file())
    except OSError:
        return moved
    for path in files:
        try:
            with open(path, "rb") as fh:
                first = fh.readline()
            if not first.strip():
                continue
            header = jsonio.loads(first)
            if not isinstance(header, dict) or header.get("type") != "session" or not header.get("cwd"):
                continue
            target_dir = root / "sessions" / encode_cwd(str(header["cwd"]))
            target_dir.mkdir(parents=True, exist_ok=True)
            target = target_dir / path.name
            if target.exists():
                continue
            path.rename(target)
            moved.append(target)
        except (OSError, ValueError):
            continue
    return moved
