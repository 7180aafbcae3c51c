"""The one error type of package management: its message is shown to the user as it is."""

from __future__ import annotations


class PackageError(Exception):
    """Installing, removing, updating or resolving a package failed; the message says why."""
