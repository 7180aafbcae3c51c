"""Stopping a run mode on SIGTERM, SIGHUP (and SIGINT where asked) with pi's exit codes.

pi's print, RPC and interactive modes end cleanly on these signals (what runs is aborted, the
session shuts down) and exit with 128 + the signal's number. :func:`on_exit_signals` installs
handlers on the running event loop that call ``stop(exit_code)``; where signals cannot be handled
(Windows, a thread other than the main one) nothing is installed.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

# pi's exit codes after each signal
EXIT_CODES = {"SIGTERM": 143, "SIGHUP": 129, "SIGINT": 130}


def on_exit_signals(stop: Callable[[int], None], *, interrupt: bool = False) -> Callable[[], None]:
    """Call ``stop(code)`` on SIGTERM or SIGHUP (and SIGINT with ``interrupt``); returns a remover."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for name, code in EXIT_CODES.items():
        number = getattr(signal, name, None)
        if number is None or (name == "SIGINT" and not interrupt):
            continue
        try:
            loop.add_signal_handler(number, stop, code)
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here
            continue
        installed.append(number)

    def remove() -> None:
        for number in installed:
            loop.remove_signal_handler(number)

    return remove
