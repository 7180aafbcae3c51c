"""The file write and delete seams: a denied write or unlink may be finished by a privileged handler.

``write_with_fallback`` and ``unlink_with_fallback`` are the only primitives the file tools use
to change a file. When the real operation fails with EPERM, EACCES or EROFS and something
handles ``file_write_fallback`` / ``file_delete_fallback``, the request goes to those handlers
(first ``True`` wins; a raising handler is reported and skipped by the dispatcher). Any other
error, no handler, no success, or a destination that cannot be established re-raises the
original error. Nothing extra happens on the success path.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from typing import Any

from piko.plugins.tools.node_compat import NodeFsError

__all__ = [
    "FALLBACK_ERRNOS",
    "make_dirs",
    "resolve_delete_destination",
    "resolve_write_destination",
    "unlink_with_fallback",
    "write_bytes",
    "write_with_fallback",
]

FALLBACK_ERRNOS = frozenset({errno.EPERM, errno.EACCES, errno.EROFS})


# ---------------------------------------------------------------------------
# The real operations (Node's messages on failure)
# ---------------------------------------------------------------------------


def make_dirs(path: str) -> None:
    """``mkdir -p`` reporting errors as Node's recursive mkdir does (the path whose mkdir failed)."""
    pending = [path]
    while pending:
        current = pending[-1]
        try:
            os.mkdir(current)
        except FileExistsError as exc:
            if not os.path.isdir(current):
                raise NodeFsError(exc, "mkdir", current) from exc
        except FileNotFoundError as exc:
            parent = os.path.dirname(current)
            # a parent that exists yet refuses children (/proc/<pid>) would loop here forever
            if parent == current or os.path.isdir(parent):
                raise NodeFsError(exc, "mkdir", current) from exc
            pending.append(parent)
            continue
        except OSError as exc:
            raise NodeFsError(exc, "mkdir", current) from exc
        pending.pop()


def write_bytes(path: str, data: bytes, *, make_parents: bool = False) -> None:
    """Create or truncate ``path`` and write ``data`` (following a symlink, like ``fs.writeFile``)."""
    if make_parents:
        make_dirs(os.path.dirname(path))
    from piko.plugins.tools.file_kinds import refuse_special
    from piko.plugins.tools.file_kinds import refuse_special_path

    # O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of blocking the open forever
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            refuse_special_path("write", path)
        raise NodeFsError(exc, "open", path) from exc
    try:
        refuse_special("write", path, os.fstat(fd).st_mode)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        raise NodeFsError(exc, "write") from exc
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# Destinations handed to handlers
# ---------------------------------------------------------------------------


def _lstat(path: str) -> os.stat_result | None:
    """``lstat``; ``None`` when the path does not exist; raises on any other failure."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def resolve_write_destination(path: str) -> str | None:
    """Where a write to ``path`` really lands (every symlink followed), or ``None`` if unknowable.

    Unknowable: a dangling final link, a symlink loop, or an ancestor that cannot be examined.
    Components that do not exist yet (parents a handler must create) are appended as given.
    """
    absolute = os.path.abspath(path)
    missing: list[str] = []
    current = absolute
    try:
        while _lstat(current) is None:
            parent = os.path.dirname(current)
            if parent == current:
                return None
            missing.append(os.path.basename(current))
            current = parent
        # strict: a dangling link (final or not), a loop or an unreadable ancestor fails here
        resolved = os.path.realpath(current, strict=True)
    except OSError:
        return None
    return os.path.join(resolved, *reversed(missing))


def resolve_delete_destination(path: str) -> str | None:
    """The path an unlink acts on: the parent resolved, the final component (maybe a link) kept."""
    absolute = os.path.abspath(path)
    parent, name = os.path.split(absolute)
    try:
        return os.path.join(os.path.realpath(parent, strict=True), name)
    except OSError:
        return None


def _session_id(ctx: Any) -> str | None:
    try:
        value = ctx.session_manager.get_session_id()
    except Exception:  # no session (or no ctx): the request carries no id
        return None
    return str(value) if value is not None else None


def _dispatcher(ctx: Any) -> Any:
    app = getattr(ctx, "app", None)
    return getattr(app, "dispatcher", None) if app is not None else None


# ---------------------------------------------------------------------------
# Seams
# ---------------------------------------------------------------------------


async def write_with_fallback(
    ctx: Any, path: str, data: bytes, content: str | bytes, *, make_parents: bool = False
) -> None:
    """Write ``data`` to ``path`` (through the workspace when a plugin offers it,
    ``piko_workspace_write_text``); on a permission denial, offer ``content`` to the write fallback."""
    dispatcher = _dispatcher(ctx)
    if (
        dispatcher is not None
        and isinstance(content, str)
        and dispatcher.has_handlers("workspace_write_text")
    ):
        from piko.data.events import WorkspaceWriteRequest

        held = WorkspaceWriteRequest(path=path, content=content, session_id=_session_id(ctx))
        if await dispatcher.emit("workspace_write_text", held, ctx) is True:
            return
    try:
        await asyncio.to_thread(write_bytes, path, data, make_parents=make_parents)
    except OSError as exc:
        if exc.errno not in FALLBACK_ERRNOS:
            raise
        dispatcher = _dispatcher(ctx)
        if dispatcher is None or not dispatcher.has_handlers("file_write_fallback"):
            raise
        destination = resolve_write_destination(path)
        if destination is None:
            raise
        from piko.data.events import FileWriteRequest

        request = FileWriteRequest(dst=destination, content=content, cause=exc, session_id=_session_id(ctx))
        if await dispatcher.emit("file_write_fallback", request, ctx) is not True:
            raise


async def workspace_text(ctx: Any, path: str) -> str | None:
    """The file's text as the user's workspace holds it (``piko_workspace_read_text``), or ``None``."""
    dispatcher = _dispatcher(ctx)
    if dispatcher is None or not dispatcher.has_handlers("workspace_read_text"):
        return None
    from piko.data.events import WorkspaceReadRequest

    text = await dispatcher.emit(
        "workspace_read_text", WorkspaceReadRequest(path=path, session_id=_session_id(ctx)), ctx
    )
    return text if isinstance(text, str) else None


async def unlink_with_fallback(ctx: Any, path: str) -> None:
    """Remove the file ``path`` (never a directory); on a permission denial, offer the delete fallback."""
    try:
        await asyncio.to_thread(os.unlink, path)
    except OSError as exc:
        error = NodeFsError(exc, "unlink", path)
        if exc.errno not in FALLBACK_ERRNOS:
            raise error from exc
        dispatcher = _dispatcher(ctx)
        if dispatcher is None or not dispatcher.has_handlers("file_delete_fallback"):
            raise error from exc
        try:
            info = os.lstat(path)
        except OSError:
            info = None  # behind the same boundary: the target's kind is unknown
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise error from exc
        destination = resolve_delete_destination(path)
        if destination is None:
            raise error from exc
        from piko.data.events import FileDeleteRequest

        request = FileDeleteRequest(
            dst=destination,
            cause=error,
            confirmed_file=info is not None and stat.S_ISREG(info.st_mode),
            session_id=_session_id(ctx),
        )
        if await dispatcher.emit("file_delete_fallback", request, ctx) is not True:
            raise error from exc
