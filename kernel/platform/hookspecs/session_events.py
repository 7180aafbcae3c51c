"""The events of start-up and of a session's life: start, switch, fork, compact, tree, shutdown."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from piko.platform import reducers
from piko.platform.semantics import Semantics
from piko.platform.semantics import event

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    from piko.data.events import ProjectTrustEvent
    from piko.data.events import SessionBeforeCompactEvent
    from piko.data.events import SessionBeforeForkEvent
    from piko.data.events import SessionBeforeSwitchEvent
    from piko.data.events import SessionBeforeTreeEvent
    from piko.data.events import SessionCompactEvent
    from piko.data.events import SessionForkEvent
    from piko.data.events import SessionShutdownEvent
    from piko.data.events import SessionStartEvent
    from piko.data.events import SessionSwitchEvent
    from piko.data.events import SessionTreeEvent
    from piko.platform.protocols import Context


# ---------------------------------------------------------------------------
# Start-up events
# ---------------------------------------------------------------------------


@event(Semantics.FIRST, reducer=reducers.project_trust, can_modify="Yes (decide)")
def piko_project_trust(event: ProjectTrustEvent, ctx: Context) -> Any:
    """May the project in ``event.cwd`` be trusted?

    Fired once at start-up when the project has protected inputs and neither ``--approve`` nor
    ``--no-approve`` decided, before the project's settings, resources and extensions load, so
    only user-level plugins (``~/.pi/agent/extensions/``, the global
    ``extensions`` list, installed distributions) and ``-e`` extensions take part.

    :param event: ``found`` names what the project would load.
    :param ctx: a context without a session: ``cwd``, ``mode``, ``has_ui`` and ``ui``. In an
        interactive run ``has_ui`` is True and ``ctx.ui.select``/``confirm``/``input`` ask on the
        terminal (before the interactive screen starts); in print, JSON and RPC runs ``has_ui``
        is False and those dialogs answer ``None``/``False`` at once (they never wait);
        ``ctx.ui.notify`` writes its line to stderr in every mode.
    Return value: ``{"trusted": "yes" | "no" | "undecided", "remember": bool}``. The first
    handler answering ``"yes"`` or ``"no"`` decides (``remember: true`` saves it in
    ``trust.json``); ``"undecided"`` (or nothing) lets the next handler, the saved decisions and
    ``defaultProjectTrust`` decide. Any other answer is reported and counts as undecided.
    Semantics: first result (the first yes or no).
    """


# ---------------------------------------------------------------------------
# Session lifecycle events
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_session_start(event: SessionStartEvent, ctx: Context) -> None:
    """A session was started, loaded, resumed, forked or reloaded.

    :param event: ``reason`` is ``"startup"``, ``"reload"``, ``"new"``, ``"resume"`` or ``"fork"``.
    """


@event(Semantics.CANCEL)
def piko_session_before_switch(event: SessionBeforeSwitchEvent, ctx: Context) -> Any:
    """The user is about to start a new session or resume another one.

    :param event: ``reason`` is ``"new"`` or ``"resume"``.
    Return value: ``{"cancel": True}`` stops the switch.
    Semantics: cancel (the first handler that cancels wins; the others are not called).
    """


@event(Semantics.NOTIFY)
def piko_session_switch(event: SessionSwitchEvent, ctx: Context) -> None:
    """The session was switched (new session or resumed one)."""


@event(Semantics.CANCEL)
def piko_session_before_fork(event: SessionBeforeForkEvent, ctx: Context) -> Any:
    """A fork of the session at ``entry_id`` is about to be created.

    :param event: ``position`` is ``"before"`` or ``"at"``.
    (``reason`` is omp's name: ``"branch"`` before a user message, ``"fork"`` at an entry).
    Return value: ``{"cancel": True}`` stops the fork; ``skip_conversation_restore`` keeps the
    editor empty.
    """


@event(Semantics.NOTIFY)
def piko_session_fork(event: SessionForkEvent, ctx: Context) -> None:
    """The session was forked into a new file."""


@event(Semantics.CANCEL, can_modify="Yes (supply the compaction)", can_cancel="Yes")
def piko_session_before_compact(event: SessionBeforeCompactEvent, ctx: Context) -> Any:
    """Compaction is about to run.

    Return value: ``{"cancel": True}`` stops it; ``{"compaction": CompactionResult}`` supplies
    the summary instead of the compaction plugin.
    Semantics: cancel (a supplied compaction is kept; a cancel stops at once).
    """


@event(Semantics.NOTIFY)
def piko_session_compact(event: SessionCompactEvent, ctx: Context) -> None:
    """Compaction wrote its ``compaction`` entry."""


@event(Semantics.CANCEL, can_modify="Yes (supply the summary)", can_cancel="Yes")
def piko_session_before_tree(event: SessionBeforeTreeEvent, ctx: Context) -> Any:
    """The user is about to move to another point of the session tree (``/tree``).

    Return value: ``{"cancel": True}`` stops it; ``{"summary": {"summary": ..., "details": ...}}``
    supplies the branch summary; ``custom_instructions``/``replace_instructions`` adjust it.
    """


@event(Semantics.NOTIFY)
def piko_session_tree(event: SessionTreeEvent, ctx: Context) -> None:
    """The session's leaf moved to another point of the tree."""


@event(Semantics.NOTIFY)
def piko_session_shutdown(event: SessionShutdownEvent, ctx: Context) -> None:
    """The session is being torn down (quit, reload, new, resume, fork).

    Semantics: notify; handlers run with a 2-second budget.
    """
