"""The services the kernel asks plugins for: the first answer wins."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from piko.platform import reducers
from piko.platform.markers import hookspec
from piko.platform.semantics import Semantics
from piko.platform.semantics import event

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    import datetime

    from piko.app.application import App
    from piko.data.events import BranchSummaryRequest
    from piko.data.events import CompactionRequest
    from piko.data.events import ExportRequest
    from piko.data.events import FileDeleteRequest
    from piko.data.events import FileWriteRequest
    from piko.data.events import WorkspaceReadRequest
    from piko.data.events import WorkspaceWriteRequest
    from piko.data.messages import AssistantMessage
    from piko.data.messages import Model
    from piko.engine.system_prompt import SystemPromptOptions
    from piko.platform.protocols import Context


# ---------------------------------------------------------------------------
# Services the kernel asks plugins for (first result wins)
# ---------------------------------------------------------------------------


@hookspec(firstresult=True)
def piko_resolve_api_key(provider: str, app: App, check_only: bool) -> str | None:
    """Find the API key for ``provider`` (auth.json, OAuth refresh, environment, resolvers).

    Fires before each provider request, after the ``--api-key`` override was consulted, and
    when piko checks which providers have credentials (``--list-models``, ``/model``).

    :param provider: the provider name (``anthropic``, ``my-gateway``).
    :param app: the :class:`piko.app.application.App`.
    :param check_only: only say whether a credential is configured: do not refresh OAuth tokens,
        run commands or reach the network; any non-empty string means yes.
    Return value: the key, or ``None`` to let the next implementation answer; an empty string
    means there is no key and nothing else may supply one (a stored OAuth login whose refresh
    failed: the user must log in again, not be billed through another key). The key answered
    is registered with :mod:`piko.lib.redaction`: traces, errors, sessions and exports mask it.
    """


@hookspec(firstresult=True)
def piko_build_system_prompt(options: SystemPromptOptions, today: datetime.date | None) -> str | None:
    """Write the system prompt from what the session gathered.

    Asked whenever the prompt must be rebuilt (start-up, a change of active tools, ``/reload``).
    The built-in ``resources.default-prompt`` plugin answers with pi's layout; a plugin may
    answer first (``tryfirst``) with a prompt of its own. With no answer the session uses the
    plain frame (``piko.engine.system_prompt.plain_prompt``). ``before_agent_start`` handlers can
    still change the prompt of each run.

    :param options: a :class:`piko.engine.system_prompt.SystemPromptOptions`: working directory,
        active tool names with their snippets and guidelines, the custom prompt (``--system-prompt``
        or ``SYSTEM.md``), appended text, context files and skills.
    :param today: the date to write (``None``: today).
    Return value: the prompt text, or ``None`` to let the next implementation answer.
    """


@hookspec(firstresult=True)
def piko_credential_store(app: App) -> Any:
    """The credential store the interactive ``/login`` and ``/logout`` (and ``pi`` commands) use.

    Asked whenever a command needs to save or remove a login. The built-in ``providers.auth``
    plugin answers with its ``auth.json`` store; a plugin may answer first (``tryfirst``) to keep
    credentials elsewhere (a system keychain, a company vault); such a plugin also answers
    ``piko_resolve_api_key`` so that requests find the keys it keeps.

    :param app: the :class:`piko.app.application.App`.
    Return value: an object with ``auth_path()``, ``get_storage()`` (``.get(provider)`` gives the
    stored credential dict), ``oauth_providers()``, ``save_api_key(provider, key)``,
    ``login_oauth(provider, **callbacks)`` and ``logout(provider)``, or ``None`` to let the next
    implementation answer. With no answer, logins are not available and commands say so.
    """


@hookspec
def piko_provider_request_headers(model: Model, session_id: str) -> dict[str, str] | None:
    """Add headers to the next provider request (trace context, a request id, a team tag).

    Asked before each model request, after the credentials and the configured headers are
    resolved. Every plugin's answer is merged in piko's call order (a later answer wins for the
    same header); headers the provider configuration sets are kept unless an answer names them.

    :param model: the :class:`piko.data.messages.Model` the request goes to.
    :param session_id: the running session's id.
    Return value: a dict of header names to values, or ``None``.
    """


@hookspec
def piko_shell_env(cwd: str, tool_call_id: str | None) -> dict[str, str] | None:
    """Add variables to the environment of a shell command the agent runs.

    Asked before each ``bash`` tool call (and each ``!`` command a user types) starts its
    shell. Every plugin's answer is merged in piko's call order over the inherited environment.

    :param cwd: the folder the command runs in.
    :param tool_call_id: the tool call's id, or ``None`` for a user's ``!`` command.
    Return value: a dict of variable names to values, or ``None``.
    """


@hookspec(firstresult=True)
def piko_classify_error(message: AssistantMessage, model: Model | None) -> str | None:
    """Say what a failed model response means, so that the session knows whether to retry.

    Asked when a response ends with ``stop_reason == "error"``, before auto-retry and overflow
    compaction decide. Providers word errors in their own way; a provider plugin answers for
    its phrasing (``tryfirst`` to be asked before the built-ins). The built-in
    ``providers.error-kinds`` plugin answers last with the phrasings pi recognises. Responses
    that do not fail but report more input than the window (or stop with no output on a full
    window) are detected by the session itself from the usage, without this hook.

    :param message: the failed :class:`piko.data.messages.AssistantMessage` (``error_message``
        holds the provider's text).
    :param model: the :class:`piko.data.messages.Model` the request went to, when known.
    Return value: ``"overflow"`` (the context is too long: compact, then send again),
    ``"retryable"`` (a transient failure: wait and send again), ``"fatal"`` (neither), or
    ``None`` to let the next implementation answer. With no answer the error is fatal.
    """


@hookspec(firstresult=True)
def piko_tool_registers_later(name: str, app: App) -> bool | None:
    """Say that a tool of this name may be registered later in the session.

    Asked at session start for each ``--tools`` / ``--exclude-tools`` entry that names no
    registered tool (``+``/``-`` stripped), before piko reports ``Unknown tool(s) in --tools``.
    A plugin whose tools appear while the session runs (the MCP plugin's ``mcp__<server>__<tool>``,
    registered as servers connect) answers ``True`` for its names, so naming one exactly is not
    reported; selecting it is then that plugin's part. Patterns (``*``) are never reported.

    :param name: the entry's tool name.
    :param app: the running :class:`piko.app.application.App` (its flags and settings).
    Return value: ``True`` to leave the entry unreported, or ``None`` to let the next plugin answer.
    """


@event(Semantics.FIRST, service=True)
def piko_compaction_prepare(request: Any, ctx: Context) -> Any:
    """Decide what compaction keeps and what it summarizes (the compaction strategy is a plugin).

    Fired through the dispatcher with *first result* semantics before ``session_before_compact``.

    :param request: a :class:`piko.data.events.CompactionRequest` (branch entries, settings, custom
        instructions, model).
    Return value: a preparation object (``first_kept_entry_id``, ``tokens_before``, the
    messages to summarize, ...) handed to ``session_before_compact`` and ``piko_compact``, or
    ``None`` when there is nothing to compact.
    """


@event(Semantics.FIRST, service=True)
def piko_summarize_branch(request: BranchSummaryRequest, ctx: Context) -> Any:
    """Summarize the branch being left when the user moves elsewhere in the tree (``/tree``).

    Fired through the dispatcher with *first result* semantics, after ``session_before_tree``
    did not supply a summary.

    :param request: a :class:`piko.data.events.BranchSummaryRequest` (entries to summarize, model,
        custom instructions, abort signal).
    Return value: ``{"summary": str, "details": ...}`` or ``None``.
    """


@event(Semantics.FIRST, service=True)
def piko_compact(request: CompactionRequest, ctx: Context) -> Any:
    """Summarize history for compaction (the compaction strategy is a plugin).

    Fired through the dispatcher with *first result* semantics when the agent compacts
    (threshold, context overflow, ``/compact``, RPC ``compact``), after
    ``session_before_compact`` did not supply a result.

    :param request: a :class:`piko.data.events.CompactionRequest` (entries, preparation,
        custom instructions, model, abort signal).
    Return value: a ``CompactionResult`` (summary, first kept entry id, tokens before, details)
    or ``None``.
    """


@event(Semantics.FIRST, service=True)
def piko_export_html(request: ExportRequest, ctx: Context) -> Any:
    """Export a session to a self-contained HTML page (``--export``, ``/export``, RPC ``export_html``).

    Fired through the dispatcher with *first result* semantics.

    :param request: a :class:`piko.data.events.ExportRequest` (session file or entries, output path).
    Return value: the path written, or ``None``.
    """


@event(Semantics.FIRST, service=True)
def piko_workspace_read_text(request: WorkspaceReadRequest, ctx: Context) -> Any:
    """Give the text of a file as the user's workspace holds it (unsaved editor changes).

    For a plugin that knows a file better than the disk does (an editor, through ACP).

    Asked by the ``read`` and ``edit`` tools before they read a file, only when a handler is
    registered (no cost otherwise).

    :param request: :class:`piko.data.events.WorkspaceReadRequest` (``path`` absolute, ``session_id``).
    Return value: the file's whole text (the first result wins); ``None`` lets the tool read the disk.
    """


@event(Semantics.FIRST, reducer=reducers.fallback, empty=reducers.declined, service=True)
def piko_workspace_write_text(request: WorkspaceWriteRequest, ctx: Context) -> Any:
    """Write a file through the user's workspace (an editor updates its buffer and saves it).

    Asked by the ``write`` and ``edit`` tools before they write, only when a handler is
    registered.

    :param request: :class:`piko.data.events.WorkspaceWriteRequest` (``path`` absolute, ``content``).
    Return value: ``True`` when the workspace wrote the file (the first ``True`` wins; a raising
    handler is skipped); otherwise the tool writes the disk.
    """


@event(Semantics.FIRST, reducer=reducers.fallback, empty=reducers.declined, service=True)
def piko_file_write_fallback(request: FileWriteRequest, ctx: Context) -> Any:
    """A tool's file write failed with EPERM, EACCES or EROFS: may a privileged writer do it?

    Fired only on those errors, never otherwise (no cost when nothing is registered).

    :param request: :class:`piko.data.events.FileWriteRequest` (``dst`` symlink-resolved,
        ``content``, ``cause``, ``session_id``).
    Return value: ``True`` when the bytes are durably on disk; the first ``True`` wins, a
    raising handler is skipped, and the original error is raised when none succeeds.
    """


@event(Semantics.FIRST, reducer=reducers.fallback, empty=reducers.declined, service=True)
def piko_file_delete_fallback(request: FileDeleteRequest, ctx: Context) -> Any:
    """A tool's file delete failed with EPERM, EACCES or EROFS: may a privileged helper unlink it?

    :param request: :class:`piko.data.events.FileDeleteRequest` (``dst``, ``cause``,
        ``confirmed_file``, ``session_id``); never recursive.
    Return value: ``True`` when the file is gone; semantics as ``piko_file_write_fallback``.
    """
