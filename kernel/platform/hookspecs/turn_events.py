"""The events of one prompt: input, context, provider requests, agent, turn and message."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from piko.platform import reducers
from piko.platform.semantics import Semantics
from piko.platform.semantics import event

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    from piko.data.events import AfterProviderResponseEvent
    from piko.data.events import AgentEndEvent
    from piko.data.events import AgentStartEvent
    from piko.data.events import AssistantMessageEvent
    from piko.data.events import BeforeAgentStartEvent
    from piko.data.events import BeforeProviderRequestEvent
    from piko.data.events import ContextEvent
    from piko.data.events import InputEvent
    from piko.data.events import MessageEndEvent
    from piko.data.events import MessageStartEvent
    from piko.data.events import MessageUpdateEvent
    from piko.data.events import TurnEndEvent
    from piko.data.events import TurnStartEvent
    from piko.platform.protocols import Context


# ---------------------------------------------------------------------------
# Prompt and turn lifecycle events
# ---------------------------------------------------------------------------


@event(
    Semantics.CHAIN,
    reducer=reducers.input_transform,
    empty=reducers.input_unchanged,
    can_modify="Yes (transform)",
    can_cancel="Yes (handled)",
)
def piko_input(event: InputEvent, ctx: Context) -> Any:
    """User input arrived, before commands, skills and templates are expanded.

    :param event: ``source`` is ``"interactive"``, ``"rpc"`` or ``"extension"``.
    Return value: ``{"action": "transform", "text": ..., "images": ...}`` replaces the input
    (later handlers see the change); ``{"action": "handled"}`` consumes it (no turn runs and
    the remaining handlers are skipped); ``None`` or ``{"action": "continue"}`` leaves it.
    Semantics: chain, with handled as a short-circuit.
    """


@event(Semantics.CHAIN, reducer=reducers.before_agent_start)
def piko_before_agent_start(event: BeforeAgentStartEvent, ctx: Context) -> Any:
    """A prompt is about to start the agent loop.

    Return value: ``{"system_prompt": str}`` replaces the system prompt for this prompt's
    turns (chained: the next handler sees it); ``{"message": {custom_type, content, display,
    details}}`` adds a custom message after the user's (collected from every handler).
    A result of another shape is ignored and reported as an ``extension_error``.
    """


@event(Semantics.CHAIN, reducer=reducers.context, empty=reducers.unchanged("messages"))
def piko_context(event: ContextEvent, ctx: Context) -> Any:
    """The messages of the next provider request are assembled.

    :param event: a copy: changing it does not touch history.
    Return value: ``{"messages": [...]}`` replaces them for this request only.
    """


@event(Semantics.CHAIN, reducer=reducers.payload, empty=reducers.unchanged("payload"))
def piko_before_provider_request(event: BeforeProviderRequestEvent, ctx: Context) -> Any:
    """The provider payload (JSON body) is built and about to be sent.

    Return value: the replacement payload itself (not wrapped); ``None`` keeps it.
    """


@event(Semantics.NOTIFY)
def piko_after_provider_response(event: AfterProviderResponseEvent, ctx: Context) -> None:
    """The provider answered (status and headers), before its body is consumed."""


@event(Semantics.NOTIFY)
def piko_agent_start(event: AgentStartEvent, ctx: Context) -> None:
    """The agent loop started for a prompt."""


@event(Semantics.NOTIFY)
def piko_agent_end(event: AgentEndEvent, ctx: Context) -> None:
    """The agent loop ended (the model stopped, an error, or an abort).

    :param event: ``will_retry`` (pi 1.6's ``willRetry``) says the session retries the run next (its
        last answer failed with a retryable error and retries are left); ``messages`` are the messages
        this run added.
    """


@event(Semantics.NOTIFY)
def piko_turn_start(event: TurnStartEvent, ctx: Context) -> None:
    """A turn (one assistant response and its tool calls) starts.

    :param event: ``session_id``, as on ``agent_start``, ``agent_end`` and ``turn_end``, is the running
        session's (handlers only: pi's JSON and RPC events do not carry it).
    """


@event(Semantics.NOTIFY)
def piko_turn_end(event: TurnEndEvent, ctx: Context) -> None:
    """A turn ended."""


@event(Semantics.NOTIFY)
def piko_message_start(event: MessageStartEvent, ctx: Context) -> None:
    """A message (user, assistant, tool result, custom) starts."""


@event(Semantics.NOTIFY)
def piko_message_update(event: MessageUpdateEvent, ctx: Context) -> None:
    """A streaming assistant message changed (one provider delta).

    :param event: ``message`` is the message as it stands (the same object throughout the stream); the
        change itself is ``assistant_message_event`` (``type``, ``content_index``, ``delta``). A
        streaming block's text and a tool call's arguments are joined or parsed when read, so reading
        them costs time in proportion to their size: use the delta when that is enough.
    Semantics: notify. Called once per delta: keep it cheap. Plain-function handlers run on the
    event loop (a thread hop would cost more than they do); one that holds the loop for more
    than a second is interrupted, reported, and gets no more of these events.
    """


@event(Semantics.CHAIN, reducer=reducers.message_end, empty=reducers.unchanged("message"))
def piko_message_end(event: MessageEndEvent, ctx: Context) -> Any:
    """A message is complete.

    Return value: ``{"message": replacement}`` with the same role replaces it for history,
    persistence and the next request.
    """


@event(Semantics.CHAIN, reducer=reducers.assistant_message, empty=reducers.unchanged("message"))
def piko_assistant_message(event: AssistantMessageEvent, ctx: Context) -> Any:
    """An assistant message is final, before it is saved, shown as ended or its tools run.

    Return value: ``{"content": [...]}``: the same blocks with changed text only (count,
    order, types and non-text blocks unchanged; edited text loses its signature). Invalid
    replacements are reported and skipped.
    """
