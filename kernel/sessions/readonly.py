"""The read-only view of a session that extensions get (pi's ``ReadonlySessionManager``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piko.lib.forwarding import Forwarded

if TYPE_CHECKING:
    from piko.sessions.context import SessionContext
    from piko.sessions.entries import SessionEntry
    from piko.sessions.entries import SessionHeader
    from piko.sessions.manager import SessionManager
    from piko.sessions.manager import SessionTreeNode


class ReadonlySessionManager:
    """What extensions may do with the session: read it (pi's ``ReadonlySessionManager``)."""

    __slots__ = ("_manager",)

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager

    def get_cwd(self) -> str:
        return self._manager.cwd

    def get_session_dir(self) -> str:
        return self._manager.session_dir

    def get_session_id(self) -> str:
        return self._manager.session_id

    def get_session_file(self) -> str | None:
        return self._manager.session_file

    def get_leaf_id(self) -> str | None:
        return self._manager.leaf_id

    def get_leaf_entry(self) -> SessionEntry | None:
        return self._manager.get_leaf_entry()

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._manager.get_entry(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        """The label set on an entry (``pi.set_label(entry_id, label)``), or ``None``."""
        return self._manager.get_label(entry_id)

    def get_branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        return self._manager.get_branch(leaf_id)

    def get_header(self) -> SessionHeader:
        return self._manager.header

    def get_entries(self) -> list[SessionEntry]:
        return self._manager.get_entries()

    def get_tree(self) -> list[SessionTreeNode]:
        return self._manager.get_tree()

    def get_session_name(self) -> str | None:
        return self._manager.get_session_name()

    def get_children(self, parent_id: str | None) -> list[SessionEntry]:
        """The entries whose parent is ``parent_id`` (``None``: the roots)."""
        return self._manager.get_children(parent_id)

    def build_context(self) -> SessionContext:
        return self._manager.build_context()

    session_id: Forwarded[str] = Forwarded("_manager")
    session_file: Forwarded[str | None] = Forwarded("_manager")
    cwd: Forwarded[str] = Forwarded("_manager")
    leaf_id: Forwarded[str | None] = Forwarded("_manager")
    header: Forwarded[SessionHeader] = Forwarded("_manager")
