"""The agent session: a conversation with a model, its session file, extensions, retries and compaction.

One :class:`AgentSession` is what a mode drives: ``prompt``/``steer``/``follow_up``/``abort``,
model and thinking-level changes, manual compaction, user shell commands, statistics. It
turns agent-loop events into extension events (through the kernel dispatcher), tells its
listeners (the mode: print, json, RPC, interactive), and persists messages to the session file.
It is also the host behind ``ctx`` (:class:`piko.extensions.context.ExtensionContext`, through
:class:`~piko.engine.extension_host.ExtensionHost`) and behind the extension API's session actions.

The session composes parts with one job each. The modes use these directly: ``listeners``
(:mod:`~piko.engine.listeners`), ``queues`` (:mod:`~piko.engine.queues`), ``retry``
(:mod:`~piko.engine.retry`), ``shell`` (:mod:`~piko.engine.user_shell`), ``models``
(:mod:`~piko.engine.model_control`), ``compaction`` (:mod:`~piko.engine.compaction_state`) and
``runs`` (:mod:`~piko.engine.run_control`). Inside are :mod:`~piko.engine.prompt_flow` (with
:mod:`~piko.engine.prompt_input`), the system prompt (:mod:`~piko.engine.system_prompt`),
:mod:`~piko.engine.stop_hook`, :mod:`~piko.engine.extension_messages`, :mod:`~piko.engine.extension_events`,
:mod:`~piko.engine.persistence`, :mod:`~piko.engine.provider_hooks` and
:mod:`~piko.engine.loop_hooks`. All share the one
:class:`~piko.engine.session_services.SessionServices` the session builds (settings, dispatcher,
ctx, listeners, and live views of its model, session id, run signal...); the parts only a run
needs (retry, runs, shell, prompt flow, extension messages and events, provider and loop hooks)
are built, and their modules imported, when first used. Operations over the
whole session live in their own modules: :mod:`~piko.engine.stats`,
:mod:`~piko.engine.navigation`, :mod:`~piko.engine.compaction`, :mod:`~piko.engine.reloading`.
Methods answer with records; the modes build the wire forms.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from piko.data.events import CompactionResult
from piko.data.events import SessionInfoChangedEvent
from piko.data.events import SessionShutdownEvent
from piko.data.messages import AssistantMessage
from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.data.messages import Model
from piko.data.messages import UserMessage
from piko.engine import startup_gc
from piko.engine.agent import Agent
from piko.engine.compaction_state import CompactionState
from piko.engine.extension_host import ExtensionHost
from piko.engine.listeners import Listener
from piko.engine.loop import AgentState
from piko.engine.loop import LoopConfig
from piko.engine.model_control import ModelControl
from piko.engine.persistence import SessionRecorder
from piko.engine.queues import MessageQueues
from piko.engine.session_services import SessionServices
from piko.engine.system_prompt import SessionSystemPrompt
from piko.lib.forwarding import Forwarded
from piko.models.resolver import DEFAULT_THINKING_LEVEL
from piko.models.resolver import ScopedModel
from piko.resources.loader import Resources

if TYPE_CHECKING:
    from piko.engine.extension_events import ExtensionEvents
    from piko.engine.extension_messages import ExtensionMessages
    from piko.engine.loop_hooks import LoopHooks
    from piko.engine.navigation import ForkMessage
    from piko.engine.navigation import ForkOutcome
    from piko.engine.navigation import SessionChange
    from piko.engine.navigation import TreeOutcome
    from piko.engine.prompt_flow import PromptFlow
    from piko.engine.provider_hooks import ProviderRequests
    from piko.engine.reloading import ReloadSummary
    from piko.engine.retry import RetryPolicy
    from piko.engine.run_control import RunControl
    from piko.engine.stats import ContextUsage
    from piko.engine.stats import SessionStats
    from piko.engine.tool_selection import LoadoutRecorder
    from piko.engine.user_shell import UserShell


def built_part(session: AgentSession, name: str) -> Any:
    """The session's run part ``name`` (``"shell"``, ``"runs"``...) if it was built, else None:
    asking for it through the property would build it."""
    return session.__dict__.get(name)


def _retry_policy(session: AgentSession) -> RetryPolicy:
    from piko.engine.retry import RetryPolicy

    return RetryPolicy(session.services)


def _run_control(session: AgentSession) -> RunControl:
    from piko.engine.run_control import RunControl
    from piko.engine.stop_hook import StopHook

    return RunControl(
        session.agent, session.retry, session.services, check_compaction=session._check_compaction,
        stop_hook=StopHook(session.services), has_pending=session.queues.has_pending,
    )  # fmt: skip


def _user_shell(session: AgentSession) -> UserShell:
    from piko.engine.user_shell import UserShell

    return UserShell(session.services)


def _prompt_flow(session: AgentSession) -> PromptFlow:
    from piko.engine.prompt_flow import PromptFlow
    from piko.engine.prompt_input import PromptInput

    prompt_input = PromptInput(
        session.app,
        session.services,
        resources=lambda: session.resources,
        prompt=lambda text: session.prompt(text, expand=False),
    )
    return PromptFlow(session, prompt_input, session._system_prompt, session._check_compaction)


def _extension_messages(session: AgentSession) -> ExtensionMessages:
    from piko.engine.extension_messages import ExtensionMessages

    return ExtensionMessages(
        session.queues, session.services, start_turn=session._start_turn, prompt=session.prompt
    )


def _event_forwarding(session: AgentSession) -> ExtensionEvents:
    from piko.engine.extension_events import ExtensionEvents

    return ExtensionEvents(session.services)


def _provider_requests(session: AgentSession) -> ProviderRequests:
    from piko.engine.provider_hooks import ProviderRequests

    return ProviderRequests(session.services)


def _loop_hooks(session: AgentSession) -> LoopHooks:
    from piko.engine.loop_hooks import LoopHooks

    return LoopHooks(session.services)


class AgentSession:
    """A running conversation (see the module docstring)."""

    def __init__(
        self,
        app: Any,
        session_manager: Any,
        *,
        model: Model | None,
        thinking_level: str = DEFAULT_THINKING_LEVEL,
        active_tools: list[str] | None = None,
        resources: Resources | None = None,
        scoped_models: list[ScopedModel] | None = None,
        ui: Any = None,
        mode: str = "print",
        custom_system_prompt: str | None = None,
        append_system_prompt: list[str] | None = None,
    ) -> None:
        self.app = app
        self.settings = app.settings
        self.model_registry = app.model_registry
        self.dispatcher = app.dispatcher
        self.session_manager = session_manager
        self.cwd = str(getattr(session_manager, "cwd", None) or app.cwd)
        self.resources = resources or Resources()
        self.mode = mode
        self.ctx = app.context(host=ExtensionHost(self), ui=ui, mode=mode)
        self._system_prompt = SessionSystemPrompt(
            app.pm, custom_system_prompt, list(append_system_prompt or [])
        )
        self.shutdown_requested = False  # an extension asked to quit (ctx.shutdown())
        context = session_manager.build_context()
        self.agent = Agent(
            AgentState(messages=list(context.messages)),
            self._loop_config,
            self._on_agent_event,
            steering_mode=str(self.settings.get("steeringMode", "one-at-a-time")),
            follow_up_mode=str(self.settings.get("followUpMode", "one-at-a-time")),
        )
        self.services = services = SessionServices(
            settings=self.settings, registry=self.model_registry, pm=app.pm, dispatcher=self.dispatcher,
            ctx=self.ctx, save_setting=functools.partial(_save_setting, app), emit=self._emit,
            announce=self._announce, add=lambda message: self._recorder.add(message),
            signal=lambda: self.agent.signal, messages=lambda: self.agent.state.messages,
            model=lambda: self.model, thinking_level=lambda: self.thinking_level,
            session_id=lambda: self.session_id, cwd=lambda: self.cwd, manager=lambda: self.session_manager,
            is_streaming=lambda: self.is_streaming,
        )  # fmt: skip
        self.listeners = services.listeners
        self.queues = MessageQueues(self.agent, services)
        self.models = ModelControl(
            services, model=model, thinking_level=thinking_level, scoped_models=scoped_models
        )
        self.compaction = CompactionState(services)
        self._recorder = SessionRecorder(services)
        self.loadout: LoadoutRecorder | None = None  # set by engine.setup once the session starts
        self.prompt_disposition = "started"  # how the last prompt went (pi 1.6's RPC disposition)
        if active_tools is None:
            from piko.engine.setup import default_tool_order

            active_tools = [
                t.name for t in default_tool_order(list(app.registries.tools)) if t.default_active
            ]
        self.set_active_tools([n for n in active_tools if n in app.registries.tools], persist=False)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent and session event (the objects of :mod:`piko.data.events`)."""
        return self.listeners.subscribe(listener)

    async def _emit(self, name: str, event: Any) -> Any:
        """Tell the extensions."""
        return await self.dispatcher.emit(name, event, self.ctx)

    async def _announce(self, name: str, event: Any) -> None:
        """Tell the listeners, then the extensions."""
        await self.listeners.notify(event)
        await self.dispatcher.emit(name, event, self.ctx)

    # -- state ---------------------------------------------------------------------------------

    @property
    def model(self) -> Model | None:
        return self.models.model

    @model.setter
    def model(self, model: Model | None) -> None:
        self.models.model = model

    # the parts a run needs, built (and their modules imported) when first used: an RPC start
    # that answers get_state never imports them
    retry = functools.cached_property(_retry_policy)
    runs = functools.cached_property(_run_control)
    shell = functools.cached_property(_user_shell)
    _flow = functools.cached_property(_prompt_flow)
    _sent = functools.cached_property(_extension_messages)
    _extension_events = functools.cached_property(_event_forwarding)
    _provider = functools.cached_property(_provider_requests)
    _hooks = functools.cached_property(_loop_hooks)

    thinking_level: Forwarded[str] = Forwarded("models")
    is_streaming: Forwarded[bool] = Forwarded("agent")
    messages: Forwarded[list[Any]] = Forwarded("agent.state")
    system_prompt: Forwarded[str] = Forwarded("agent.state")

    @property
    def session_id(self) -> str:
        return str(self.session_manager.session_id)

    @property
    def session_file(self) -> str | None:
        path = self.session_manager.session_file
        return str(path) if path else None

    # -- tools and system prompt ---------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self.agent.state.tools]

    def get_all_tools(self) -> list[dict[str, Any]]:
        """Every registered tool as pi's ``getAllTools`` describes it (name, description, ...)."""
        from piko.engine.tool_selection import describe_tools

        return describe_tools(self.app.registries.tools)

    def set_active_tools(self, names: list[str], *, persist: bool = True) -> None:
        """Activate exactly ``names`` (unknown names are ignored) and rebuild the system prompt."""
        registry = self.app.registries.tools
        tools = [registry.get(n) for n in dict.fromkeys(names) if registry.get(n) is not None]
        self.agent.state.tools = tools
        self._rebuild_system_prompt()

    def _record_tools(self) -> None:
        """Note the active tools in the session file when they changed (as pi does when a run
        starts), so a resume gets them back; the run declares them in the file's order."""
        if self.loadout is not None:
            order = self.loadout.record(self.get_active_tools(), self.app.registries.tools.names())
            if list(order) != self.get_active_tools():
                self.set_active_tools(list(order))

    def _rebuild_system_prompt(self) -> None:
        self._system_prompt.rebuild(self.cwd, self.agent.state.tools, self.resources)
        self.agent.state.system_prompt = self._system_prompt.current

    def get_system_prompt(self) -> str:
        return self.agent.state.system_prompt

    # -- the loop: its configuration and its events (extensions, then listeners, then the file)

    def _loop_config(self) -> LoopConfig:
        return self._hooks.config(
            self.model, make_options=self._provider.options, steering=self._flow.next_steering,
            follow_ups=self._flow.next_follow_ups,
        )  # fmt: skip

    async def _on_agent_event(self, event: Any) -> None:
        kind = event.TYPE
        if kind == "message_start" and isinstance(event.message, UserMessage):
            self.runs.user_message_started()
            await self.queues.delivered(event.message)
        if kind == "agent_end":
            event.will_retry = self.retry.will_retry(
                event.messages, self.model, aborted=self.runs.abort_requested
            )
        await self._extension_events.forward(event)
        await self.listeners.notify(event)
        if kind == "turn_end":
            startup_gc.resume()
        if kind == "message_end":
            message = event.message
            self._recorder.record(message)
            if isinstance(message, AssistantMessage):
                self.runs.answered(message)
                await self.retry.answered(message)

    # -- prompting -----------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        expand: bool = True,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        preflight_result: Callable[[bool], Any] | None = None,
        attribution: str | None = None,
    ) -> None:
        """Send a prompt and run the agent until it is idle (pi's ``AgentSession.prompt``).

        Extension commands (``/name``) run at once, even while streaming; ``input`` handlers may
        transform or handle the text; ``/skill:name`` and prompt templates are expanded; while
        streaming the message is queued as ``streaming_behavior`` says (``steer``/``followUp``).
        ``preflight_result(ok)`` is called once the prompt was accepted (queued, handled, or about
        to run) or refused (the exception follows), before the agent runs (RPC answers then).
        ``attribution`` (``"user"``/``"agent"``, from ``pi.send_user_message``) is recorded on the
        user message. :attr:`prompt_disposition` holds pi 1.6's disposition of the prompt by the
        time ``preflight_result`` is called: ``"handled"`` (an extension command or ``input``
        handler consumed it), ``"queued"`` (streaming) or ``"started"``.
        """
        try:
            with self._flow.input.preparation() as signal:  # abort() cancels its handlers too
                messages = await self._flow.prepare(
                    text, images, expand=expand, streaming_behavior=streaming_behavior, source=source,
                    signal=signal, attribution=attribution,
                )  # fmt: skip
        except Exception:
            if preflight_result is not None:
                preflight_result(False)
            raise
        self.prompt_disposition = self._flow.disposition if messages is None else "started"
        if preflight_result is not None:
            preflight_result(True)
        if messages is not None:
            await self._run(lambda: self.agent.prompt(messages))

    async def settle(self) -> None:
        """Wait until the work extensions started without awaiting it (``pi.send_user_message``,
        ``pi.send_message``...) is done and the agent is idle: what print mode waits for before
        it ends."""
        await self.runs.settle()

    async def _run(self, work: Callable[[], Any]) -> None:
        """Run the agent (recording the active tools first, as pi does) until it settles."""
        self._record_tools()
        await self.runs.run_until_settled(work)

    async def _start_turn(self, message: CustomMessage) -> None:
        self.models.require_ready()
        await self._run(lambda: self.agent.prompt([message]))

    async def steer(
        self, text: str, images: list[ImageContent] | None = None, *, source: str | None = None
    ) -> str:
        """Queue a message delivered before the next model call (expanded; no extension commands).
        With a ``source`` (``"rpc"``), the ``input`` handlers see it first and may change or handle it.
        Returns ``"queued"``, or ``"handled"`` when a handler consumed it (pi 1.6's disposition)."""
        return await self._flow.queue(text, images, follow_up=False, source=source)

    async def follow_up(
        self, text: str, images: list[ImageContent] | None = None, *, source: str | None = None
    ) -> str:
        """Queue a message delivered once the agent would stop (``source`` and the answer as for
        :meth:`steer`)."""
        return await self._flow.queue(text, images, follow_up=True, source=source)

    async def abort(self) -> None:
        """Stop what runs now (prompt handlers, stream, tools, retry wait) and wait until idle."""
        flow, runs, retry = (built_part(self, name) for name in ("_flow", "runs", "retry"))
        if flow is not None:  # a part not built yet has nothing to stop
            flow.input.abort()
        if runs is not None:
            runs.abort_requested = True
        if retry is not None:
            retry.abort()
        self.agent.abort()
        await self.agent.wait_for_idle()

    def abort_bash(self) -> None:
        """Stop the user's shell command, if one was started (pi's ``abortBash``)."""
        shell = built_part(self, "shell")
        if shell is not None:
            shell.abort()

    # -- what extensions call through the extension API (pi.send_message, pi.set_model...) -----

    async def send_custom_message(
        self, message: Any, *, deliver_as: str | None = None, trigger_turn: bool = False,
        attribution: str | None = None,
    ) -> None:  # fmt: skip
        await self._sent.send_custom(
            message, deliver_as=deliver_as, trigger_turn=trigger_turn, attribution=attribution
        )

    async def send_user_message(
        self, content: Any, *, deliver_as: str | None = None, attribution: str | None = None
    ) -> None:
        await self._sent.send_user(content, deliver_as=deliver_as, attribution=attribution)

    async def set_model(self, model: Model, *, source: str = "set") -> None:
        """Switch model (needs credentials), record it in the session and settings."""
        await self.models.set_model(model, source=source)

    def set_thinking_level(self, level: str) -> None:
        """Set (clamped to the model) and record the thinking level when it changes."""
        self.models.set_thinking_level(level)

    def set_session_name(self, name: str) -> None:
        self.session_manager.append_session_info(name)
        changed = SessionInfoChangedEvent(name=self.session_manager.get_session_name())
        self.listeners.emit_now(changed)
        if self.dispatcher.has_handlers("session_info_changed"):
            self.listeners.spawn(self._emit("session_info_changed", changed))

    def get_session_name(self) -> str | None:
        return self.session_manager.get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.session_manager.append_label(entry_id, label)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        return str(self.session_manager.append_custom(custom_type, data))

    def get_commands(self) -> list[dict[str, Any]]:
        """Extension commands, prompt templates and skills, as pi lists them (RPC ``get_commands``,
        extensions' ``pi.get_commands()``)."""
        from piko.engine.command_list import list_commands

        return list_commands(self.app, self.resources)

    # -- compaction (see piko.engine.compaction) and statistics (see piko.engine.stats) --------

    async def _check_compaction(self, message: AssistantMessage, skip_aborted: bool) -> str | None:
        """Compact when the context overflowed or crossed the threshold (see ``check_compaction``)."""
        from piko.engine.compaction import check_compaction

        return await check_compaction(self, message, skip_aborted=skip_aborted)

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Manual compaction (``/compact``, RPC ``compact``); aborts what runs first."""
        from piko.engine.compaction import compact

        return await compact(self, custom_instructions)

    def rebuild_from_session(self) -> None:
        """Reload the conversation from the session manager (after compaction or navigation)."""
        context = self.session_manager.build_context()
        self.agent.state.messages = list(context.messages)

    def get_context_usage(self) -> ContextUsage | None:
        """Estimated tokens in context against the model's window."""
        return _first_use("stats").context_usage(
            self.model, self.agent.state.messages, self.session_manager.get_branch
        )

    def get_session_stats(self) -> SessionStats:
        """Message counts, tokens and cost of the conversation in context (pi's ``getSessionStats``)."""
        usage = [e.usage for e in self.session_manager.get_entries() if e.type == "usage"]  # pi 1.6's
        return _first_use("stats").session_stats(
            self.agent.state.messages, session_file=self.session_file, session_id=self.session_id,
            context_usage=self.get_context_usage(), usage_entries=usage,
        )  # fmt: skip

    @property
    def cache_warming_status(self) -> str:
        """pi 1.6's ``/session`` cache-warming status: piko keeps no prompt cache warm, so it is
        ``Inactive (why)`` for the ``cacheWarming`` mode (:attr:`cache_warming_mode`)."""
        return f"Inactive ({self._provider.cache_warming_reason(self.cache_warming_mode)})"

    @property
    def cache_warming_mode(self) -> str:
        """The ``cacheWarming`` setting (``off``, ``streaming``, ``idle``), read from the global
        settings file only and ``idle`` otherwise, as pi 1.6 reads it."""
        mode = self.settings.global_data.get("cacheWarming")  # always a dict (Settings._read)
        return mode if mode in ("off", "streaming", "idle") else "idle"

    def get_last_assistant_text(self) -> str | None:
        return _first_use("stats").last_assistant_text(self.agent.state.messages)

    # -- moving between sessions (see piko.engine.navigation), reload --------------------------

    async def new_session(self, parent_session: str | None = None, **_options: Any) -> SessionChange:
        return await _first_use("navigation").new_session(self, parent_session)

    async def switch_session(self, session_path: str) -> SessionChange:
        return await _first_use("navigation").switch_session(self, session_path)

    async def fork(self, entry_id: str, position: str = "before") -> ForkOutcome:
        return await _first_use("navigation").fork(self, entry_id, position)

    async def navigate_tree(self, target_id: str | None, **options: Any) -> TreeOutcome:
        return await _first_use("navigation").navigate_tree(self, target_id, **options)

    def get_fork_messages(self) -> list[ForkMessage]:
        return _first_use("navigation").fork_messages(self)

    async def reload(self) -> ReloadSummary:
        """``/reload``: settings, extension files, newly installed plugins, resources, system prompt."""
        return await _first_use("reloading").reload_session(self)

    # -- lifecycle -----------------------------------------------------------------------------

    async def shutdown(self, reason: str = "quit", *, abort_grace: float | None = None) -> None:
        """Stop running work, tell extensions, and detach from the app.

        Work that ignores the abort (a tool that never checks its signal) is waited for at most
        ``abort_grace`` seconds (:data:`piko.lib.exit_signals.ABORT_GRACE_S` by default; 0 when the
        caller gave up on it already); extensions see ``session_shutdown`` either way.
        """
        if self.is_streaming:
            from piko.lib.exit_signals import ABORT_GRACE_S
            from piko.lib.exit_signals import abort_within

            await abort_within(self, ABORT_GRACE_S if abort_grace is None else abort_grace)
        await self.dispatcher.emit("session_shutdown", SessionShutdownEvent(reason=reason), self.ctx)
        self.app.clear_extension_timers()
        self.app.remove_file_fallbacks()  # after every session_shutdown handler, which may still write
        if self.app.runtime is self:
            self.app.runtime = None


def _save_setting(app: Any, key: str, value: Any) -> None:
    """Write a global setting; a failure becomes a notice, not an error."""
    try:
        app.settings.set_global(key, value)
    except OSError as exc:
        app.notices.append(f"Could not save setting {key}: {exc}")


def _first_use(name: str) -> Any:
    """A module of :mod:`piko.engine` a session may never need, imported when it first does."""
    return importlib.import_module(f"piko.engine.{name}")
