"""RPC mode's stdout: protocol records only, everything else printed goes to stderr.

:func:`take_over_stdout` keeps a private duplicate of file descriptor 1 for protocol records,
points descriptor 1 (and ``sys.stdout``) at stderr for the duration, so a plugin's ``print`` or
a child process inheriting stdout cannot break the client's framing, and undoes it at the end.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any
from typing import TextIO

from piko.plugins.modes.rpc.jsonl import serialize


class RawJson:
    """JSON text to put in a response as it is (already serialized)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class ProtocolOutput:
    """Writes whole records to one file descriptor; a closed pipe silences it rather than failing."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False
        self._lock = threading.Lock()

    def send(self, value: Any) -> None:
        """Write ``value`` as one JSON line."""
        self.write_raw(serialize(value))

    def write_raw(self, data: bytes) -> None:
        """Write already framed bytes (one or more complete records)."""
        if self.closed:
            return
        view = memoryview(data)
        with self._lock:
            try:
                while view:
                    written = os.write(self.fd, view)
                    view = view[written:]
            except InterruptedError:  # pragma: no cover - retried by os.write since 3.5
                pass
            except OSError:  # the client stopped reading: nothing more can reach it
                self.closed = True


class StdoutGuard:
    """Restores descriptor 1 and ``sys.stdout`` as they were."""

    def __init__(self, output: ProtocolOutput, saved_fd: int | None, saved_stdout: TextIO) -> None:
        self.output = output
        self._saved_fd = saved_fd
        self._saved_stdout = saved_stdout

    def restore(self) -> None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        sys.stdout = self._saved_stdout
        if self._saved_fd is not None:
            try:
                os.dup2(self._saved_fd, 1)
            except OSError:
                pass
            self._saved_fd = None


def take_over_stdout() -> StdoutGuard:
    """Reserve the real stdout for protocol records; stray output goes to stderr."""
    saved_stdout = sys.stdout
    try:
        saved_stdout.flush()
    except (AttributeError, OSError, ValueError):
        pass
    try:
        protocol_fd = os.dup(1)
    except OSError:  # no usable stdout: records go nowhere, the client sees EOF
        return StdoutGuard(ProtocolOutput(-1), None, saved_stdout)
    saved_fd: int | None = None
    try:
        os.dup2(2, 1)
        saved_fd = protocol_fd
    except OSError:
        pass
    sys.stdout = sys.stderr
    return StdoutGuard(ProtocolOutput(protocol_fd), saved_fd, saved_stdout)
