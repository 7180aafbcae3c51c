"""Event objects handed to ``piko_<event>`` hooks, and their wire form.

Each event class has a ``TYPE`` (pi's event name) and snake_case attributes. ``event_to_wire``
gives the camelCase JSON line that print ``--mode json`` and RPC mode stream. How the handlers
of each event combine is declared beside its hook spec (:mod:`piko.platform.semantics`).
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from piko.data.messages import ImageContent
from piko.data.messages import Model
from piko.data.wire import camel
from piko.data.wire import to_wire
from piko.lib.records import Record
from piko.lib.records import field


def _hidden() -> Any:
    """A field that is passed to handlers but not written on the wire."""
    return field(default=None, wire=False)


# ---------------------------------------------------------------------------
# Start-up
# ---------------------------------------------------------------------------


class ProjectTrustEvent(Record):
    """Whether to trust the project in ``cwd`` (its ``.pi`` settings and resources, ``.agents/skills``).

    ``found``: what the project would load, one phrase each (``.pi/settings.json``).
    """

    TYPE: ClassVar[str] = "project_trust"
    cwd: str = ""
    found: list[str] = field(factory=list)


# ---------------------------------------------------------------------------
# Session lifecycle
# ---------------------------------------------------------------------------


class SessionStartEvent(Record):
    TYPE: ClassVar[str] = "session_start"
    reason: str = "startup"
    previous_session_file: str | None = None


class SessionBeforeSwitchEvent(Record):
    TYPE: ClassVar[str] = "session_before_switch"
    reason: str = "new"
    target_session_file: str | None = None


class SessionSwitchEvent(Record):
    TYPE: ClassVar[str] = "session_switch"
    reason: str = "new"
    previous_session_file: str | None = None


class SessionBeforeForkEvent(Record):
    TYPE: ClassVar[str] = "session_before_fork"
    entry_id: str = ""
    position: str = "before"
    # omp's name for what ``entry_id`` means: "branch" (the user message rewound, dropped with
    # what follows: position "before") or "fork" (the last entry kept: position "at")
    reason: str = "branch"


class SessionForkEvent(Record):
    TYPE: ClassVar[str] = "session_fork"
    previous_session_file: str | None = None
    reason: str = "branch"


class SessionBeforeCompactEvent(Record):
    TYPE: ClassVar[str] = "session_before_compact"
    preparation: Any = None
    branch_entries: list[Any] = field(factory=list)
    custom_instructions: str | None = None
    signal: Any = _hidden()


class SessionCompactEvent(Record):
    TYPE: ClassVar[str] = "session_compact"
    compaction_entry: Any = None
    from_extension: bool = False


class SessionBeforeTreeEvent(Record):
    TYPE: ClassVar[str] = "session_before_tree"
    preparation: Any = None
    signal: Any = _hidden()


class SessionTreeEvent(Record):
    TYPE: ClassVar[str] = "session_tree"
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    summary_entry: Any = None
    from_extension: bool | None = None


class SessionShutdownEvent(Record):
    TYPE: ClassVar[str] = "session_shutdown"
    reason: str = "quit"
    target_session_file: str | None = None


# ---------------------------------------------------------------------------
# Prompt and turn lifecycle
# ---------------------------------------------------------------------------


class InputEvent(Record):
    TYPE: ClassVar[str] = "input"
    text: str = ""
    images: list[ImageContent] | None = None
    source: str = "interactive"


class BeforeAgentStartEvent(Record):
    TYPE: ClassVar[str] = "before_agent_start"
    prompt: str = ""
    images: list[ImageContent] | None = None
    system_prompt: str = ""
    system_prompt_options: Any = _hidden()


class ContextEvent(Record):
    TYPE: ClassVar[str] = "context"
    messages: list[Any] = field(factory=list)


class BeforeProviderRequestEvent(Record):
    TYPE: ClassVar[str] = "before_provider_request"
    payload: Any = None


class AfterProviderResponseEvent(Record):
    TYPE: ClassVar[str] = "after_provider_response"
    status: int = 0
    headers: dict[str, str] = field(factory=dict)


class AgentStartEvent(Record):
    TYPE: ClassVar[str] = "agent_start"
    session_id: str = field(default="", wire=False)  # for handlers; pi's wire event has none


class AgentEndEvent(Record):
    """A run ended; ``will_retry``: the session retries it next (pi 1.6's ``willRetry``)."""

    TYPE: ClassVar[str] = "agent_end"
    messages: list[Any] = field(factory=list)
    session_id: str = field(default="", wire=False)
    error: str | None = None
    will_retry: bool = False


class AgentSettledEvent(Record):
    """No more automatic work follows the run (retries, compaction, queued messages): pi 1.6."""

    TYPE: ClassVar[str] = "agent_settled"
    aborted: bool = False


class TurnStartEvent(Record):
    TYPE: ClassVar[str] = "turn_start"
    turn_index: int = field(default=0, wire=False)
    timestamp: int = field(default=0, wire=False)
    session_id: str = field(default="", wire=False)


class TurnEndEvent(Record):
    TYPE: ClassVar[str] = "turn_end"
    turn_index: int = field(default=0, wire=False)
    session_id: str = field(default="", wire=False)
    message: Any = None
    tool_results: list[Any] = field(factory=list)


class MessageStartEvent(Record):
    TYPE: ClassVar[str] = "message_start"
    message: Any = None


class MessageUpdateEvent(Record):
    """One streamed change of an assistant message. In process, ``message`` is the message as
    it stands (the same object throughout the stream); on the wire (JSON and RPC modes) the
    record carries only the change and the usage so far, as pi 1.6 writes it."""

    TYPE: ClassVar[str] = "message_update"
    assistant_message_event: Any = None
    message: Any = None

    def wire_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message_update"}
        usage = getattr(self.message, "usage", None)
        if usage is not None:
            out["usage"] = to_wire(usage)
        change = self.assistant_message_event
        if change is not None:
            out["assistantMessageEvent"] = (
                change.delta_wire() if hasattr(change, "delta_wire") else to_wire(change)
            )
        return out


class MessageEndEvent(Record):
    TYPE: ClassVar[str] = "message_end"
    message: Any = None


class AssistantMessageEvent(Record):
    TYPE: ClassVar[str] = "assistant_message"
    message: Any = None


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


class _ToolEvent(Record):
    """What every tool event starts with: which call of which tool (no ``TYPE``: not an event)."""

    tool_call_id: str = ""
    tool_name: str = ""


class ToolCallEvent(_ToolEvent):
    TYPE: ClassVar[str] = "tool_call"
    input: dict[str, Any] = field(factory=dict)


class ToolResultEvent(_ToolEvent):
    TYPE: ClassVar[str] = "tool_result"
    input: dict[str, Any] = field(factory=dict)
    content: list[Any] = field(factory=list)
    details: Any = None
    is_error: bool = False
    structured_content: Any = None  # pi 1.6's structuredContent (None: the tool gave none)


class ToolExecutionStartEvent(_ToolEvent):
    TYPE: ClassVar[str] = "tool_execution_start"
    args: Any = None


class ToolExecutionUpdateEvent(_ToolEvent):
    TYPE: ClassVar[str] = "tool_execution_update"
    args: Any = None
    partial_result: Any = None


class ToolExecutionEndEvent(_ToolEvent):
    """A tool call finished; ``duration_ms``: how long its ``execute`` took (None: it did not run)."""

    TYPE: ClassVar[str] = "tool_execution_end"
    result: Any = None
    is_error: bool = False
    duration_ms: int | None = None


# ---------------------------------------------------------------------------
# Model, user commands, resources
# ---------------------------------------------------------------------------


class ModelSelectEvent(Record):
    TYPE: ClassVar[str] = "model_select"
    model: Model | None = None
    previous_model: Model | None = None
    source: str = "set"


class ThinkingLevelSelectEvent(Record):
    TYPE: ClassVar[str] = "thinking_level_select"
    level: str = "off"
    previous_level: str = "off"


class UserBashEvent(Record):
    TYPE: ClassVar[str] = "user_bash"
    command: str = ""
    exclude_from_context: bool = False
    cwd: str = ""
    signal: Any = _hidden()  # aborts the run (``abort_bash``)
    on_chunk: Any = _hidden()  # called with output text as it arrives


class ResourcesDiscoverEvent(Record):
    TYPE: ClassVar[str] = "resources_discover"
    cwd: str = ""
    reason: str = "startup"


# ---------------------------------------------------------------------------
# Reliability signals
# ---------------------------------------------------------------------------


class AutoCompactionStartEvent(Record):
    TYPE: ClassVar[str] = "auto_compaction_start"
    reason: str = "threshold"


class AutoCompactionEndEvent(Record):
    TYPE: ClassVar[str] = "auto_compaction_end"
    result: Any = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None


class AutoRetryStartEvent(Record):
    TYPE: ClassVar[str] = "auto_retry_start"
    attempt: int = 1
    max_attempts: int = 3
    delay_ms: int = 0
    error_message: str = ""


class AutoRetryEndEvent(Record):
    TYPE: ClassVar[str] = "auto_retry_end"
    success: bool = False
    attempt: int = 0
    final_error: str | None = None


class CompactionStartEvent(Record):
    """Streamed to listeners (RPC, json) when any compaction starts (pi 0.73.1's name)."""

    TYPE: ClassVar[str] = "compaction_start"
    reason: str = "manual"  # manual | threshold | overflow


class CompactionEndEvent(Record):
    """Streamed to listeners when a compaction ends."""

    TYPE: ClassVar[str] = "compaction_end"
    reason: str = "manual"
    result: Any = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None


class QueueUpdateEvent(Record):
    """The steering and follow-up queues changed (texts as the user typed them)."""

    TYPE: ClassVar[str] = "queue_update"
    steering: list[str] = field(factory=list)
    follow_up: list[str] = field(factory=list)


class ThinkingLevelChangedEvent(Record):
    TYPE: ClassVar[str] = "thinking_level_changed"
    level: str = "off"


class SessionInfoChangedEvent(Record):
    TYPE: ClassVar[str] = "session_info_changed"
    name: str | None = None


class McpServersChangeEvent(Record):
    """An extension registered or removed an MCP server while the session runs (pi 1.6);
    ``servers`` are every registered server after the change (``{"name", "config", "extension"}``)."""

    TYPE: ClassVar[str] = "mcp_servers_change"
    servers: list[dict[str, Any]] = field(factory=list)


class McpNotificationEvent(Record):
    """A JSON-RPC notification an MCP server sent (omp's ``mcp_notification``)."""

    TYPE: ClassVar[str] = "mcp_notification"
    server: str = ""
    method: str = ""
    params: Any = None


class ExtensionErrorEvent(Record):
    TYPE: ClassVar[str] = "extension_error"
    extension_path: str = ""
    event: str = ""
    error: str = ""
    stack: str | None = field(default=None, wire=False)


# ---------------------------------------------------------------------------
# Events of the extension reference that piko declares for subscription
# (some are fired by piko; the others by the plugins that will own them)
# ---------------------------------------------------------------------------


class SessionStopEvent(Record):
    """The main session is about to stop; a handler may ask for another turn."""

    TYPE: ClassVar[str] = "session_stop"
    session_id: str = ""
    continuations: int = 0  # how many continuations were granted in this run so far
    messages: list[Any] = field(factory=list, wire=False)


class SessionCompactingEvent(Record):
    """omp's ``session.compacting``: the summariser is about to run on ``messages``."""

    TYPE: ClassVar[str] = "session_compacting"
    session_id: str = ""
    messages: list[Any] = field(factory=list, wire=False)


class BeforeProviderHeadersEvent(Record):
    """The headers of the next provider request, which handlers may change."""

    TYPE: ClassVar[str] = "before_provider_headers"
    headers: dict[str, str] = field(factory=dict)
    model: Model | None = _hidden()


class ContextWithSystemEvent(Record):
    """The next request's system prompt and messages together, which handlers may change."""

    TYPE: ClassVar[str] = "context_with_system"
    system_prompt: str = ""
    messages: list[Any] = field(factory=list, wire=False)


class UiPromptStartEvent(Record):
    """A ``ctx.ui`` dialog opened (``kind``, also ``method``: select, confirm, input, editor, custom)."""

    TYPE: ClassVar[str] = "ui_prompt_start"
    kind: str = ""  # pi 1.6's name
    method: str = ""  # the same, piko's earlier name
    title: str = ""
    reason: str = "ui_prompt"


class UiPromptEndEvent(Record):
    """A ``ctx.ui`` dialog closed; ``cancelled`` when it gave its cancel value."""

    TYPE: ClassVar[str] = "ui_prompt_end"
    kind: str = ""
    method: str = ""
    title: str = ""
    cancelled: bool = False
    reason: str = "ui_prompt"


class CacheWarmingDecisionEvent(Record):
    TYPE: ClassVar[str] = "cache_warming_decision"
    warm_cost: float = 0.0
    miss_cost: float = 0.0
    continuation_probability: float = 0.0
    action: str = "warm"


class ToolApprovalRequestedEvent(Record):
    TYPE: ClassVar[str] = "tool_approval_requested"
    tool_call_id: str = ""
    tool_name: str = ""
    input: dict[str, Any] = field(factory=dict)


class ToolApprovalResolvedEvent(Record):
    TYPE: ClassVar[str] = "tool_approval_resolved"
    tool_call_id: str = ""
    tool_name: str = ""
    approved: bool = False


class PlanReviewRequestedEvent(Record):
    TYPE: ClassVar[str] = "plan_review_requested"
    review_id: str = ""
    session_id: str = ""
    title: str = ""
    plan_path: str = ""
    plan_content: str = ""
    choices: list[Any] = field(factory=list)
    tiers: list[Any] | None = None


class PlanReviewResolvedEvent(Record):
    TYPE: ClassVar[str] = "plan_review_resolved"
    review_id: str = ""
    choice: str | None = None
    by: str = "local"  # local | extension


class BeforeSubagentSpawnEvent(Record):
    TYPE: ClassVar[str] = "before_subagent_spawn"
    agent: str = ""
    invocation_kind: str = ""
    model_role: str | None = None
    patterns: list[str] = field(factory=list)
    spawn_key: str | None = None


class RetryFallbackAppliedEvent(Record):
    """Auto-retry switched model or provider (pi's ``{from, to}`` are ``from_model``/``to_model``)."""

    TYPE: ClassVar[str] = "retry_fallback_applied"
    from_model: str = ""
    to_model: str = ""
    role: str = ""
    reason: str | None = None


class RetryFallbackSucceededEvent(Record):
    TYPE: ClassVar[str] = "retry_fallback_succeeded"
    model: str = ""
    role: str = ""


class TtsrTriggeredEvent(Record):
    TYPE: ClassVar[str] = "ttsr_triggered"
    rules: list[Any] = field(factory=list)


class TodoReminderEvent(Record):
    TYPE: ClassVar[str] = "todo_reminder"
    todos: list[Any] = field(factory=list)
    attempt: int = 0
    max_attempts: int = 0


class GoalUpdatedEvent(Record):
    TYPE: ClassVar[str] = "goal_updated"
    goal: Any = None


class CredentialDisabledEvent(Record):
    TYPE: ClassVar[str] = "credential_disabled"
    provider: str = ""
    reason: str = ""


class UserPythonEvent(Record):
    TYPE: ClassVar[str] = "user_python"
    code: str = ""
    exclude_from_context: bool = False
    cwd: str = ""


# ---------------------------------------------------------------------------
# Requests for service hooks
# ---------------------------------------------------------------------------


class CompactionRequest(Record):
    """What ``piko_compact`` is asked to summarize."""

    TYPE: ClassVar[str] = "compact"
    preparation: Any = None
    branch_entries: list[Any] = field(factory=list)
    custom_instructions: str | None = None
    model: Model | None = None
    api_key: str | None = None
    signal: Any = None
    settings: dict[str, Any] = field(factory=dict)
    reason: str = "manual"
    thinking_level: str | None = None
    headers: dict[str, str] | None = None
    retry: Any = None  # piko.engine.retry.SummaryRetry: how the summary requests are retried
    summary_prompt: str | None = None  # ``session.compacting``: replaces the summarizer's instructions
    summary_context: list[str] = field(factory=list)  # ``session.compacting``: more for the summarizer


class CompactionResult(Record):
    """What compaction produced: the summary and where kept history starts."""

    TYPE: ClassVar[str] = "compaction_result"
    summary: str = ""
    first_kept_entry_id: str = ""
    tokens_before: int = 0
    details: Any = None


class SummarizationRetryScheduledEvent(Record):
    """A compaction or branch summary failed with a passing error; the next try waits ``delay_ms``."""

    TYPE: ClassVar[str] = "summarization_retry_scheduled"
    attempt: int = 0
    max_attempts: int = 0
    delay_ms: int = 0
    error_message: str = ""


class SummarizationRetryAttemptStartEvent(Record):
    """The wait is over and the summary is asked for again (``reason``: compaction's only)."""

    TYPE: ClassVar[str] = "summarization_retry_attempt_start"
    source: str = "compaction"  # or "branchSummary"
    reason: str | None = None


class SummarizationRetryFinishedEvent(Record):
    """The retrying of a summary ended (an answer, the last failure, or an abort)."""

    TYPE: ClassVar[str] = "summarization_retry_finished"


class BranchSummaryRequest(Record):
    """What ``piko_summarize_branch`` is asked to summarize."""

    TYPE: ClassVar[str] = "summarize_branch"
    entries: list[Any] = field(factory=list)
    model: Model | None = None
    api_key: str | None = None
    custom_instructions: str | None = None
    replace_instructions: bool = False
    signal: Any = None
    thinking_level: str | None = None
    headers: dict[str, str] | None = None
    retry: Any = None  # piko.engine.retry.SummaryRetry: how the summary request is retried


class BashResult(Record):
    """The outcome of a user's shell command (``!cmd``, RPC ``bash``)."""

    TYPE: ClassVar[str] = "bash_result"
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None


class ExportRequest(Record):
    """What ``piko_export_html`` is asked to export."""

    TYPE: ClassVar[str] = "export_html"
    session_file: str | None = None
    entries: list[Any] | None = None
    header: Any = None
    output_path: str | None = None


class FileWriteRequest(Record):
    """A denied write offered to ``piko_file_write_fallback``."""

    TYPE: ClassVar[str] = "file_write_fallback"
    dst: str = ""
    content: str | bytes = ""
    cause: BaseException | None = None
    session_id: str | None = None


class WorkspaceReadRequest(Record):
    """A file a tool is about to read, offered first to the workspace the user works in (an
    editor holding unsaved changes): ``piko_workspace_read_text``."""

    TYPE: ClassVar[str] = "workspace_read_text"
    path: str = ""
    session_id: str | None = None


class WorkspaceWriteRequest(Record):
    """A file a tool is about to write, offered first to the workspace: ``piko_workspace_write_text``."""

    TYPE: ClassVar[str] = "workspace_write_text"
    path: str = ""
    content: str = ""
    session_id: str | None = None


class FileDeleteRequest(Record):
    """A denied delete offered to ``piko_file_delete_fallback``."""

    TYPE: ClassVar[str] = "file_delete_fallback"
    dst: str = ""
    cause: BaseException | None = None
    confirmed_file: bool = False
    session_id: str | None = None


# ---------------------------------------------------------------------------
# Lookup and wire form
# ---------------------------------------------------------------------------


EVENT_CLASSES: dict[str, type] = {
    cls.TYPE: cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, Record) and hasattr(cls, "TYPE")
}

# Fields of wire events that are written even when None (none so far; kept for clarity).
_WIRE_NULLABLE: set[tuple[str, str]] = set()


def event_items(event: Any) -> list[tuple[str, Any]]:
    """The ``(field name, value)`` pairs of an event, in declaration order."""
    return [(f.name, getattr(event, f.name)) for f in getattr(type(event), "FIELDS", ())]


def event_to_wire(event: Any) -> dict[str, Any]:
    """The JSON line form of an event: ``{"type": ..., camelCase fields}`` as pi streams it
    (an event with a ``wire_record()`` method writes its own)."""
    own = getattr(event, "wire_record", None)
    if own is not None:
        return own()  # type: ignore[no-any-return]
    out: dict[str, Any] = {"type": event.TYPE}
    for f in type(event).FIELDS:
        if not f.wire:
            continue
        value = getattr(event, f.name)
        if value is None and (event.TYPE, f.name) not in _WIRE_NULLABLE:
            continue
        out[camel(f.name)] = to_wire(value)
    return out
