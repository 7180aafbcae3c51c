"""Locate and run the ``rg`` executable for the grep and find tools (never downloads anything)."""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from attrs import define

__all__ = ["RgRun", "RipgrepNotFoundError", "candidate_dirs", "find_rg", "require_rg", "run_rg"]

_EXE = "rg.exe" if os.name == "nt" else "rg"

MISSING_MESSAGE = (
    "ripgrep (rg) is not available: install it with `pip install ripgrep==14.1.0` "
    "into the Python environment that runs piko (it is a piko dependency), "
    "or install rg from your system's package manager so that it is on PATH"
)

_cache: dict[tuple[str, ...], str] = {}


class RipgrepNotFoundError(RuntimeError):
    """No ``rg`` on PATH nor next to the running interpreter."""

    def __init__(self) -> None:
        super().__init__(MISSING_MESSAGE)


def candidate_dirs() -> list[str]:
    """Where the ``ripgrep`` wheel puts ``rg``: the interpreter's scripts directory and its own folder."""
    return list(_interpreter_dirs())


@functools.cache
def _interpreter_dirs() -> tuple[str, ...]:
    dirs: list[str] = []
    for directory in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if directory and directory not in dirs:
            dirs.append(directory)
    # a user-site install (pip install --user) puts scripts under the user scheme
    try:
        user_scripts = sysconfig.get_path("scripts", f"{os.name}_user")
    except KeyError:
        user_scripts = None
    if user_scripts and user_scripts not in dirs:
        dirs.append(user_scripts)
    return tuple(dirs)


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_rg(path: str | None = None) -> str | None:
    """The absolute path of ``rg``, or ``None``.

    Looks in the interpreter's scripts directory first (the version pinned by piko), then on
    ``PATH`` (``path`` overrides ``$PATH``). Found paths are cached per search path.
    """
    search = os.environ.get("PATH", "") if path is None else path
    key = (search, *candidate_dirs())
    cached = _cache.get(key)
    if cached is not None and _is_executable(cached):
        return cached
    found: str | None = None
    for directory in candidate_dirs():
        candidate = os.path.join(directory, _EXE)
        if _is_executable(candidate):
            found = candidate
            break
    if found is None:
        found = shutil.which("rg", path=search)
    if found is not None:
        _cache[key] = found
    return found


def require_rg() -> str:
    """Like :func:`find_rg`, but a missing ``rg`` raises :class:`RipgrepNotFoundError`."""
    found = find_rg()
    if found is None:
        raise RipgrepNotFoundError()
    return found


def start_search(params: dict[str, Any], signal: Any, cwd: str, error: type[Exception]) -> tuple[str, str]:
    """A find or grep call's pattern and resolved search path; an aborted call or a missing rg
    raises (``error`` with pi's message for the abort)."""
    from piko.plugins.tools.paths import resolve_path

    if signal is not None and signal.aborted:
        raise error("Operation aborted")
    require_rg()
    return str(params["pattern"]), resolve_path(params.get("path") or ".", cwd)


def clear_cache() -> None:
    """Forget cached look-ups (tests change ``PATH``)."""
    _cache.clear()


# ---------------------------------------------------------------------------
# Running rg with streamed output
# ---------------------------------------------------------------------------


@define(kw_only=True)
class RgRun:
    """How an rg run ended: exit code, stderr, and whether piko stopped it."""

    code: int | None
    stderr: str
    stopped: bool = False
    aborted: bool = False


class _RgProtocol(asyncio.SubprocessProtocol):
    def __init__(self, on_output: Callable[[bytes], bool], loop: asyncio.AbstractEventLoop) -> None:
        self._on_output = on_output
        self._pending = b""
        self.stderr: list[bytes] = []
        self.transport: asyncio.SubprocessTransport | None = None
        self.done: asyncio.Future[None] = loop.create_future()
        self.stopped = False
        self.error: BaseException | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        if fd == 2:
            self.stderr.append(bytes(data))
            return
        if self.stopped:
            return
        end = data.rfind(b"\n")
        if end == -1:
            self._pending += data
            return
        block = self._pending + data[: end + 1] if self._pending else bytes(data[: end + 1])
        self._pending = bytes(data[end + 1 :])
        self._deliver(block)

    def _deliver(self, block: bytes) -> None:
        try:
            stop = self._on_output(block)
        except BaseException as exc:  # reported by run_rg once rg is gone
            self.error = exc
            stop = True
        if stop:
            self.stop()

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            if self.transport is not None and self.transport.get_returncode() is None:
                try:
                    self.transport.kill()
                except ProcessLookupError:
                    pass

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and self._pending and not self.stopped:
            block, self._pending = self._pending + b"\n", b""
            self._deliver(block)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def run_rg(
    args: list[str],
    on_output: Callable[[bytes], bool],
    *,
    cwd: str | None = None,
    signal: Any = None,
) -> RgRun:
    """Run ``rg args...``, handing its stdout to ``on_output`` in blocks of whole lines.

    ``on_output(block)`` gets bytes ending in ``\\n`` (possibly many lines) and returns ``True``
    to stop rg (a limit was reached). An aborted ``signal`` kills rg too. Raises
    :class:`RipgrepNotFoundError` when rg is missing.
    """
    rg = require_rg()
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _RgProtocol(on_output, loop),
            rg,
            *args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise RuntimeError(f"Failed to run ripgrep: {exc}") from exc
    aborted = False

    def on_abort() -> None:
        nonlocal aborted
        aborted = True
        protocol.stop()

    remove = signal.add_listener(on_abort) if signal is not None else None
    try:
        await protocol.done
    except BaseException:
        protocol.stop()
        raise
    finally:
        if remove is not None:
            remove()
        transport.close()
    if protocol.error is not None:
        raise protocol.error
    return RgRun(
        code=transport.get_returncode(),
        stderr=b"".join(protocol.stderr).decode("utf-8", "replace"),
        stopped=protocol.stopped and not aborted,
        aborted=aborted,
    )
