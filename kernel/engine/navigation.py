"""Moving between sessions and within one: new session, resume another, fork, and the tree.

Each move asks extensions first (``session_before_switch``/``_fork``/``_tree`` may cancel),
tears down or keeps what runs, swaps the session manager of the :class:`AgentSession` in
place (modes keep their reference), rebuilds the conversation, and announces the result
(``session_start`` with pi's reasons, plus ``session_switch``/``session_fork``/``session_tree``).
"""

from __future__ import annotations

from typing import Any

from piko.data.events import BranchSummaryRequest
from piko.data.events import SessionBeforeForkEvent
from piko.data.events import SessionBeforeSwitchEvent
from piko.data.events import SessionBeforeTreeEvent
from piko.data.events import SessionForkEvent
from piko.data.events import SessionShutdownEvent
from piko.data.events import SessionStartEvent
from piko.data.events import SessionSwitchEvent
from piko.data.events import SessionTreeEvent
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.engine.retry import SummaryRetry
from piko.engine.setup import tools_for_branch
from piko.lib.records import Record
from piko.lib.records import field
from piko.sessions.entries import readable_message


class SessionChange(Record):
    """How ``new_session``/``switch_session`` ended: cancelled by an extension, or done, with what
    reading the file reported (lines skipped, messages left out of the context)."""

    cancelled: bool = False
    warnings: list[str] = field(factory=list)


class ForkOutcome(Record):
    """How ``fork`` ended; ``text`` is the user message forked before, for the editor."""

    cancelled: bool = False
    text: str | None = None


class TreeOutcome(Record):
    """How ``navigate_tree`` ended: ``aborted`` when the branch summary was cancelled (the move is
    cancelled too); ``editor_text`` is the text of a user message chosen as target; ``warnings``
    tell of damage on the branch reached not reported before."""

    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    warnings: list[str] = field(factory=list)


class ForkMessage(Record):
    """A user message one can fork from."""

    entry_id: str
    text: str


async def _replace_manager(session: Any, manager: Any, reason: str, previous_file: str | None) -> None:
    """Point the session at ``manager``, restore its model and thinking level, announce it."""
    ctx = session.ctx
    await session.dispatcher.emit(
        "session_shutdown",
        SessionShutdownEvent(
            reason=reason, target_session_file=manager.session_file and str(manager.session_file)
        ),
        ctx,
    )
    session.app.clear_extension_timers()
    session.session_manager = manager
    session._provider.last_request = None  # the new session has made no request yet (pi 1.6's cache warmer)
    session.cwd = str(getattr(manager, "cwd", session.cwd))
    context = manager.build_context()
    session.agent.state.messages = list(context.messages)
    session.queues.reset()
    registry = session.model_registry
    if context.model:
        restored = registry.find(*context.model)
        if restored is not None and registry.has_auth(restored.provider):
            session.model = restored
    if context.thinking_level and context.messages:
        session.models.restore_thinking_level(context.thinking_level)
    elif session.model is not None and not manager.get_entries():
        manager.append_model_change(session.model.provider, session.model.id)
        manager.append_thinking_level_change(session.thinking_level)
    tools = tools_for_branch(session.app, manager)
    if tools is not None:  # the tools that session recorded, or the start-up selection (as pi)
        session.set_active_tools(tools, persist=False)
    session._rebuild_system_prompt()
    await session.dispatcher.emit(
        "session_start", SessionStartEvent(reason=reason, previous_session_file=previous_file), ctx
    )


async def new_session(session: Any, parent_session: str | None = None) -> SessionChange:
    """Start a fresh session (``/new``, RPC ``new_session``)."""
    from piko.engine.setup import session_dir
    from piko.sessions.manager import SessionManager

    before = await session.dispatcher.emit(
        "session_before_switch", SessionBeforeSwitchEvent(reason="new"), session.ctx
    )
    if before and before.get("cancel"):
        return SessionChange(cancelled=True)
    await session.abort()
    previous = session.session_file
    if session.session_manager.session_file is None:
        manager = SessionManager.in_memory(session.cwd)
    else:
        manager = SessionManager.create(session.cwd, session_dir=session_dir(session.app))
    if parent_session:
        manager.new_session(parent_session=parent_session)
    await _replace_manager(session, manager, "new", previous)
    await session.dispatcher.emit(
        "session_switch", SessionSwitchEvent(reason="new", previous_session_file=previous), session.ctx
    )
    return SessionChange()


async def switch_session(session: Any, session_path: str) -> SessionChange:
    """Resume another session file (``/resume``, RPC ``switch_session``)."""
    from piko.engine.setup import session_dir
    from piko.sessions.manager import SessionManager

    before = await session.dispatcher.emit(
        "session_before_switch",
        SessionBeforeSwitchEvent(reason="resume", target_session_file=session_path),
        session.ctx,
    )
    if before and before.get("cancel"):
        return SessionChange(cancelled=True)
    manager = SessionManager.open(session_path, cwd=session.cwd, session_dir=session_dir(session.app))
    await session.abort()
    previous = session.session_file
    await _replace_manager(session, manager, "resume", previous)
    await session.dispatcher.emit(
        "session_switch", SessionSwitchEvent(reason="resume", previous_session_file=previous), session.ctx
    )
    # complete: the context was built above
    return SessionChange(warnings=[str(d) for d in manager.diagnostics])


def fork_reason(position: str) -> str:
    """omp's ``reason`` of a fork at ``position``: ``"branch"`` rewinds a user message
    (``"before"``), ``"fork"`` keeps the entry (``"at"``)."""
    return "fork" if position == "at" else "branch"


async def fork(session: Any, entry_id: str, position: str = "before") -> ForkOutcome:
    """A new session from the history before a user message (``/fork``, RPC ``fork``), or with
    all of it (``position="at"``: ``/clone``); the outcome holds the message's text, so a front
    end can put it back in the editor."""
    from piko.engine.setup import session_dir
    from piko.sessions.manager import SessionManager

    before = await session.dispatcher.emit(
        "session_before_fork",
        SessionBeforeForkEvent(entry_id=entry_id, position=position, reason=fork_reason(position)),
        session.ctx,
    )
    if before and before.get("cancel"):
        return ForkOutcome(cancelled=True)
    manager = session.session_manager
    entry = manager.get_entry(entry_id)
    if entry is None:
        raise ValueError("Invalid entry ID for forking")
    text: str | None = None
    if position == "at":
        target = entry.id
    else:
        message = readable_message(entry)
        if not isinstance(message, UserMessage):
            raise ValueError("Invalid entry ID for forking")
        target = entry.parent_id
        text = text_of(message.content)
    await session.abort()
    previous = session.session_file
    if target is None:
        replacement = (
            SessionManager.create(session.cwd, session_dir=session_dir(session.app))
            if manager.session_file
            else SessionManager.in_memory(session.cwd)
        )
        if previous:
            replacement.new_session(parent_session=previous)
    else:
        # branched from the entries in memory, not re-read from the file: a session whose file
        # is not written yet (no answer so far), or a branch without an answer, loses nothing
        manager.create_branched_session(target)
        replacement = manager
    await _replace_manager(session, replacement, "fork", previous)
    await session.dispatcher.emit(
        "session_fork",
        SessionForkEvent(previous_session_file=previous, reason=fork_reason(position)),
        session.ctx,
    )
    return ForkOutcome(text=text)


def fork_messages(session: Any) -> list[ForkMessage]:
    """User messages one can fork from (RPC ``get_fork_messages``, ``/fork``)."""
    out = []
    for entry in session.session_manager.get_entries():
        message = readable_message(entry)
        if isinstance(message, UserMessage):
            text = text_of(message.content)
            if text:
                out.append(ForkMessage(entry_id=entry.id, text=text))
    return out


async def navigate_tree(
    session: Any,
    target_id: str | None,
    *,
    summarize: bool = False,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
) -> TreeOutcome:
    """Move the leaf to ``target_id`` (``/tree``), optionally summarizing the branch left behind.

    A user message as target puts the leaf on its parent and gives its text for the editor.
    """
    manager = session.session_manager
    reported = len(manager.diagnostics)
    old_leaf = manager.leaf_id
    target = manager.get_entry(target_id) if target_id else None
    if target_id and target is None:
        raise ValueError(f"Entry {target_id} not found")
    editor_text = None
    new_leaf = target_id
    message = readable_message(target) if target is not None else None
    if isinstance(message, UserMessage) and target is not None:
        new_leaf = target.parent_id
        editor_text = text_of(message.content)
    path_ids = {e.id for e in manager.get_branch(new_leaf)} if new_leaf else set()
    to_summarize = [e for e in manager.get_branch() if e.id not in path_ids]
    preparation = {
        "targetId": target_id,
        "oldLeafId": old_leaf,
        "entriesToSummarize": to_summarize,
        "userWantsSummary": summarize,
        "customInstructions": custom_instructions,
        "replaceInstructions": replace_instructions,
        "label": label,
    }
    from piko.lib.abort import AbortController

    controller = AbortController()
    before = await session.dispatcher.emit(
        "session_before_tree",
        SessionBeforeTreeEvent(preparation=preparation, signal=controller.signal),
        session.ctx,
    )
    if before and before.get("cancel"):
        return TreeOutcome(cancelled=True)
    if before and before.get("custom_instructions") is not None:
        custom_instructions = before["custom_instructions"]
    summary = before.get("summary") if before else None
    from_extension = summary is not None
    if summary is None and summarize and to_summarize and session.model is not None:
        from piko.engine.compaction import ask_strategy

        request = BranchSummaryRequest(
            entries=to_summarize,
            model=session.model,
            api_key=session.model_registry.api_key(session.model.provider),
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            signal=controller.signal,
            thinking_level=session.thinking_level,
            retry=SummaryRetry(session.services, source="branchSummary", model=session.model),
        )
        try:
            # called directly, as compaction is: a summary may take longer than a handler budget,
            # and its failure must reach the caller
            summary = await ask_strategy(session, "summarize_branch", request)
        except Exception:
            if controller.signal.aborted:
                return TreeOutcome(cancelled=True, aborted=True)
            raise
    if new_leaf is None:
        manager.reset_leaf()
    else:
        manager.branch(new_leaf)
    summary_entry = None
    if summary:
        from piko.platform.dispatch import normalize_result

        data = normalize_result(summary) or {}
        if data.get("summary"):
            entry_id = manager.append_branch_summary(
                old_leaf or "root",
                str(data["summary"]),
                data.get("details"),
                True if from_extension else None,
            )
            summary_entry = manager.get_entry(entry_id)
            if label:
                manager.append_label(entry_id, label)
    session.rebuild_from_session()
    tools = tools_for_branch(session.app, session.session_manager, keep_unrecorded=True)
    if tools is not None:  # the branch recorded its tools: they come back with it
        session.set_active_tools(tools, persist=False)
    await session.dispatcher.emit(
        "session_tree",
        SessionTreeEvent(
            new_leaf_id=manager.leaf_id,
            old_leaf_id=old_leaf,
            summary_entry=summary_entry,
            from_extension=from_extension or None,
        ),
        session.ctx,
    )
    return TreeOutcome(editor_text=editor_text, warnings=[str(d) for d in manager.diagnostics[reported:]])
