"""Every hook of piko, grouped under banners; each docstring is that hook's reference.

Hook names carry the ``piko_`` prefix. Implementations may take fewer arguments than a spec
names (pluggy passes only those asked for), so specs can grow without breaking plugins.

Three kinds of hooks live here:

* **bootstrap** hooks run once while piko starts (``piko_addhooks`` and ``piko_configure`` are
  historic: a plugin registered late still receives them);
* **registration** hooks hand a plugin a ``register`` callable; the kernel calls each plugin's
  implementation separately, so everything registered is stamped with the plugin that
  registered it (``pi plugins`` and the registries show it);
* **event** hooks (``piko_<event>(event, ctx)``) are fired by the kernel's async dispatcher
  (:mod:`piko.platform.dispatch`), never through ``pm.hook`` directly. An implementation may be a plain
  function or a coroutine function. The dispatcher walks implementations in registration order
  (``tryfirst`` ones first, ``trylast`` ones last), awaits each within a time budget, and
  applies the event's semantics: *notify* (return values ignored), *chain* (each handler sees
  the previous one's change), *cancel*, *block* or *first result*. A handler that raises or
  overruns its budget is reported as an ``extension_error`` event and the others still run;
  ``tool_call`` fails closed (the tool is blocked). Coroutines run on the event loop; a plain
  function runs on a thread of its own, so one that blocks cannot freeze piko (its budget
  applies, and ``ctx`` calls it makes are run on the loop). An abort cancels the handler being
  waited for. See plugins.md, "Plain functions and coroutines".

``event`` is a record (:class:`piko.lib.records.Record`) from :mod:`piko.data.events` with snake_case attributes;
``ctx`` is the :class:`piko.platform.context.ExtensionContext` of the running session. Handlers return
``None`` or a mapping (snake_case or pi's camelCase keys both work) or an object with the named
attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from piko.platform import reducers
from piko.platform.markers import hookspec
from piko.platform.semantics import Semantics, event

if TYPE_CHECKING:  # the types of the hooks' arguments, for readers and type checkers only
    import datetime

    from piko.app.application import App
    from piko.data.events import (
        AfterProviderResponseEvent,
        AgentEndEvent,
        AgentSettledEvent,
        AgentStartEvent,
        AssistantMessageEvent,
        AutoCompactionEndEvent,
        AutoCompactionStartEvent,
        AutoRetryEndEvent,
        AutoRetryStartEvent,
        BeforeAgentStartEvent,
        BeforeProviderHeadersEvent,
        BeforeProviderRequestEvent,
        BeforeSubagentSpawnEvent,
        BranchSummaryRequest,
        CacheWarmingDecisionEvent,
        CompactionRequest,
        ContextEvent,
        ContextWithSystemEvent,
        CredentialDisabledEvent,
        ExportRequest,
        ExtensionErrorEvent,
        FileDeleteRequest,
        FileWriteRequest,
        GoalUpdatedEvent,
        InputEvent,
        McpNotificationEvent,
        McpServersChangeEvent,
        MessageEndEvent,
        MessageStartEvent,
        MessageUpdateEvent,
        ModelSelectEvent,
        PlanReviewRequestedEvent,
        PlanReviewResolvedEvent,
        ProjectTrustEvent,
        ResourcesDiscoverEvent,
        RetryFallbackAppliedEvent,
        RetryFallbackSucceededEvent,
        SessionBeforeCompactEvent,
        SessionBeforeForkEvent,
        SessionBeforeSwitchEvent,
        SessionBeforeTreeEvent,
        SessionCompactEvent,
        SessionCompactingEvent,
        SessionForkEvent,
        SessionInfoChangedEvent,
        SessionShutdownEvent,
        SessionStartEvent,
        SessionStopEvent,
        SessionSwitchEvent,
        SessionTreeEvent,
        ThinkingLevelSelectEvent,
        TodoReminderEvent,
        ToolApprovalRequestedEvent,
        ToolApprovalResolvedEvent,
        ToolCallEvent,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
        ToolExecutionUpdateEvent,
        ToolResultEvent,
        TtsrTriggeredEvent,
        TurnEndEvent,
        TurnStartEvent,
        UiPromptEndEvent,
        UiPromptStartEvent,
        UserBashEvent,
        UserPythonEvent,
        WorkspaceReadRequest,
        WorkspaceWriteRequest,
    )
    from piko.data.messages import AssistantMessage, Model
    from piko.engine.system_prompt import SystemPromptOptions
    from piko.platform.manager import PikoPluginManager
    from piko.platform.protocols import (
        Context,
        RegisterCliCommand,
        RegisterCommand,
        RegisterFlag,
        RegisterMessageRenderer,
        RegisterMode,
        RegisterPackageSource,
        RegisterProvider,
        RegisterProviderApi,
        RegisterResourceLoader,
        RegisterShortcut,
        RegisterTool,
    )

# ---------------------------------------------------------------------------
# Bootstrap hooks
# ---------------------------------------------------------------------------


@hookspec(historic=True)
def piko_addhooks(pluginmanager: PikoPluginManager) -> None:
    """Add hook specifications of a plugin's own.

    Fires once per plugin, right after it is registered (historic: late plugins get it too).

    :param pluginmanager: the :class:`piko.platform.manager.PikoPluginManager`; call
        ``pluginmanager.add_hookspecs(module_or_class)``.
    Return value: ignored.
    """


@hookspec(historic=True)
def piko_configure(config: App) -> None:
    """Plugins are loaded and settings are read; set up what needs the configuration.

    Fires once at start-up, after discovery, extension loading and blocking, before any
    registration hook is collected (historic: plugins registered later still receive it).

    :param config: the :class:`piko.app.application.App` (settings, cwd, agent dir, CLI options, registries).
    Return value: ignored.
    """


@hookspec
def piko_unconfigure(config: App) -> None:
    """piko is about to exit: release what ``piko_configure`` acquired.

    Fires once, after the mode returned and ``session_shutdown`` was dispatched.

    :param config: the :class:`piko.app.application.App`.
    Return value: ignored.
    """


# ---------------------------------------------------------------------------
# Registration hooks
# ---------------------------------------------------------------------------


@hookspec
def piko_register_tools(register: RegisterTool) -> None:
    """Register LLM-callable tools.

    Fires when the tool registry is first needed (a session is created, ``pi plugins``).

    :param register: ``register(ToolDefinition)`` or ``register(name=..., label=...,
        description=..., parameters=<JSON schema>, execute=..., default_active=False, order=None)``;
        ``execute`` may be a callable or an ``"module:attr"`` import string resolved on first call.
    Return value: ignored. A second tool with a name already taken is refused with a diagnostic.
    """


@hookspec
def piko_register_provider_apis(register: RegisterProviderApi) -> None:
    """Register provider APIs: the wire protocols (``anthropic-messages``, ``openai-completions``, ...).

    Fires when the model registry is first needed.

    :param register: ``register(ProviderApi(name=..., stream=...))`` or keyword arguments;
        ``stream(model, context, options)`` returns an async iterator of assistant message
        events (``piko.data.streaming``); it may be an ``"module:attr"`` import string.
    Return value: ignored.
    """


@hookspec
def piko_register_providers(register: RegisterProvider) -> None:
    """Register providers and their models (catalog entries, models.json, company gateways).

    Fires when the model registry is first needed, after ``piko_register_provider_apis``.

    :param register: ``register(ProviderConfig(name=..., base_url=..., api=..., api_key=...,
        headers=..., auth_header=..., models=[Model, ...], stream_simple=...))``. A later
        registration of the same provider name replaces models it names and keeps the others
        (see :mod:`piko.models.registry`); ``tryfirst`` implementations run first (the built-in
        catalog, then models.json). ``register.diagnostic(message)`` reports a problem of the
        plugin's own sources (shown as ``Warning: message``).
    Return value: ignored.
    """


@hookspec
def piko_register_commands(register: RegisterCommand) -> None:
    """Register slash commands (``/name args``) for the interactive and RPC modes.

    :param register: ``register(name, description=..., handler=...,
        get_argument_completions=None)``; ``handler(args, ctx)`` may be a coroutine function.
    Return value: ignored. A name taken by a built-in command is refused with a diagnostic.
    """


@hookspec
def piko_register_cli_commands(register: RegisterCliCommand) -> None:
    """Register CLI subcommands (``pi install``, ``pi plugins``, ...).

    Fires when the CLI is built, before arguments are parsed.

    :param register: ``register(name, command)`` where ``command`` is a ``click.Command`` or a
        ``"module:attr"`` import string naming one (imported only when that subcommand runs),
        plus ``help=`` (one line for ``pi --help``).
    Return value: ignored.
    """


@hookspec
def piko_register_flags(register: RegisterFlag) -> None:
    """Register CLI flags of a plugin (``pi --plan``); values are read with ``get_flag``.

    Fires when the CLI is built, so ``pi --help`` lists them.

    :param register: ``register(name, description=..., type="boolean" | "string", default=None)``.
    Return value: ignored.
    """


@hookspec
def piko_register_shortcuts(register: RegisterShortcut) -> None:
    """Register keyboard shortcuts for the interactive mode.

    :param register: ``register(key, description=..., handler=...)``; ``handler(ctx)``.
        ``reserved=True`` (and no handler) holds a key for a mode's own binding: a later
        registration of it is refused with a diagnostic. The interactive mode reserves pi's keys
        (ctrl+c, ctrl+d, escape, enter, ...) this way.
    Return value: ignored.
    """


@hookspec
def piko_register_modes(register: RegisterMode) -> None:
    """Register run modes (``text``/``json`` print, ``rpc``, ``interactive``, or your own).

    Fires when the CLI resolves ``--mode``.

    :param register: ``register(name, run=..., description=..., interactive=False)``;
        ``run(app) -> int`` (or a coroutine function) runs the mode and returns the exit code.
    Return value: ignored.
    """


@hookspec
def piko_register_message_renderers(register: RegisterMessageRenderer) -> None:
    """Register renderers for custom messages (by ``customType``) in the interactive mode.

    :param register: ``register(custom_type, renderer)``; ``renderer(message, options, theme)``
        returns a rich renderable.
    Return value: ignored.
    """


@hookspec
def piko_register_resource_loaders(register: RegisterResourceLoader) -> None:
    """Register loaders for resources: context files, skills, prompt templates, themes.

    :param register: ``register(kind, loader)`` where ``kind`` is ``"context_files"``,
        ``"skills"``, ``"prompt_templates"`` or ``"themes"`` and ``loader(request)`` returns
        a list of resources of that kind (see :mod:`piko.resources.loader`).
    Return value: ignored.
    """


@hookspec
def piko_register_package_sources(register: RegisterPackageSource) -> None:
    """Register package sources for ``pi install`` (``pip:``, ``git:``, ``path:``, ``npm:``).

    :param register: ``register(scheme, handler)``; ``handler`` implements install, remove,
        update and resolve of that scheme's sources.
    Return value: ignored.
    """


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

    :param event: ``ProjectTrustEvent(cwd, found)``; ``found`` names what the project would load.
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

    :param event: ``SessionStartEvent(reason="startup"|"reload"|"new"|"resume"|"fork",
        previous_session_file)``.
    Semantics: notify.
    """


@event(Semantics.CANCEL)
def piko_session_before_switch(event: SessionBeforeSwitchEvent, ctx: Context) -> Any:
    """The user is about to start a new session or resume another one.

    :param event: ``SessionBeforeSwitchEvent(reason="new"|"resume", target_session_file)``.
    Return value: ``{"cancel": True}`` stops the switch.
    Semantics: cancel (the first handler that cancels wins; the others are not called).
    """


@event(Semantics.NOTIFY)
def piko_session_switch(event: SessionSwitchEvent, ctx: Context) -> None:
    """The session was switched (new session or resumed one).

    :param event: ``SessionSwitchEvent(reason, previous_session_file)``.
    Semantics: notify.
    """


@event(Semantics.CANCEL)
def piko_session_before_fork(event: SessionBeforeForkEvent, ctx: Context) -> Any:
    """A fork of the session at ``entry_id`` is about to be created.

    :param event: ``SessionBeforeForkEvent(entry_id, position="before"|"at", reason)``
    (``reason`` is omp's name: ``"branch"`` before a user message, ``"fork"`` at an entry).
    Return value: ``{"cancel": True}`` stops the fork; ``skip_conversation_restore`` keeps the
    editor empty.
    Semantics: cancel.
    """


@event(Semantics.NOTIFY)
def piko_session_fork(event: SessionForkEvent, ctx: Context) -> None:
    """The session was forked into a new file.

    :param event: ``SessionForkEvent(previous_session_file, reason)``.
    Semantics: notify.
    """


@event(Semantics.CANCEL, can_modify="Yes (supply the compaction)", can_cancel="Yes")
def piko_session_before_compact(event: SessionBeforeCompactEvent, ctx: Context) -> Any:
    """Compaction is about to run.

    :param event: ``SessionBeforeCompactEvent(preparation, branch_entries,
        custom_instructions, signal)``.
    Return value: ``{"cancel": True}`` stops it; ``{"compaction": CompactionResult}`` supplies
    the summary instead of the compaction plugin.
    Semantics: cancel (a supplied compaction is kept; a cancel stops at once).
    """


@event(Semantics.NOTIFY)
def piko_session_compact(event: SessionCompactEvent, ctx: Context) -> None:
    """Compaction wrote its ``compaction`` entry.

    :param event: ``SessionCompactEvent(compaction_entry, from_extension)``.
    Semantics: notify.
    """


@event(Semantics.CANCEL, can_modify="Yes (supply the summary)", can_cancel="Yes")
def piko_session_before_tree(event: SessionBeforeTreeEvent, ctx: Context) -> Any:
    """The user is about to move to another point of the session tree (``/tree``).

    :param event: ``SessionBeforeTreeEvent(preparation, signal)``.
    Return value: ``{"cancel": True}`` stops it; ``{"summary": {"summary": ..., "details": ...}}``
    supplies the branch summary; ``custom_instructions``/``replace_instructions`` adjust it.
    Semantics: cancel.
    """


@event(Semantics.NOTIFY)
def piko_session_tree(event: SessionTreeEvent, ctx: Context) -> None:
    """The session's leaf moved to another point of the tree.

    :param event: ``SessionTreeEvent(new_leaf_id, old_leaf_id, summary_entry, from_extension)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_session_shutdown(event: SessionShutdownEvent, ctx: Context) -> None:
    """The session is being torn down (quit, reload, new, resume, fork).

    :param event: ``SessionShutdownEvent(reason, target_session_file)``.
    Semantics: notify; handlers run with a 2-second budget.
    """


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

    :param event: ``InputEvent(text, images, source="interactive"|"rpc"|"extension")``.
    Return value: ``{"action": "transform", "text": ..., "images": ...}`` replaces the input
    (later handlers see the change); ``{"action": "handled"}`` consumes it (no turn runs and
    the remaining handlers are skipped); ``None`` or ``{"action": "continue"}`` leaves it.
    Semantics: chain, with handled as a short-circuit.
    """


@event(Semantics.CHAIN, reducer=reducers.before_agent_start)
def piko_before_agent_start(event: BeforeAgentStartEvent, ctx: Context) -> Any:
    """A prompt is about to start the agent loop.

    :param event: ``BeforeAgentStartEvent(prompt, images, system_prompt)``.
    Return value: ``{"system_prompt": str}`` replaces the system prompt for this prompt's
    turns (chained: the next handler sees it); ``{"message": {custom_type, content, display,
    details}}`` adds a custom message after the user's (collected from every handler).
    A result of another shape is ignored and reported as an ``extension_error``.
    Semantics: chain.
    """


@event(Semantics.CHAIN, reducer=reducers.context, empty=reducers.unchanged("messages"))
def piko_context(event: ContextEvent, ctx: Context) -> Any:
    """The messages of the next provider request are assembled.

    :param event: ``ContextEvent(messages)`` (a copy: changing it does not touch history).
    Return value: ``{"messages": [...]}`` replaces them for this request only.
    Semantics: chain.
    """


@event(Semantics.CHAIN, reducer=reducers.payload, empty=reducers.unchanged("payload"))
def piko_before_provider_request(event: BeforeProviderRequestEvent, ctx: Context) -> Any:
    """The provider payload (JSON body) is built and about to be sent.

    :param event: ``BeforeProviderRequestEvent(payload)``.
    Return value: the replacement payload itself (not wrapped); ``None`` keeps it.
    Semantics: chain.
    """


@event(Semantics.NOTIFY)
def piko_after_provider_response(event: AfterProviderResponseEvent, ctx: Context) -> None:
    """The provider answered (status and headers), before its body is consumed.

    :param event: ``AfterProviderResponseEvent(status, headers)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_agent_start(event: AgentStartEvent, ctx: Context) -> None:
    """The agent loop started for a prompt.

    :param event: ``AgentStartEvent()``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_agent_end(event: AgentEndEvent, ctx: Context) -> None:
    """The agent loop ended (the model stopped, an error, or an abort).

    :param event: ``AgentEndEvent(messages, will_retry)``: the messages this run added;
        ``will_retry`` (pi 1.6's ``willRetry``) says the session retries the run next (its last
        answer failed with a retryable error and retries are left).
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_turn_start(event: TurnStartEvent, ctx: Context) -> None:
    """A turn (one assistant response and its tool calls) starts.

    :param event: ``TurnStartEvent(turn_index, timestamp)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_turn_end(event: TurnEndEvent, ctx: Context) -> None:
    """A turn ended.

    :param event: ``TurnEndEvent(turn_index, message, tool_results)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_message_start(event: MessageStartEvent, ctx: Context) -> None:
    """A message (user, assistant, tool result, custom) starts.

    :param event: ``MessageStartEvent(message)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_message_update(event: MessageUpdateEvent, ctx: Context) -> None:
    """A streaming assistant message changed (one provider delta).

    :param event: ``MessageUpdateEvent(message, assistant_message_event)``. ``message`` is the
        message as it stands (the same object throughout the stream); the change itself is
        ``assistant_message_event`` (``type``, ``content_index``, ``delta``). A streaming block's
        text and a tool call's arguments are joined or parsed when read, so reading them costs
        time in proportion to their size: use the delta when that is enough.
    Semantics: notify. Called once per delta: keep it cheap. Plain-function handlers run on the
    event loop (a thread hop would cost more than they do); one that holds the loop for more
    than a second is interrupted, reported, and gets no more of these events.
    """


@event(Semantics.CHAIN, reducer=reducers.message_end, empty=reducers.unchanged("message"))
def piko_message_end(event: MessageEndEvent, ctx: Context) -> Any:
    """A message is complete.

    :param event: ``MessageEndEvent(message)``.
    Return value: ``{"message": replacement}`` with the same role replaces it for history,
    persistence and the next request.
    Semantics: chain.
    """


@event(Semantics.CHAIN, reducer=reducers.assistant_message, empty=reducers.unchanged("message"))
def piko_assistant_message(event: AssistantMessageEvent, ctx: Context) -> Any:
    """An assistant message is final, before it is saved, shown as ended or its tools run.

    :param event: ``AssistantMessageEvent(message)``.
    Return value: ``{"content": [...]}``: the same blocks with changed text only (count,
    order, types and non-text blocks unchanged; edited text loses its signature). Invalid
    replacements are reported and skipped.
    Semantics: chain.
    """


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

    :param event: ``ToolCallEvent(tool_call_id, tool_name, input)``; ``input`` may be changed
        in place, and later handlers see the change.
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

    :param event: ``ToolResultEvent(tool_call_id, tool_name, input, content, details, is_error)``.
    Return value: any of ``content``, ``details``, ``is_error`` replaces that part (later
    handlers see the patched result).
    Semantics: chain.
    """


@event(Semantics.NOTIFY)
def piko_tool_execution_start(event: ToolExecutionStartEvent, ctx: Context) -> None:
    """A tool started running.

    :param event: ``ToolExecutionStartEvent(tool_call_id, tool_name, args)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_tool_execution_update(event: ToolExecutionUpdateEvent, ctx: Context) -> None:
    """A running tool reported partial output.

    :param event: ``ToolExecutionUpdateEvent(tool_call_id, tool_name, args, partial_result)``.
    Semantics: notify. Plain-function handlers run as ``message_update``'s do (on the loop,
    interrupted after a second).
    """


@event(Semantics.NOTIFY)
def piko_tool_execution_end(event: ToolExecutionEndEvent, ctx: Context) -> None:
    """A tool finished running.

    :param event: ``ToolExecutionEndEvent(tool_call_id, tool_name, result, is_error,
        duration_ms)``; ``duration_ms`` (pi 1.6's ``durationMs``) is how long the tool's
        ``execute`` took, None when the tool did not run (unknown, invalid arguments, blocked).
    Semantics: notify.
    """


# ---------------------------------------------------------------------------
# Model, user commands and resources
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_model_select(event: ModelSelectEvent, ctx: Context) -> None:
    """A model was selected (set, cycled or restored from the session).

    :param event: ``ModelSelectEvent(model, previous_model, source="set"|"cycle"|"restore")``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_thinking_level_select(event: ThinkingLevelSelectEvent, ctx: Context) -> None:
    """The thinking level changed.

    :param event: ``ThinkingLevelSelectEvent(level, previous_level)``.
    Semantics: notify.
    """


@event(Semantics.FIRST)
def piko_user_bash(event: UserBashEvent, ctx: Context) -> Any:
    """The user runs a shell command with ``!cmd`` or ``!!cmd`` (RPC ``bash``).

    :param event: ``UserBashEvent(command, exclude_from_context, cwd)``.
    Return value: ``{"result": BashResult}`` runs nothing and uses that result;
    ``{"operations": ...}`` supplies how to run it.
    Semantics: first result.
    """


@event(Semantics.COLLECT, reducer=reducers.resources, empty=reducers.no_resources)
def piko_resources_discover(event: ResourcesDiscoverEvent, ctx: Context) -> Any:
    """Resources are being discovered; a plugin may add skill, prompt and theme paths.

    :param event: ``ResourcesDiscoverEvent(cwd, reason="startup"|"reload")``.
    Return value: ``{"skill_paths": [...], "prompt_paths": [...], "theme_paths": [...]}``.
    Semantics: collect (every handler's paths are gathered).
    """


# ---------------------------------------------------------------------------
# Reliability signals
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_auto_compaction_start(event: AutoCompactionStartEvent, ctx: Context) -> None:
    """Automatic compaction started.

    :param event: ``AutoCompactionStartEvent(reason="threshold"|"overflow")``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_auto_compaction_end(event: AutoCompactionEndEvent, ctx: Context) -> None:
    """Automatic compaction ended.

    :param event: ``AutoCompactionEndEvent(result, aborted, will_retry, error_message)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_auto_retry_start(event: AutoRetryStartEvent, ctx: Context) -> None:
    """A failed provider request will be retried after a delay.

    :param event: ``AutoRetryStartEvent(attempt, max_attempts, delay_ms, error_message)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_auto_retry_end(event: AutoRetryEndEvent, ctx: Context) -> None:
    """Retrying ended, successfully or not.

    :param event: ``AutoRetryEndEvent(success, attempt, final_error)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_extension_error(event: ExtensionErrorEvent, ctx: Context) -> None:
    """A handler of another event raised or overran its budget.

    :param event: ``ExtensionErrorEvent(extension_path, event, error, stack)``.
    Semantics: notify (errors raised here are logged to stderr, never re-dispatched).
    """


# ---------------------------------------------------------------------------
# More events of the extension reference
# ---------------------------------------------------------------------------


@event(Semantics.NOTIFY)
def piko_agent_settled(event: AgentSettledEvent, ctx: Context) -> None:
    """The agent finished its run and nothing is queued (pi 1.6).

    The moment to reload, hand off or report, once per settled run.

    :param event: ``AgentSettledEvent()``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_mcp_servers_change(event: McpServersChangeEvent, ctx: Context) -> None:
    """An extension registered or removed an MCP server after start-up (pi 1.6).

    ``pi.register_mcp_server`` / ``unregister_mcp_server`` fire it once the session runs; the MCP
    plugin connects or closes the server (``App.extension_mcp_servers`` holds them all).

    :param event: ``McpServersChangeEvent(servers)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_mcp_notification(event: McpNotificationEvent, ctx: Context) -> None:
    """An MCP server sent a notification (omp), after the MCP plugin handled the ones it knows.

    Every method reaches it, server-specific ones too; ``pi.events.on("mcp_notification")`` gets
    the same as a dict.

    :param event: ``McpNotificationEvent(server, method, params)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_session_info_changed(event: SessionInfoChangedEvent, ctx: Context) -> None:
    """The session's name changed (``/name``, ``pi.set_session_name``, RPC ``set_session_name``).

    :param event: ``SessionInfoChangedEvent(name)``.
    Semantics: notify.
    """


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

    :param event: ``SessionStopEvent(session_id, continuations, messages)``.
    Return value: ``{"continue": True, "additionalContext": str}`` or ``{"decision": "block",
    "reason": str}``; anything else lets the session stop.
    Semantics: collect.
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

    :param event: ``SessionCompactingEvent(session_id, messages)`` (the messages summarized).
    Return value: ``{"context": [str], "prompt": str, "preserveData": {...}}``, any part.
    Semantics: collect.
    """


@event(Semantics.NOTIFY)
def piko_before_provider_headers(event: BeforeProviderHeadersEvent, ctx: Context) -> None:
    """The headers of a provider request are assembled (pi 1.6).

    It fires after every plugin's ``piko_provider_request_headers``: handlers change
    ``event.headers`` in place (a key set to None is removed), in load order; once per request,
    retries reuse them.

    :param event: ``BeforeProviderHeadersEvent(headers, model)``.
    Semantics: notify.
    """


@event(Semantics.CHAIN, reducer=reducers.context_with_system, empty=reducers.prompt_and_messages)
def piko_context_with_system(event: ContextWithSystemEvent, ctx: Context) -> Any:
    """The system prompt and messages of the next provider request are assembled (pi 1.6).

    It fires after every ``context`` handler; what handlers return is sent as it is, for this
    request only (``before_agent_start`` changes the prompt durably).

    :param event: ``ContextWithSystemEvent(system_prompt, messages)`` (a copy of the messages).
    Return value: ``{"systemPrompt": str, "messages": [...]}``, either part; each handler sees
    the previous one's.
    Semantics: chain.
    """


@event(Semantics.NOTIFY)
def piko_ui_prompt_start(event: UiPromptStartEvent, ctx: Context) -> None:
    """A ``ctx.ui`` dialog opened (pi 1.6).

    Fired without being awaited when ``select``, ``confirm``, ``input``, ``editor`` or ``custom``
    waits on the user (not in print or JSON mode); overlapping dialogs make one span.

    :param event: ``UiPromptStartEvent(kind, method, title, reason="ui_prompt")``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_ui_prompt_end(event: UiPromptEndEvent, ctx: Context) -> None:
    """A ``ctx.ui`` dialog closed (pi 1.6).

    :param event: ``UiPromptEndEvent(kind, method, title, cancelled, reason="ui_prompt")``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_cache_warming_decision(event: CacheWarmingDecisionEvent, ctx: Context) -> None:
    """Before a prompt-cache warming refresh (omp). piko does not warm caches: never fired.

    :param event: ``CacheWarmingDecisionEvent(warm_cost, miss_cost, continuation_probability, action)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_tool_approval_requested(event: ToolApprovalRequestedEvent, ctx: Context) -> None:
    """A tool call waits for approval (omp). piko has no approval tiers: never fired yet.

    :param event: ``ToolApprovalRequestedEvent(tool_call_id, tool_name, input)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_tool_approval_resolved(event: ToolApprovalResolvedEvent, ctx: Context) -> None:
    """A tool call's approval was decided (omp). Never fired yet.

    :param event: ``ToolApprovalResolvedEvent(tool_call_id, tool_name, approved)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_plan_review_requested(event: PlanReviewRequestedEvent, ctx: Context) -> None:
    """An interactive plan review opened (omp). For a plan-mode plugin to fire.

    :param event: ``PlanReviewRequestedEvent(review_id, session_id, title, plan_path, plan_content, choices, tiers)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_plan_review_resolved(event: PlanReviewResolvedEvent, ctx: Context) -> None:
    """A plan review closed (omp). For a plan-mode plugin to fire.

    :param event: ``PlanReviewResolvedEvent(review_id, choice, by="local"|"extension")``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_before_subagent_spawn(event: BeforeSubagentSpawnEvent, ctx: Context) -> None:
    """A subagent is about to be spawned (omp). piko runs no subagents: for a subagent plugin to fire.

    :param event: ``BeforeSubagentSpawnEvent(agent, invocation_kind, model_role, patterns, spawn_key)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_retry_fallback_applied(event: RetryFallbackAppliedEvent, ctx: Context) -> None:
    """Auto-retry switched to a fallback model (omp). For a fallback plugin to fire.

    :param event: ``RetryFallbackAppliedEvent(from_model, to_model, role, reason)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_retry_fallback_succeeded(event: RetryFallbackSucceededEvent, ctx: Context) -> None:
    """A request succeeded on a fallback model (omp). For a fallback plugin to fire.

    :param event: ``RetryFallbackSucceededEvent(model, role)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_ttsr_triggered(event: TtsrTriggeredEvent, ctx: Context) -> None:
    """A stream rule triggered (omp's TTSR). For the plugin that owns stream rules to fire.

    :param event: ``TtsrTriggeredEvent(rules)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_todo_reminder(event: TodoReminderEvent, ctx: Context) -> None:
    """The agent is reminded of open todos (omp). For a todo plugin to fire.

    :param event: ``TodoReminderEvent(todos, attempt, max_attempts)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_goal_updated(event: GoalUpdatedEvent, ctx: Context) -> None:
    """The session's goal changed (omp). For a goal plugin to fire.

    :param event: ``GoalUpdatedEvent(goal)``.
    Semantics: notify.
    """


@event(Semantics.NOTIFY)
def piko_credential_disabled(event: CredentialDisabledEvent, ctx: Context) -> None:
    """A stored credential was disabled after failing (omp). For an auth plugin to fire.

    :param event: ``CredentialDisabledEvent(provider, reason)``.
    Semantics: notify.
    """


@event(Semantics.FIRST)
def piko_user_python(event: UserPythonEvent, ctx: Context) -> Any:
    """The user runs Python code (omp's ``$`` line).

    piko has no such input yet: for a plugin that adds one to fire, as ``user_bash``.

    :param event: ``UserPythonEvent(code, exclude_from_context, cwd)``.
    Return value: ``{"result": ...}`` runs nothing and uses that result.
    Semantics: first result.
    """
