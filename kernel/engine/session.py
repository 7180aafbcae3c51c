"""The agent session: a conversation with a model, its session file, extensions, retries and compaction.

One :class:`AgentSession` is what a mode drives: ``prompt``/``steer``/``follow_up``/``abort``,
model and thinking-level changes, manual compaction, user shell commands, statistics. It
turns agent-loop events into extension events (through the kernel dispatcher), tells its
listeners (the mode: print, json, RPC, interactive), and persists messages to the session file.
It is also the host behind ``ctx`` (:class:`piko.platform.context.ExtensionContext`) and behind the
extension API's session actions.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

from piko.data.events import (
    AfterProviderResponseEvent,
    AgentStartEvent,
    AssistantMessageEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    BashResult,
    BeforeAgentStartEvent,
    BeforeProviderRequestEvent,
    ContextEvent,
    InputEvent,
    MessageEndEvent,
    MessageStartEvent,
    ModelSelectEvent,
    QueueUpdateEvent,
    SessionInfoChangedEvent,
    SessionShutdownEvent,
    ThinkingLevelChangedEvent,
    ThinkingLevelSelectEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserBashEvent,
)
from piko.data.messages import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    ImageContent,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from piko.data.streaming import StreamOptions
from piko.engine import startup_gc
from piko.engine.agent import Agent
from piko.engine.llm_messages import convert_to_llm
from piko.engine.loop import AgentState, LoopConfig
from piko.engine.system_prompt import build_system_prompt, options_for_tools
from piko.lib.abort import AbortController
from piko.models.resolver import (
    DEFAULT_THINKING_LEVEL,
    ScopedModel,
    clamp_thinking_level,
    same_model,
    supported_thinking_levels,
)
from piko.resources.loader import Resources

Listener = Callable[[Any], Any]

# pi's pattern of errors worth retrying (overloads, rate limits, 5xx, network trouble); compiled
# on the first error, not at every start-up
RETRYABLE_PATTERN = (
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|"
    r"service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|"
    r"connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|"
    r"fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|"
    r"http2 request did not get a response|timed? out|timeout|terminated|retry delay"
)


def now_ms() -> int:
    return int(time.time() * 1000)


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
        self.model = model
        self.resources = resources or Resources()
        self.scoped_models = list(scoped_models or [])
        self.mode = mode
        self.ctx = app.context(host=self, ui=ui, mode=mode)
        self._custom_system_prompt = custom_system_prompt
        self._append_system_prompt = list(append_system_prompt or [])
        self._listeners: list[Listener] = []
        self._background: set[asyncio.Task[Any]] = set()
        self._steering_texts: list[str] = []
        self._follow_up_texts: list[str] = []
        self._pending_next_turn: list[Any] = []
        self._turn_index = 0
        self._last_assistant: AssistantMessage | None = None
        self._retry_attempt = 0
        self._retry_controller: AbortController | None = None
        self._overflow_recovery_attempted = False
        self.is_compacting = False
        self._compaction_controller: AbortController | None = None
        self._bash_controller: AbortController | None = None
        self._preparations: set[AbortController] = set()  # prompts in their input/before_agent_start phase
        self._pending_bash: list[BashExecutionMessage] = []
        self._shutdown_requested = False
        self._system_prompt_override: str | None = None
        context = session_manager.build_context()
        self.agent = Agent(
            AgentState(messages=list(context.messages)),
            self._loop_config,
            self._on_agent_event,
            steering_mode=str(self.settings.get("steeringMode", "one-at-a-time")),
            follow_up_mode=str(self.settings.get("followUpMode", "one-at-a-time")),
        )
        self._thinking_level = clamp_thinking_level(model, thinking_level) if model else "off"
        all_tools = [t.name for t in app.registries.tools]
        if active_tools is None:
            from piko.engine.setup import default_tool_order

            active_tools = [
                t.name for t in default_tool_order(list(app.registries.tools)) if t.default_active
            ]
        names = active_tools
        self.set_active_tools([n for n in names if n in all_tools], persist=False)

    # ------------------------------------------------------------------------------------------
    # Listeners
    # ------------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent and session event (the objects of :mod:`piko.data.events`)."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def _notify(self, event: Any) -> None:
        for listener in list(self._listeners):
            try:
                result = listener(event)
                if hasattr(result, "__await__"):
                    await result
            except Exception as exc:  # a broken listener must not break the session
                import sys

                print(f"piko: event listener failed on {event.TYPE}: {exc}", file=sys.stderr)

    def _spawn(self, coroutine: Any) -> None:
        """Run ``coroutine`` in the background (kept referenced until done)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(coroutine)
            return
        task = loop.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _emit_now(self, event: Any) -> None:
        """Notify listeners from synchronous code: plain listeners at once (pi's order), async ones scheduled."""
        for listener in list(self._listeners):
            try:
                result = listener(event)
                if hasattr(result, "__await__"):
                    self._spawn(result)
            except Exception as exc:  # a broken listener must not break the session
                import sys

                print(f"piko: event listener failed on {event.TYPE}: {exc}", file=sys.stderr)

    # ------------------------------------------------------------------------------------------
    # State
    # ------------------------------------------------------------------------------------------

    @property
    def thinking_level(self) -> str:
        return self._thinking_level

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def messages(self) -> list[Any]:
        return self.agent.state.messages

    @property
    def system_prompt(self) -> str:
        return self.agent.state.system_prompt

    @property
    def session_id(self) -> str:
        return str(self.session_manager.session_id)

    @property
    def session_file(self) -> str | None:
        path = self.session_manager.session_file
        return str(path) if path else None

    @property
    def session_name(self) -> str | None:
        return self.session_manager.get_session_name()

    @property
    def steering_mode(self) -> str:
        return self.agent.steering.mode

    @property
    def follow_up_mode(self) -> str:
        return self.agent.follow_ups.mode

    @property
    def pending_message_count(self) -> int:
        return len(self._steering_texts) + len(self._follow_up_texts)

    @property
    def auto_compaction_enabled(self) -> bool:
        return bool(self.settings.get("compaction.enabled", True))

    @property
    def auto_retry_enabled(self) -> bool:
        return bool(self.settings.get("retry.enabled", True))

    @property
    def retry_attempt(self) -> int:
        return self._retry_attempt

    def is_idle(self) -> bool:
        return not self.is_streaming and not self.is_compacting

    def has_pending_messages(self) -> bool:
        return self.agent.has_queued_messages() or bool(self._pending_next_turn)

    # ------------------------------------------------------------------------------------------
    # Tools and system prompt
    # ------------------------------------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self.agent.state.tools]

    def get_all_tools(self) -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters, "source": t.plugin}
            for t in self.app.registries.tools
        ]

    def set_active_tools(self, names: list[str], *, persist: bool = True) -> None:
        """Activate exactly ``names`` (unknown names are ignored) and rebuild the system prompt."""
        registry = self.app.registries.tools
        tools = [registry.get(n) for n in dict.fromkeys(names) if registry.get(n) is not None]
        self.agent.state.tools = tools
        self._rebuild_system_prompt()

    def _rebuild_system_prompt(self) -> None:
        resources = self.resources
        custom = self._custom_system_prompt or resources.system_prompts.system
        # --append-system-prompt replaces APPEND_SYSTEM.md, as in pi
        append = list(self._append_system_prompt) or list(resources.system_prompts.append)
        self._prompt_options = options_for_tools(
            self.cwd,
            self.agent.state.tools,
            custom_prompt=custom,
            append=append,
            context_files=list(resources.context_files),
            skills=list(resources.skills),
        )
        self._base_system_prompt = build_system_prompt(self._prompt_options, self.app.pm)
        self.agent.state.system_prompt = self._system_prompt_override or self._base_system_prompt

    def get_system_prompt(self) -> str:
        return self.agent.state.system_prompt

    # ------------------------------------------------------------------------------------------
    # The loop's configuration
    # ------------------------------------------------------------------------------------------

    def _loop_config(self) -> LoopConfig:
        model = self.model
        if model is None:
            from piko.models.guidance import no_model_selected_message

            raise RuntimeError(no_model_selected_message())
        stream_fn = self.model_registry.stream_function(model)
        if stream_fn is None:
            raise RuntimeError(
                f'No provider API "{model.api}" is registered for {model.provider}/{model.id} '
                "(is its plugin installed and not blocked? see `pi plugins`)"
            )
        return LoopConfig(
            model=model,
            stream_fn=stream_fn,
            make_options=self._stream_options,
            convert_to_llm=self._convert_to_llm,
            tool_ctx=self.ctx,
            transform_context=self._transform_context,
            on_assistant_message=self._on_assistant_message,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            get_steering=self.agent.next_steering,
            get_follow_up=self.agent.next_follow_ups,
        )

    async def _stream_options(self, signal: Any) -> StreamOptions:
        model = self.model
        assert model is not None
        # key and headers are resolved before every request (OAuth refresh, !command values),
        # off the event loop since both may block
        auth = await asyncio.to_thread(self.model_registry.request_auth, model)
        if not auth.ok:
            raise RuntimeError(auth.error or f"No API key for {model.provider}")
        budgets = self.settings.get("thinkingBudgets") or None
        options = StreamOptions(
            api_key=auth.api_key,
            headers=dict(auth.headers or {}),
            signal=signal,
            reasoning=None if self._thinking_level == "off" else self._thinking_level,
            thinking_budgets=dict(budgets) if isinstance(budgets, dict) else None,
            session_id=self.session_id,
            on_payload=self._on_payload,
            on_response=self._on_response,
        )
        retention = self.settings.get("cacheRetention")
        if isinstance(retention, str):
            options.cache_retention = retention
        self._apply_provider_retry_settings(options)
        return options

    def _apply_provider_retry_settings(self, options: StreamOptions) -> None:
        """``retry.provider``: the request timeout, the provider's own retries and the longest
        server-asked wait (0 = no limit)."""
        provider = self.settings.get("retry.provider")
        if not isinstance(provider, dict):
            return
        timeout = provider.get("timeoutMs")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            options.timeout_s = timeout / 1000
        retries = provider.get("maxRetries")
        if isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0:
            options.extra["max_retries"] = retries
        longest = provider.get("maxRetryDelayMs")
        if isinstance(longest, int | float) and not isinstance(longest, bool) and longest >= 0:
            options.extra["max_retry_delay_ms"] = longest if longest > 0 else 2**53

    def _convert_to_llm(self, messages: list[Any]) -> list[Any]:
        converted = convert_to_llm(messages)
        if self.settings.get("images.blockImages"):
            from piko.engine.llm_messages import block_images

            converted = block_images(converted)
        return converted

    async def _transform_context(self, messages: list[Any]) -> list[Any]:
        if not self.dispatcher.has_handlers("context"):
            return messages
        import copy

        event = ContextEvent(messages=copy.deepcopy(messages))
        return list(await self.dispatcher.emit("context", event, self.ctx, signal=self.agent.signal))

    async def _on_payload(self, payload: Any, model: Model) -> Any:
        if not self.dispatcher.has_handlers("before_provider_request"):
            return None
        return await self.dispatcher.emit(
            "before_provider_request",
            BeforeProviderRequestEvent(payload=payload),
            self.ctx,
            signal=self.agent.signal,
        )

    async def _on_response(self, status: int, headers: dict[str, str], model: Model) -> None:
        if self.dispatcher.has_handlers("after_provider_response"):
            await self.dispatcher.emit(
                "after_provider_response",
                AfterProviderResponseEvent(status=status, headers=dict(headers)),
                self.ctx,
            )

    async def _on_assistant_message(self, message: AssistantMessage) -> AssistantMessage:
        if not self.dispatcher.has_handlers("assistant_message"):
            return message
        result = await self.dispatcher.emit(
            "assistant_message", AssistantMessageEvent(message=message), self.ctx
        )
        return result if isinstance(result, AssistantMessage) else message

    async def _before_tool_call(self, call: ToolCall, args: dict[str, Any]) -> Any:
        if not self.dispatcher.has_handlers("tool_call"):
            return None
        event = ToolCallEvent(tool_call_id=call.id, tool_name=call.name, input=args)
        verdict = await self.dispatcher.emit("tool_call", event, self.ctx, signal=self.agent.signal)
        if verdict and verdict.get("block"):
            return verdict
        if event.input is not args:
            return {"input": event.input}
        return None

    async def _after_tool_call(
        self, call: ToolCall, args: dict[str, Any], result: Any, is_error: bool
    ) -> Any:
        if not self.dispatcher.has_handlers("tool_result"):
            return None
        event = ToolResultEvent(
            tool_call_id=call.id,
            tool_name=call.name,
            input=args,
            content=list(result.content),
            details=result.details,
            is_error=is_error,
        )
        return await self.dispatcher.emit("tool_result", event, self.ctx, signal=self.agent.signal)

    # ------------------------------------------------------------------------------------------
    # Agent events: extensions first, then listeners, then persistence
    # ------------------------------------------------------------------------------------------

    async def _on_agent_event(self, event: Any) -> None:
        kind = event.TYPE
        if kind == "message_start" and isinstance(event.message, UserMessage):
            self._overflow_recovery_attempted = False
            text = text_of(event.message.content)
            if text in self._steering_texts:
                self._steering_texts.remove(text)
                await self._notify(self._queue_event())
            elif text in self._follow_up_texts:
                self._follow_up_texts.remove(text)
                await self._notify(self._queue_event())
        await self._emit_extension_event(event)
        await self._notify(event)
        if kind == "turn_end":
            startup_gc.resume()
        if kind == "message_end":
            message = event.message
            if isinstance(message, CustomMessage):
                self.session_manager.append_custom_message(
                    message.custom_type, message.content, message.display, message.details
                )
            elif isinstance(message, (UserMessage, AssistantMessage, ToolResultMessage)):
                self.session_manager.append_message(message)
            if isinstance(message, AssistantMessage):
                self._last_assistant = message
                if message.stop_reason != "error":
                    self._overflow_recovery_attempted = False
                if message.stop_reason != "error" and self._retry_attempt > 0:
                    await self._notify(AutoRetryEndEvent(success=True, attempt=self._retry_attempt))
                    await self.dispatcher.emit(
                        "auto_retry_end",
                        AutoRetryEndEvent(success=True, attempt=self._retry_attempt),
                        self.ctx,
                    )
                    self._retry_attempt = 0

    async def _emit_extension_event(self, event: Any) -> None:
        kind = event.TYPE
        d = self.dispatcher
        if kind == "agent_start":
            self._turn_index = 0
            await d.emit("agent_start", AgentStartEvent(), self.ctx, signal=self.agent.signal)
        elif kind == "turn_start":
            await d.emit(
                "turn_start",
                TurnStartEvent(turn_index=self._turn_index, timestamp=now_ms()),
                self.ctx,
                signal=self.agent.signal,
            )
        elif kind == "turn_end":
            await d.emit(
                "turn_end",
                TurnEndEvent(
                    turn_index=self._turn_index, message=event.message, tool_results=event.tool_results
                ),
                self.ctx,
                signal=self.agent.signal,
            )
            self._turn_index += 1
        elif kind == "message_end":
            if d.has_handlers("message_end"):
                replacement = await d.emit(
                    "message_end", MessageEndEvent(message=event.message), self.ctx, signal=self.agent.signal
                )
                if replacement is not None and replacement is not event.message:
                    _replace_in_place(self.agent.state.messages, event.message, replacement)
                    event.message = replacement
        elif kind in ("message_start", "message_update", "tool_execution_start", "tool_execution_update",
                      "tool_execution_end", "agent_end"):  # fmt: skip
            if d.has_handlers(kind):
                await d.emit(kind, event, self.ctx, signal=self.agent.signal)

    def _queue_event(self) -> QueueUpdateEvent:
        return QueueUpdateEvent(steering=list(self._steering_texts), follow_up=list(self._follow_up_texts))

    # ------------------------------------------------------------------------------------------
    # Prompting
    # ------------------------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        expand: bool = True,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        preflight_result: Callable[[bool], Any] | None = None,
    ) -> None:
        """Send a prompt and run the agent until it is idle (pi's ``AgentSession.prompt``).

        Extension commands (``/name``) run at once, even while streaming; ``input`` handlers may
        transform or handle the text; ``/skill:name`` and prompt templates are expanded; while
        streaming the message is queued as ``streaming_behavior`` says (``steer``/``followUp``).
        ``preflight_result(ok)`` is called once the prompt was accepted (queued, handled, or about
        to run) or refused (the exception follows), before the agent runs (RPC answers then).
        """
        preparation = AbortController()  # abort() cancels input and before_agent_start handlers too
        self._preparations.add(preparation)
        try:
            messages = await self._prepare_prompt(
                text,
                images,
                expand=expand,
                streaming_behavior=streaming_behavior,
                source=source,
                signal=preparation.signal,
            )
        except Exception:
            if preflight_result is not None:
                preflight_result(False)
            raise
        finally:
            self._preparations.discard(preparation)
        if preflight_result is not None:
            preflight_result(True)
        if messages is not None:
            await self._run(lambda: self.agent.prompt(messages))

    async def _prepare_prompt(
        self,
        text: str,
        images: list[ImageContent] | None,
        *,
        expand: bool,
        streaming_behavior: str | None,
        source: str,
        signal: Any = None,
    ) -> list[Any] | None:
        """Everything :meth:`prompt` does before the run; the messages to send, or None when done.

        An abort of ``signal`` while a handler runs ends it with ``Operation aborted``.
        """
        if expand and text.startswith("/") and await self._try_extension_command(text):
            return None
        if self.dispatcher.has_handlers("input"):
            result = await self.dispatcher.emit(
                "input", InputEvent(text=text, images=images, source=source), self.ctx, signal=signal
            )
            _raise_if_aborted(signal)
            if result["action"] == "handled":
                return None
            text, images = result["text"], result["images"]
            if not text and not images:
                return None
        if expand:
            text = self.expand_text(text)
        if self.is_streaming:
            if not streaming_behavior:
                raise RuntimeError(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
                )
            if streaming_behavior == "followUp":
                await self._queue(text, images, follow_up=True)
            else:
                await self._queue(text, images, follow_up=False)
            return None
        self._flush_pending_bash()
        self._require_model_and_key()
        last = self._find_last_assistant()
        if last is not None:
            await self._check_compaction(last, skip_aborted=False)
        content: list[Any] = [TextContent(text=text)]
        if images:
            content.extend(images)
        messages: list[Any] = [UserMessage(content=content, timestamp=now_ms())]
        messages.extend(self._pending_next_turn)
        self._pending_next_turn = []
        self._system_prompt_override = None
        if self.dispatcher.has_handlers("before_agent_start"):
            event = BeforeAgentStartEvent(
                prompt=text,
                images=images,
                system_prompt=self._base_system_prompt,
                system_prompt_options=self._prompt_options,
            )
            result = await self.dispatcher.emit("before_agent_start", event, self.ctx, signal=signal)
            _raise_if_aborted(signal)
            if result:
                for extra in result.get("messages") or []:
                    messages.append(_custom_message_from(extra))
                if result.get("system_prompt"):
                    self._system_prompt_override = result["system_prompt"]
        self.agent.state.system_prompt = self._system_prompt_override or self._base_system_prompt
        return messages

    def _require_model_and_key(self) -> None:
        from piko.models.guidance import no_model_selected_message

        if self.model is None:
            raise RuntimeError(no_model_selected_message())
        if not self.model_registry.has_auth(self.model.provider):
            raise RuntimeError(self.model_registry.missing_key_message(self.model.provider))

    async def _run(self, start: Callable[[], Any]) -> None:
        """Run the agent, then retry retryable failures and compact as pi does."""
        self._last_assistant = None
        await start()
        while True:
            last, self._last_assistant = self._last_assistant, None
            if last is None:
                return
            if self._is_retryable(last) and self.auto_retry_enabled:
                if await self._wait_for_retry(last):
                    await self.agent.continue_()
                    continue
                return
            outcome = await self._check_compaction(last, skip_aborted=True)
            if outcome == "retry":
                await self.agent.continue_()
                continue
            if outcome == "compacted" and self.agent.has_queued_messages():
                # messages queued while the run ended or compaction ran would otherwise wait for
                # the next prompt: deliver them now, as pi does
                await self.agent.continue_()
                continue
            return

    async def _try_extension_command(self, text: str) -> bool:
        name, _, args = text[1:].partition(" ")
        command = self.app.registries.commands.get(name)
        if command is None or command.handler is None:
            return False
        try:
            result = command.handler(args, self.ctx)
            if hasattr(result, "__await__"):
                result = await result
            if isinstance(result, str) and result:
                await self.prompt(result, expand=False)
        except Exception as exc:
            from piko.platform.dispatch import Handler

            await self.dispatcher.report(
                Handler(command.plugin, f"command:{name}", lambda e, c: None), "command", exc
            )
        return True

    def expand_text(self, text: str) -> str:
        """``/skill:name args`` and ``/template args`` expansion (unknown names pass through)."""
        from piko.engine.expansion import expand_prompt_template, expand_skill_command

        text = expand_skill_command(text, self.resources.skills, self._skill_unreadable)
        return expand_prompt_template(text, self.resources.prompt_templates)

    def _skill_unreadable(self, skill: Any, error: OSError) -> None:
        """Report a skill file that cannot be read, as pi does: an extension error of the skill."""
        import errno

        from piko.platform.context import schedule
        from piko.platform.dispatch import Handler

        code = errno.errorcode.get(error.errno or 0, "EIO")
        # worded as Node words it, as pi reports it: ENOENT: no such file or directory, open '...'
        reason = OSError(f"{code}: {(error.strerror or str(error)).lower()}, open '{skill.file_path}'")
        handler = Handler("skills", skill.file_path, lambda event, ctx: None)
        schedule(self.dispatcher.report(handler, "skill_expansion", reason))

    async def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Queue a message delivered before the next model call (expanded; no extension commands)."""
        self._refuse_extension_command(text)
        await self._queue(self.expand_text(text), images, follow_up=False)

    async def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Queue a message delivered once the agent would stop."""
        self._refuse_extension_command(text)
        await self._queue(self.expand_text(text), images, follow_up=True)

    def _refuse_extension_command(self, text: str) -> None:
        if text.startswith("/"):
            name = text[1:].split(" ", 1)[0]
            if name in self.app.registries.commands:
                raise RuntimeError(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command when not streaming.'
                )

    async def _queue(self, text: str, images: list[ImageContent] | None, *, follow_up: bool) -> None:
        content: list[Any] = [TextContent(text=text)]
        if images:
            content.extend(images)
        message = UserMessage(content=content, timestamp=now_ms())
        if follow_up:
            self._follow_up_texts.append(text)
            self.agent.follow_up(message)
        else:
            self._steering_texts.append(text)
            self.agent.steer(message)
        await self._notify(self._queue_event())

    def clear_queue(self) -> dict[str, list[str]]:
        """Drop queued messages and return their texts."""
        cleared = {"steering": list(self._steering_texts), "followUp": list(self._follow_up_texts)}
        self._steering_texts, self._follow_up_texts = [], []
        self.agent.clear_queues()
        self._emit_now(self._queue_event())
        return cleared

    async def abort(self) -> None:
        """Stop what runs now (prompt handlers, stream, tools, retry wait) and wait until idle."""
        for preparation in list(self._preparations):
            preparation.abort()
        self.abort_retry()
        self.agent.abort()
        await self.agent.wait_for_idle()

    def _find_last_assistant(self) -> AssistantMessage | None:
        for message in reversed(self.agent.state.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None

    # ------------------------------------------------------------------------------------------
    # Custom and extension-sent messages
    # ------------------------------------------------------------------------------------------

    async def send_custom_message(
        self, message: Any, *, deliver_as: str | None = None, trigger_turn: bool = False
    ) -> None:
        custom = _custom_message_from(message)
        if deliver_as == "nextTurn":
            self._pending_next_turn.append(custom)
        elif self.is_streaming:
            if deliver_as == "followUp":
                self.agent.follow_up(custom)
            else:
                self.agent.steer(custom)
        elif trigger_turn:
            self._require_model_and_key()
            await self._run(lambda: self.agent.prompt([custom]))
        else:
            self.agent.state.messages.append(custom)
            self.session_manager.append_custom_message(
                custom.custom_type, custom.content, custom.display, custom.details
            )
            await self._notify(MessageStartEvent(message=custom))
            await self._notify(MessageEndEvent(message=custom))

    async def send_user_message(self, content: Any, *, deliver_as: str | None = None) -> None:
        if isinstance(content, str):
            text, images = content, None
        else:
            from piko.data.wire import blocks_from_wire

            blocks = blocks_from_wire([b for b in content if isinstance(b, dict)]) + [
                b for b in content if not isinstance(b, dict)
            ]
            text = "\n".join(b.text for b in blocks if isinstance(b, TextContent))
            images = [b for b in blocks if isinstance(b, ImageContent)] or None
        if deliver_as in ("steer", "followUp") and not self.is_streaming:
            await self._queue(text, images, follow_up=deliver_as == "followUp")
            return
        await self.prompt(
            text, images, expand=False, streaming_behavior=deliver_as or "steer", source="extension"
        )

    # ------------------------------------------------------------------------------------------
    # Models and thinking
    # ------------------------------------------------------------------------------------------

    async def set_model(self, model: Model, *, source: str = "set") -> None:
        """Switch model (needs credentials), record it in the session and settings."""
        if not self.model_registry.has_auth(model.provider):
            raise RuntimeError(f"No API key for {model.provider}/{model.id}")
        previous = self.model
        level = (
            self._thinking_level
            if (model.reasoning and self.model and self.model.reasoning)
            else self._level_for_switch()
        )
        self.model = model
        self.session_manager.append_model_change(model.provider, model.id)
        self._save_setting("defaultProvider", model.provider)
        self._save_setting("defaultModel", model.id)
        self.set_thinking_level(level)
        if not same_model(previous, model):
            await self.dispatcher.emit(
                "model_select",
                ModelSelectEvent(model=model, previous_model=previous, source=source),
                self.ctx,
            )

    def _level_for_switch(self, explicit: str | None = None) -> str:
        if explicit is not None:
            return explicit
        if self.model is None or not self.model.reasoning:
            return str(self.settings.get("defaultThinkingLevel") or DEFAULT_THINKING_LEVEL)
        return self._thinking_level

    async def cycle_model(self, direction: str = "forward") -> dict[str, Any] | None:
        """Next (or previous) model of the scope, else of all available models; None if only one."""
        if self.scoped_models:
            candidates = [s for s in self.scoped_models if self.model_registry.has_auth(s.model.provider)]
            pool = [(s.model, s.thinking_level) for s in candidates]
            scoped = True
        else:
            pool = [(m, None) for m in self.model_registry.available_models()]
            scoped = False
        if len(pool) <= 1:
            return None
        index = next((i for i, (m, _l) in enumerate(pool) if same_model(m, self.model)), 0)
        step = 1 if direction == "forward" else -1
        model, level = pool[(index + step) % len(pool)]
        previous = self.model
        level = self._level_for_switch(level)  # judged by the model switched from, as pi does
        self.model = model
        self.session_manager.append_model_change(model.provider, model.id)
        self._save_setting("defaultProvider", model.provider)
        self._save_setting("defaultModel", model.id)
        self.set_thinking_level(level)
        await self.dispatcher.emit(
            "model_select", ModelSelectEvent(model=model, previous_model=previous, source="cycle"), self.ctx
        )
        return {"model": model, "thinkingLevel": self._thinking_level, "isScoped": scoped}

    def available_thinking_levels(self) -> list[str]:
        return supported_thinking_levels(self.model)

    def supports_thinking(self) -> bool:
        return bool(self.model and self.model.reasoning)

    def set_thinking_level(self, level: str) -> None:
        """Set (clamped to the model) and record the thinking level when it changes."""
        effective = clamp_thinking_level(self.model, level) if self.model else level
        previous = self._thinking_level
        self._thinking_level = effective
        if effective == previous:
            return
        self.session_manager.append_thinking_level_change(effective)
        if self.supports_thinking() or effective != "off":
            self._save_setting("defaultThinkingLevel", effective)
        self._emit_now(ThinkingLevelChangedEvent(level=effective))
        event = ThinkingLevelSelectEvent(level=effective, previous_level=previous)
        self._spawn(self.dispatcher.emit("thinking_level_select", event, self.ctx))

    def cycle_thinking_level(self) -> str | None:
        if not self.supports_thinking():
            return None
        levels = self.available_thinking_levels()
        index = levels.index(self._thinking_level) if self._thinking_level in levels else -1
        level = levels[(index + 1) % len(levels)]
        self.set_thinking_level(level)
        return level

    def set_steering_mode(self, mode: str) -> None:
        self.agent.steering.mode = mode
        self._save_setting("steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        self.agent.follow_ups.mode = mode
        self._save_setting("followUpMode", mode)

    def _save_setting(self, key: str, value: Any) -> None:
        try:
            self.settings.set_global(key, value)
        except OSError as exc:
            self.app.notices.append(f"Could not save setting {key}: {exc}")

    # ------------------------------------------------------------------------------------------
    # Retry
    # ------------------------------------------------------------------------------------------

    def _is_retryable(self, message: AssistantMessage) -> bool:
        if message.stop_reason != "error" or not message.error_message:
            return False
        from piko.engine.overflow import is_context_overflow

        if is_context_overflow(message, self.model.context_window if self.model else 0):
            return False
        return re.search(RETRYABLE_PATTERN, message.error_message, re.IGNORECASE) is not None

    async def _wait_for_retry(self, message: AssistantMessage) -> bool:
        """Wait the backoff delay and drop the failed message; False when retries are exhausted."""
        max_retries = int(self.settings.get("retry.maxRetries", 3))
        base = float(self.settings.get("retry.baseDelayMs", 2000))
        self._retry_attempt += 1
        if self._retry_attempt > max_retries:
            attempt = self._retry_attempt - 1
            self._retry_attempt = 0
            end = AutoRetryEndEvent(success=False, attempt=attempt, final_error=message.error_message)
            await self._notify(end)
            await self.dispatcher.emit("auto_retry_end", end, self.ctx)
            return False
        delay = base * 2 ** (self._retry_attempt - 1)
        start = AutoRetryStartEvent(
            attempt=self._retry_attempt,
            max_attempts=max_retries,
            delay_ms=int(delay),
            error_message=message.error_message or "Unknown error",
        )
        await self._notify(start)
        await self.dispatcher.emit("auto_retry_start", start, self.ctx)
        messages = self.agent.state.messages
        if messages and isinstance(messages[-1], AssistantMessage):
            messages.pop()
        self._retry_controller = controller = AbortController()
        try:
            await asyncio.wait_for(controller.signal.wait(), delay / 1000.0)
        except TimeoutError:
            pass
        finally:
            self._retry_controller = None
        if controller.signal.aborted:
            attempt, self._retry_attempt = self._retry_attempt, 0
            end = AutoRetryEndEvent(success=False, attempt=attempt, final_error="Retry cancelled")
            await self._notify(end)
            await self.dispatcher.emit("auto_retry_end", end, self.ctx)
            return False
        return True

    def abort_retry(self) -> None:
        if self._retry_controller is not None:
            self._retry_controller.abort()

    @property
    def is_retrying(self) -> bool:
        return self._retry_controller is not None

    def set_auto_retry_enabled(self, enabled: bool) -> None:
        self._save_setting("retry.enabled", enabled)

    # ------------------------------------------------------------------------------------------
    # Compaction (the strategy is a plugin: see piko.engine.compaction)
    # ------------------------------------------------------------------------------------------

    async def _check_compaction(self, message: AssistantMessage, *, skip_aborted: bool) -> str | None:
        """Compact when the context overflowed or crossed the threshold (see ``check_compaction``)."""
        from piko.engine.compaction import check_compaction

        return await check_compaction(self, message, skip_aborted=skip_aborted)

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        """Manual compaction (``/compact``, RPC ``compact``); aborts what runs first.

        Returns pi's ``CompactionResult`` (``summary``, ``firstKeptEntryId``, ``tokensBefore``,
        ``details``); raises with pi's message when it fails or is cancelled.
        """
        from piko.engine.compaction import run_compaction

        await self.abort()
        ended: list[Any] = []

        def watch(event: Any) -> None:
            if event.TYPE == "compaction_end" and event.reason == "manual":
                ended.append(event)

        unsubscribe = self.subscribe(watch)
        try:
            await run_compaction(self, "manual", custom_instructions=custom_instructions, will_retry=False)
        finally:
            unsubscribe()
        end = ended[-1] if ended else None
        if end is not None and end.result is not None:
            return dict(end.result)
        if end is not None and end.error_message:
            raise RuntimeError(end.error_message.removeprefix("Compaction failed: "))
        raise RuntimeError("Compaction cancelled")

    def compact_from_extension(self, custom_instructions: str | None = None, **options: Any) -> Any:
        return asyncio.ensure_future(self.compact(custom_instructions))

    def abort_compaction(self) -> None:
        if self._compaction_controller is not None:
            self._compaction_controller.abort()

    def abort_branch_summary(self) -> None:
        """Cancel a branch summary ``/tree`` is making."""
        controller = getattr(self, "_tree_controller", None)
        if controller is not None:
            controller.abort()

    def set_auto_compaction_enabled(self, enabled: bool) -> None:
        self._save_setting("compaction.enabled", enabled)

    def get_context_usage(self) -> dict[str, Any] | None:
        """Estimated tokens in context against the model's window."""
        from piko.data.tokens import estimate_context_tokens

        if self.model is None:
            return None
        window = self.model.context_window or 0
        if window <= 0:
            return None
        # after a compaction, only a response that came after it measures the context
        branch = self.session_manager.get_branch()
        compactions = [i for i, e in enumerate(branch) if getattr(e, "type", "") == "compaction"]
        if compactions:
            measured = False
            for entry in reversed(branch[compactions[-1] + 1 :]):
                message = getattr(entry, "message", None) if getattr(entry, "type", "") == "message" else None
                if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
                    from piko.data.tokens import usage_tokens

                    measured = usage_tokens(message.usage) > 0
                    break
            if not measured:
                return {"tokens": None, "contextWindow": window, "percent": None}
        tokens = estimate_context_tokens(self.agent.state.messages)
        return {"tokens": tokens, "contextWindow": window, "percent": tokens / window * 100}

    def rebuild_from_session(self) -> None:
        """Reload the conversation from the session manager (after compaction or navigation)."""
        context = self.session_manager.build_context()
        self.agent.state.messages = list(context.messages)

    # ------------------------------------------------------------------------------------------
    # User shell commands (!cmd, RPC bash)
    # ------------------------------------------------------------------------------------------

    async def execute_bash(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_chunk: Callable[[str], Any] | None = None,
    ) -> BashResult:
        """Run a user's shell command (through ``user_bash``; the bash plugin runs it by default)."""
        self._bash_controller = controller = AbortController()
        event = UserBashEvent(
            command=command,
            exclude_from_context=exclude_from_context,
            cwd=self.cwd,
            signal=controller.signal,
            on_chunk=on_chunk,
        )
        try:
            verdict = await self.dispatcher.emit("user_bash", event, self.ctx)
        finally:
            self._bash_controller = None
        result = verdict.get("result") if isinstance(verdict, dict) else getattr(verdict, "result", None)
        if result is None:
            result = BashResult(
                output="No shell is available (the bash plugin is blocked or missing).", exit_code=None
            )
        elif isinstance(result, dict):
            result = BashResult(
                output=str(result.get("output", "")),
                exit_code=result.get("exit_code", result.get("exitCode")),
                cancelled=bool(result.get("cancelled", False)),
                truncated=bool(result.get("truncated", False)),
                full_output_path=result.get("full_output_path", result.get("fullOutputPath")),
            )
        self.record_bash_result(command, result, exclude_from_context=exclude_from_context)
        return result

    def record_bash_result(
        self, command: str, result: BashResult, *, exclude_from_context: bool = False
    ) -> None:
        message = BashExecutionMessage(
            command=command,
            output=result.output,
            exit_code=result.exit_code,
            cancelled=result.cancelled,
            truncated=result.truncated,
            full_output_path=result.full_output_path,
            timestamp=now_ms(),
            exclude_from_context=True if exclude_from_context else None,
        )
        if self.is_streaming:
            self._pending_bash.append(message)
        else:
            self.agent.state.messages.append(message)
            self.session_manager.append_message(message)

    def _flush_pending_bash(self) -> None:
        for message in self._pending_bash:
            self.agent.state.messages.append(message)
            self.session_manager.append_message(message)
        self._pending_bash = []

    def abort_bash(self) -> None:
        if self._bash_controller is not None:
            self._bash_controller.abort()

    @property
    def is_bash_running(self) -> bool:
        return self._bash_controller is not None

    # ------------------------------------------------------------------------------------------
    # Session information
    # ------------------------------------------------------------------------------------------

    def set_session_name(self, name: str) -> None:
        self.session_manager.append_session_info(name)
        self._emit_now(SessionInfoChangedEvent(name=self.session_manager.get_session_name()))

    def get_session_name(self) -> str | None:
        return self.session_manager.get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.session_manager.append_label(entry_id, label)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        return str(self.session_manager.append_custom(custom_type, data))

    def get_last_assistant_text(self) -> str | None:
        for message in reversed(self.agent.state.messages):
            if isinstance(message, AssistantMessage) and message.stop_reason != "aborted":
                text = "".join(b.text for b in message.content if isinstance(b, TextContent))
                return text.strip() or None
        return None

    def get_session_stats(self) -> dict[str, Any]:
        """Message counts, tokens and cost of the conversation in context (pi's ``getSessionStats``)."""
        user = assistant = tool_calls = tool_results = 0
        tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        cost: float = 0
        messages = self.agent.state.messages
        for message in messages:
            if isinstance(message, UserMessage):
                user += 1
            elif isinstance(message, AssistantMessage):
                assistant += 1
                tool_calls += sum(1 for b in message.content if isinstance(b, ToolCall))
                u = message.usage
                tokens["input"] += u.input
                tokens["output"] += u.output
                tokens["cacheRead"] += u.cache_read
                tokens["cacheWrite"] += u.cache_write
                cost += u.cost.total
            elif isinstance(message, ToolResultMessage):
                tool_results += 1
        tokens["total"] = tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"]
        stats: dict[str, Any] = {
            "sessionFile": self.session_file,
            "sessionId": self.session_id,
            "userMessages": user,
            "assistantMessages": assistant,
            "toolCalls": tool_calls,
            "toolResults": tool_results,
            "totalMessages": len(messages),
            "tokens": tokens,
            "cost": cost,
            "contextUsage": self.get_context_usage(),
        }
        return {k: v for k, v in stats.items() if v is not None}

    def get_commands(self) -> list[dict[str, Any]]:
        """Extension commands, prompt templates and skills, as pi lists them (RPC ``get_commands``,
        extensions' ``pi.get_commands()``)."""
        from piko.engine.command_list import list_commands

        return list_commands(self.app, self.resources)

    def read_only_session_manager(self) -> Any:
        return self.session_manager.read_only_session_manager()

    # ------------------------------------------------------------------------------------------
    # Moving between sessions (see piko.engine.navigation)
    # ------------------------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None = None, **_options: Any) -> dict[str, Any]:
        from piko.engine.navigation import new_session

        return await new_session(self, parent_session)

    async def switch_session(self, session_path: str) -> dict[str, Any]:
        from piko.engine.navigation import switch_session

        return await switch_session(self, session_path)

    async def fork(self, entry_id: str, position: str = "before") -> dict[str, Any]:
        from piko.engine.navigation import fork

        return await fork(self, entry_id, position)

    async def navigate_tree(self, target_id: str | None, **options: Any) -> dict[str, Any]:
        from piko.engine.navigation import navigate_tree

        return await navigate_tree(self, target_id, **options)

    def get_fork_messages(self) -> list[dict[str, str]]:
        from piko.engine.navigation import fork_messages

        return fork_messages(self)

    async def reload(self) -> dict[str, Any]:
        """``/reload``: settings, extension files, newly installed plugins, resources, system prompt.

        Extensions see ``session_shutdown`` and then ``session_start`` with reason ``reload``, as
        in pi. Returns what was loaded (plugin names and resource counts).
        """
        from piko.data.events import SessionStartEvent
        from piko.engine.setup import load_session_resources

        await self.dispatcher.emit("session_shutdown", SessionShutdownEvent(reason="reload"), self.ctx)
        self.settings.reload()
        plugins = self.app.reload_plugins()
        if self.model is not None:
            self.model = self.model_registry.find(self.model.provider, self.model.id) or self.model
        self.resources = await load_session_resources(self.app, reason="reload")
        registry = self.app.registries.tools
        self.set_active_tools([name for name in self.get_active_tools() if name in registry])
        await self.dispatcher.emit("session_start", SessionStartEvent(reason="reload"), self.ctx)
        return {
            "plugins": plugins,
            "skills": len(self.resources.skills),
            "promptTemplates": len(self.resources.prompt_templates),
            "contextFiles": len(self.resources.context_files),
        }

    # ------------------------------------------------------------------------------------------
    # Lifecycle
    # ------------------------------------------------------------------------------------------

    def request_shutdown(self) -> None:
        self._shutdown_requested = True

    @property
    def shutdown_requested(self) -> bool:
        return self._shutdown_requested

    async def wait_for_idle(self) -> None:
        await self.agent.wait_for_idle()

    async def shutdown(self, reason: str = "quit", *, abort_grace: float | None = None) -> None:
        """Stop running work, tell extensions, and detach from the app.

        Work that ignores the abort (a tool that never checks its signal) is waited for at most
        ``abort_grace`` seconds (:data:`piko.lib.exit_signals.ABORT_GRACE_S` by default; 0 when the
        caller gave up on it already); extensions see ``session_shutdown`` either way.
        """
        if self.is_streaming:
            from piko.lib.exit_signals import ABORT_GRACE_S, abort_within

            await abort_within(self, ABORT_GRACE_S if abort_grace is None else abort_grace)
        await self.dispatcher.emit("session_shutdown", SessionShutdownEvent(reason=reason), self.ctx)
        if self.app.runtime is self:
            self.app.runtime = None


def _replace_in_place(messages: list[Any], old: Any, new: Any) -> None:
    for i, message in enumerate(messages):
        if message is old:
            messages[i] = new
            return


def _raise_if_aborted(signal: Any) -> None:
    """``Operation aborted`` once the prompt's preparation was aborted."""
    if signal is not None and signal.aborted:
        from piko.lib.abort import AbortError

        raise AbortError("Operation aborted")


def _custom_message_from(value: Any) -> CustomMessage:
    """A ``CustomMessage`` from an extension's dict (camelCase or snake_case) or object."""
    if isinstance(value, CustomMessage):
        if not value.timestamp:
            value.timestamp = now_ms()
        return value
    from piko.data.wire import blocks_from_wire
    from piko.platform.dispatch import normalize_result

    data = normalize_result(value) or {}
    content = data.get("content", "")
    if isinstance(content, list):
        content = blocks_from_wire([b for b in content if isinstance(b, dict)]) + [
            b for b in content if not isinstance(b, dict)
        ]
    elif not isinstance(content, str):
        content = str(content)
    return CustomMessage(
        custom_type=str(data.get("custom_type") or "extension"),
        content=content,
        display=bool(data.get("display", True)),
        details=data.get("details"),
        timestamp=now_ms(),
    )
