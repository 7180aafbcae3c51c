"""The further events of the extension reference, for plugins that emit or watch them."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from piko.platform import reducers
from piko.platform.semantics import Semantics
from piko.platform.semantics import event

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    from piko.data.events import AgentSettledEvent
    from piko.data.events import BeforeProviderHeadersEvent
    from piko.data.events import BeforeSubagentSpawnEvent
    from piko.data.events import CacheWarmingDecisionEvent
    from piko.data.events import ContextWithSystemEvent
    from piko.data.events import CredentialDisabledEvent
    from piko.data.events import GoalUpdatedEvent
    from piko.data.events import McpNotificationEvent
    from piko.data.events import McpServersChangeEvent
    from piko.data.events import PlanReviewRequestedEvent
    from piko.data.events import PlanReviewResolvedEvent
    from piko.data.events import RetryFallbackAppliedEvent
    from piko.data.events import RetryFallbackSucceededEvent
    from piko.data.events import SessionCompactingEvent
    from piko.data.events import SessionInfoChangedEvent
    from piko.data.events import SessionStopEvent
    from piko.data.events import TodoReminderEvent
    from piko.data.events import ToolApprovalRequestedEvent
    from piko.data.events import ToolApprovalResolvedEvent
    from piko.data.events import TtsrTriggeredEvent
    from piko.data.events import UiPromptEndEvent
    from piko.data.events import UiPromptStartEvent
    from piko.data.events import UserPythonEvent
    from piko.platform.protocols import Context


# ---------------------------------------------------------------------------
# More events of the extension reference
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_agent_settled(event: AgentSettledEvent, ctx: Context) -> None:
    """The agent finished its run and nothing is queued (pi 1.6).

    The moment to reload, hand off or report, once per settled run.
    """


@event(Semantics.NOTIFY)
def piko_mcp_servers_change(event: McpServersChangeEvent, ctx: Context) -> None:
    """An extension registered or removed an MCP server after start-up (pi 1.6).

    ``pi.register_mcp_server`` / ``unregister_mcp_server`` fire it once the session runs; the MCP
    plugin connects or closes the server (``App.extension_mcp_servers`` holds them all).
    """


@event(Semantics.NOTIFY)
def piko_mcp_notification(event: McpNotificationEvent, ctx: Context) -> None:
    """An MCP server sent a notification (omp), after the MCP plugin handled the ones it knows.

    Every method reaches it, server-specific ones too; ``pi.events.on("mcp_notification")`` gets
    the same as a dict.
    """


@event(Semantics.NOTIFY)
def piko_session_info_changed(event: SessionInfoChangedEvent, ctx: Context) -> None:
    """The session's name changed (``/name``, ``pi.set_session_name``, RPC ``set_session_name``)."""


@event(
    Semantics.COLLECT,
    reducer=reducers.session_stop,
    can_modify="Yes (`{continue, additionalContext}`: another turn)",
    can_cancel='Yes (`{decision: "block", reason}`: refuse to stop)',
)
def piko_session_stop(event: SessionStopEvent, ctx: Context) -> Any:
    """The main session is about to settle (omp's stop hook).

    It fires after a run that was not aborted and did not fail. ``{"continue": True, "additionalContext": text}`` asks for another turn with ``text``, at most
    8 times a run (``event.continuations`` counts them); ``{"decision": "block", "reason": text}``
    refuses to stop, outranks advisory requests, does not spend that allowance and holds until a
    handler lets the session stop or the user aborts (a refusal without a reason gets a
    diagnostic continuation).

    Return value: ``{"continue": True, "additionalContext": str}`` or ``{"decision": "block",
    "reason": str}``; anything else lets the session stop.
    """


@event(
    Semantics.COLLECT,
    reducer=reducers.session_compacting,
    can_modify="Yes (summary context, prompt, stored data)",
)
def piko_session_compacting(event: SessionCompactingEvent, ctx: Context) -> Any:
    """The summarizer is about to run (omp's ``session.compacting``).

    Skipped when ``session_before_compact`` supplied the compaction. ``context`` lines are given
    to the summarizer with the conversation, ``prompt`` replaces its instructions (the last one
    given wins) and ``preserveData`` is merged into the compaction entry's ``details``.

    :param event: ``messages`` are the messages summarized.
    Return value: ``{"context": [str], "prompt": str, "preserveData": {...}}``, any part.
    """


@event(Semantics.NOTIFY)
def piko_before_provider_headers(event: BeforeProviderHeadersEvent, ctx: Context) -> None:
    """The headers of a provider request are assembled (pi 1.6).

    It fires after every plugin's ``piko_provider_request_headers``: handlers change
    ``event.headers`` in place (a key set to None is removed), in load order; once per request,
    retries reuse them.
    """


@event(Semantics.CHAIN, reducer=reducers.context_with_system, empty=reducers.prompt_and_messages)
def piko_context_with_system(event: ContextWithSystemEvent, ctx: Context) -> Any:
    """The system prompt and messages of the next provider request are assembled (pi 1.6).

    It fires after every ``context`` handler; what handlers return is sent as it is, for this
    request only (``before_agent_start`` changes the prompt durably).

    :param event: the messages are a copy.
    Return value: ``{"systemPrompt": str, "messages": [...]}``, either part; each handler sees
    the previous one's.
    """


@event(Semantics.NOTIFY)
def piko_ui_prompt_start(event: UiPromptStartEvent, ctx: Context) -> None:
    """A ``ctx.ui`` dialog opened (pi 1.6).

    Fired without being awaited when ``select``, ``confirm``, ``input``, ``editor`` or ``custom``
    waits on the user (not in print or JSON mode); overlapping dialogs make one span.

    :param event: ``reason`` is ``"ui_prompt"``.
    """


@event(Semantics.NOTIFY)
def piko_ui_prompt_end(event: UiPromptEndEvent, ctx: Context) -> None:
    """A ``ctx.ui`` dialog closed (pi 1.6).

    :param event: ``reason`` is ``"ui_prompt"``.
    """


@event(Semantics.NOTIFY)
def piko_cache_warming_decision(event: CacheWarmingDecisionEvent, ctx: Context) -> None:
    """Before a prompt-cache warming refresh (omp). piko does not warm caches: never fired."""


@event(Semantics.NOTIFY)
def piko_tool_approval_requested(event: ToolApprovalRequestedEvent, ctx: Context) -> None:
    """A tool call waits for approval (omp). piko has no approval tiers: never fired yet."""


@event(Semantics.NOTIFY)
def piko_tool_approval_resolved(event: ToolApprovalResolvedEvent, ctx: Context) -> None:
    """A tool call's approval was decided (omp). Never fired yet."""


@event(Semantics.NOTIFY)
def piko_plan_review_requested(event: PlanReviewRequestedEvent, ctx: Context) -> None:
    """An interactive plan review opened (omp). For a plan-mode plugin to fire."""


@event(Semantics.NOTIFY)
def piko_plan_review_resolved(event: PlanReviewResolvedEvent, ctx: Context) -> None:
    """A plan review closed (omp). For a plan-mode plugin to fire.

    :param event: ``by`` is ``"local"`` or ``"extension"``.
    """


@event(Semantics.NOTIFY)
def piko_before_subagent_spawn(event: BeforeSubagentSpawnEvent, ctx: Context) -> None:
    """A subagent is about to be spawned (omp). piko runs no subagents: for a subagent plugin to fire."""


@event(Semantics.NOTIFY)
def piko_retry_fallback_applied(event: RetryFallbackAppliedEvent, ctx: Context) -> None:
    """Auto-retry switched to a fallback model (omp). For a fallback plugin to fire."""


@event(Semantics.NOTIFY)
def piko_retry_fallback_succeeded(event: RetryFallbackSucceededEvent, ctx: Context) -> None:
    """A request succeeded on a fallback model (omp). For a fallback plugin to fire."""


@event(Semantics.NOTIFY)
def piko_ttsr_triggered(event: TtsrTriggeredEvent, ctx: Context) -> None:
    """A stream rule triggered (omp's TTSR). For the plugin that owns stream rules to fire."""


@event(Semantics.NOTIFY)
def piko_todo_reminder(event: TodoReminderEvent, ctx: Context) -> None:
    """The agent is reminded of open todos (omp). For a todo plugin to fire."""


@event(Semantics.NOTIFY)
def piko_goal_updated(event: GoalUpdatedEvent, ctx: Context) -> None:
    """The session's goal changed (omp). For a goal plugin to fire."""


@event(Semantics.NOTIFY)
def piko_credential_disabled(event: CredentialDisabledEvent, ctx: Context) -> None:
    """A stored credential was disabled after failing (omp). For an auth plugin to fire."""


@event(Semantics.FIRST)
def piko_user_python(event: UserPythonEvent, ctx: Context) -> Any:
    """The user runs Python code (omp's ``$`` line).

    piko has no such input yet: for a plugin that adds one to fire, as ``user_bash``.

    Return value: ``{"result": ...}`` runs nothing and uses that result.
    """
