"""The events of tool calls, model and command changes, resources and reliability signals."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from piko.platform import reducers
from piko.platform.semantics import Semantics
from piko.platform.semantics import event

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    from piko.data.events import AutoCompactionEndEvent
    from piko.data.events import AutoCompactionStartEvent
    from piko.data.events import AutoRetryEndEvent
    from piko.data.events import AutoRetryStartEvent
    from piko.data.events import ExtensionErrorEvent
    from piko.data.events import ModelSelectEvent
    from piko.data.events import ResourcesDiscoverEvent
    from piko.data.events import ThinkingLevelSelectEvent
    from piko.data.events import ToolCallEvent
    from piko.data.events import ToolExecutionEndEvent
    from piko.data.events import ToolExecutionStartEvent
    from piko.data.events import ToolExecutionUpdateEvent
    from piko.data.events import ToolResultEvent
    from piko.data.events import UserBashEvent
    from piko.platform.protocols import Context


# ---------------------------------------------------------------------------
# Tool events
# ---------------------------------------------------------------------------


@event(
    Semantics.BLOCK,
    reducer=reducers.tool_call,
    can_modify="No (mutate `event.input` in place)",
    can_cancel="Yes (block)",
)
def piko_tool_call(event: ToolCallEvent, ctx: Context) -> Any:
    """A tool is about to run with validated arguments.

    :param event: ``input`` may be changed in place, and later handlers see the change.
    Return value: ``{"block": True, "reason": ...}`` stops the call (the model gets an error
    result with the reason); ``{"input": {...}}`` revises the arguments.
    Semantics: block, failing closed: a handler that raises, overruns its budget or returns
    anything but ``None`` or a mapping of ``block`` (bool), ``reason`` (str) and ``input``
    (dict) blocks the call, with a reason naming the extension. An abort cancels a pending
    handler and blocks the call with ``Operation aborted``.
    """


@event(Semantics.CHAIN, reducer=reducers.tool_result)
def piko_tool_result(event: ToolResultEvent, ctx: Context) -> Any:
    """A tool finished; its result may be patched before the model sees it.

    :param event: ``structured_content`` is pi 1.6's ``structuredContent`` (None when the tool gave
        none).
    Return value: any of ``content``, ``details``, ``structured_content``, ``is_error`` replaces
    that part (later handlers see the patched result); ``content`` returned without
    ``structured_content`` drops the structured content, which may no longer match (pi 1.6).
    """


@event(Semantics.NOTIFY)
def piko_tool_execution_start(event: ToolExecutionStartEvent, ctx: Context) -> None:
    """A tool started running."""


@event(Semantics.NOTIFY)
def piko_tool_execution_update(event: ToolExecutionUpdateEvent, ctx: Context) -> None:
    """A running tool reported partial output.

    Semantics: notify. Plain-function handlers run as ``message_update``'s do (on the loop,
    interrupted after a second).
    """


@event(Semantics.NOTIFY)
def piko_tool_execution_end(event: ToolExecutionEndEvent, ctx: Context) -> None:
    """A tool finished running.

    :param event: ``duration_ms`` (pi 1.6's ``durationMs``) is how long the tool's ``execute`` took,
        None when the tool did not run (unknown, invalid arguments, blocked).
    """


# ---------------------------------------------------------------------------
# Model, user commands and resources
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_model_select(event: ModelSelectEvent, ctx: Context) -> None:
    """A model was selected (set, cycled or restored from the session).

    :param event: ``source`` is ``"set"``, ``"cycle"`` or ``"restore"``.
    """


@event(Semantics.NOTIFY)
def piko_thinking_level_select(event: ThinkingLevelSelectEvent, ctx: Context) -> None:
    """The thinking level changed."""


@event(Semantics.FIRST)
def piko_user_bash(event: UserBashEvent, ctx: Context) -> Any:
    """The user runs a shell command with ``!cmd`` or ``!!cmd`` (RPC ``bash``).

    Return value: ``{"result": BashResult}`` runs nothing and uses that result;
    ``{"operations": ...}`` supplies how to run it.
    """


@event(Semantics.COLLECT, reducer=reducers.resources, empty=reducers.no_resources)
def piko_resources_discover(event: ResourcesDiscoverEvent, ctx: Context) -> Any:
    """Resources are being discovered; a plugin may add skill, prompt and theme paths.

    :param event: ``reason`` is ``"startup"`` or ``"reload"``.
    Return value: ``{"skill_paths": [...], "prompt_paths": [...], "theme_paths": [...]}``.
    Semantics: collect (every handler's paths are gathered).
    """


# ---------------------------------------------------------------------------
# Reliability signals
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_auto_compaction_start(event: AutoCompactionStartEvent, ctx: Context) -> None:
    """Automatic compaction started.

    :param event: ``reason`` is ``"threshold"`` or ``"overflow"``.
    """


@event(Semantics.NOTIFY)
def piko_auto_compaction_end(event: AutoCompactionEndEvent, ctx: Context) -> None:
    """Automatic compaction ended."""


@event(Semantics.NOTIFY)
def piko_auto_retry_start(event: AutoRetryStartEvent, ctx: Context) -> None:
    """A failed provider request will be retried after a delay."""


@event(Semantics.NOTIFY)
def piko_auto_retry_end(event: AutoRetryEndEvent, ctx: Context) -> None:
    """Retrying ended, successfully or not."""


@event(Semantics.NOTIFY)
def piko_extension_error(event: ExtensionErrorEvent, ctx: Context) -> None:
    """A handler of another event raised or overran its budget.

    Semantics: notify (errors raised here are logged to stderr, never re-dispatched).
    """
