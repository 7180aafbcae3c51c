"""Child processes in tests: killed and reaped however the test that started them ends."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from typing import TypeVar

P = TypeVar("P", bound="subprocess.Popen[Any]")


@contextmanager
def reaped(process: P) -> Iterator[P]:
    """``with reaped(subprocess.Popen(...)) as process:``: on the way out, a process that is still
    running is killed and waited for, so a failed assertion leaves no child behind."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
