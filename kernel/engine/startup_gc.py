"""The cyclic garbage collector while piko starts: collections are rare until the first turn ends.

Start-up makes tens of thousands of long-lived objects (modules, classes, functions, the model
catalog) and next to no garbage, yet CPython's collector, with its default threshold of 700
allocations, scanned them some 70 times during a ``pi -p`` round trip: 11 ms of about 150.
:func:`pause` raises the first generation's threshold so that a collection comes only every
:data:`STARTUP_THRESHOLD` allocations (memory stays bounded if the first turn takes long);
:func:`resume`, called when the first agent turn ends, moves everything alive into the
permanent generation (``gc.freeze``: never scanned again) and restores the thresholds.
"""

from __future__ import annotations

import gc

STARTUP_THRESHOLD = 100_000

_saved: tuple[int, int, int] | None = None


def pause() -> None:
    """Collect rarely from now on (once per :data:`STARTUP_THRESHOLD` allocations)."""
    global _saved
    if _saved is None:
        _saved = gc.get_threshold()
        gc.set_threshold(STARTUP_THRESHOLD, _saved[1], _saved[2])


def resume() -> None:
    """Freeze what start-up made and collect as usual again; does nothing when not paused."""
    global _saved
    if _saved is not None:
        gc.freeze()
        gc.set_threshold(*_saved)
        _saved = None
