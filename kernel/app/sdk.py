"""The agent as a library: ``session = await piko.create_agent_session(**options)``.

:func:`create_agent_session` starts a session the way ``pi`` does in that directory (the same
:class:`~piko.app.application.App` boot: settings, project trust, entry-point plugins, extension
files), plus what the options add (inline extensions, custom tools, settings in memory,
resource overrides), and returns an :class:`AgentSession`: a typed layer over the engine's
session (:class:`piko.engine.session.AgentSession`) that is an async context manager. Each
session has its own ``App``: settings, registries, tools and extension state are never shared
between two sessions of one process. ``docs/sdk.md`` is the guide.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from piko.app.sdk_options import SessionOptionError
from piko.app.sdk_options import SessionOptions
from piko.lib.forwarding import Forwarded

if TYPE_CHECKING:
    from typing import Unpack

    from piko.app.application import App
    from piko.app.application import BootOptions
    from piko.data.events import CompactionResult
    from piko.data.messages import ImageContent
    from piko.data.messages import Model
    from piko.engine.navigation import ForkOutcome
    from piko.engine.navigation import SessionChange
    from piko.engine.session import AgentSession as EngineSession
    from piko.engine.stats import ContextUsage
    from piko.engine.stats import SessionStats
    from piko.sessions.manager import SessionManager

StreamingBehavior = Literal["steer", "follow_up", "followUp"]

CUSTOM_TOOLS = "sdk.custom-tools"
"""The plugin name the ``custom_tools`` of a session register under."""

_CLOSED = object()  # what an event stream's queue receives when the session closes


class SessionClosedError(RuntimeError):
    """The session was closed (``close()`` or the end of ``async with``); make a new one."""


class SessionSetupError(RuntimeError):
    """The session could not start (a session file that does not exist, a broken extension...)."""


async def create_agent_session(**options: Unpack[SessionOptions]) -> AgentSession:
    """A new agent session; without options it is what ``pi`` would run in the current directory.

    Raises :class:`~piko.app.sdk_options.SessionOptionError` (naming the option) for an unknown
    option or a wrong value, a model that does not resolve, a tool name that does not exist, a
    tool function whose hints cannot become a schema, or an inline extension that fails to load;
    :class:`SessionSetupError` when the session itself cannot start.
    """
    from piko.app.application import App
    from piko.app.application import BootOptions
    from piko.app.sdk_options import adjuster
    from piko.app.sdk_options import prepare

    prepared = prepare(dict(options))
    _adopt_cwd(prepared.session_manager, prepared.cwd if "cwd" in options else None)
    app = App(prepared.cwd, prepared.agent_dir, settings=prepared.settings)
    inline = list(prepared.inline_extensions)
    if prepared.custom_tools:
        inline.insert(0, (CUSTOM_TOOLS, _tools_extension(prepared.custom_tools)))
    boot = BootOptions(
        extensions=list(prepared.extension_paths),
        no_extensions=prepared.no_extensions,
        disable_plugins=list(prepared.disable_plugins),
        inline_extensions=inline,
    )
    from piko.platform.manager import EssentialPluginError

    try:
        # in a thread: extension factories that are coroutines run on an event loop of their own
        await asyncio.to_thread(_boot, app, boot)
    except EssentialPluginError as exc:
        raise SessionOptionError(
            "disable_plugins", str(exc).replace(" (asked by --disable-plugin)", "")
        ) from exc
    try:
        _check_loaded(app, prepared, [name for name, _ in inline])
        app.options = dict(prepared.app_options)
        _prepare_model(app, prepared.model)
        _select_tools(app, prepared.tools, [t.name for t in prepared.custom_tools])
        if prepared.resources is not None:
            app.adjust_resources = adjuster(prepared.resources)
        engine = await _start(app, prepared.session_manager, prepared.ui)
    except BaseException:
        _unconfigure(app)
        raise
    return AgentSession(engine, app)


_BOOTING = threading.Lock()


def _boot(app: App, options: BootOptions) -> None:
    """One boot at a time: sessions made side by side must not import the same extension file
    (or change ``sys.path`` for a project) at the same moment."""
    with _BOOTING:
        app.boot(options)


def _adopt_cwd(manager: SessionManager | None, cwd: Path | None) -> None:
    """An empty in-memory session works in the session's ``cwd`` (``SessionManager.in_memory()``
    without one took the process's); a session with entries or a file keeps its own, as in pi."""
    if manager is None or cwd is None or manager.is_persisted() or manager.get_entries():
        return
    if manager.cwd != str(cwd):
        manager.cwd = str(cwd)
        manager.new_session()


def _tools_extension(tools: list[Any]) -> Callable[[Any], None]:
    def activate(pi: Any) -> None:
        for definition in tools:
            pi.register_tool(definition)

    return activate


def _check_loaded(app: App, prepared: Any, inline_names: list[str]) -> None:
    """An extension the program named that did not load is an error, not a warning."""
    for name in inline_names:
        info = app.pm.infos.get(name)
        if info is not None and info.error:
            raise SessionOptionError("extensions", f"inline extension '{name}' failed to load: {info.error}")
    for path in prepared.extension_paths:
        resolved = str(Path(path).resolve())
        for info in app.pm.infos.values():
            if info.path == resolved and info.error:
                raise SessionOptionError("extensions", f"extension '{path}' failed to load: {info.error}")
    tools = app.registries.tools
    for definition in prepared.custom_tools:
        held = tools.get(definition.name)
        if held is not None and held.plugin != CUSTOM_TOOLS:
            raise SessionOptionError(
                "custom_tools",
                f"a tool named '{definition.name}' is registered by plugin '{held.plugin}'; "
                "name yours otherwise, or give its ToolDefinition override=True to replace that one",
            )


def _prepare_model(app: App, model: Model | None) -> None:
    """A ``piko.Model`` the registry does not know joins it (as a provider of its own); a name
    must name a model the registry lists (``pi --model`` would send an unknown id of a known
    provider as it is; a program's typo should fail here, not at the first prompt)."""
    registry = app.model_registry.load()
    if model is not None:
        if registry.find(model.provider, model.id) is None:
            from piko.platform.registries import ProviderConfig

            registry.add_provider(
                ProviderConfig(
                    name=model.provider, base_url=model.base_url, api=model.api, models=[model], plugin="sdk"
                )
            )
        return
    name = app.options.get("model")
    if not name:
        return
    from piko.models.resolver import ModelResolutionError
    from piko.models.resolver import resolve_cli_model

    try:
        found, _level, _warning = resolve_cli_model(registry, None, str(name))
    except ModelResolutionError as exc:
        raise SessionOptionError("model", str(exc)) from exc
    if found is not None and registry.find(found.provider, found.id) is None:
        known = ", ".join(m.id for m in registry.models_of(found.provider)[:20])
        raise SessionOptionError(
            "model",
            f'model "{found.id}" not found for provider "{found.provider}" (it has: {known}); '
            "pass a piko.Model to use a model the registry does not list",
        )


def _select_tools(app: App, tools: list[str] | None, custom: list[str]) -> None:
    """``tools=``: exactly those (and the custom tools); every name must exist."""
    if tools is None:
        return
    known = app.registries.tools.names()
    unknown = [name for name in tools if name not in known]
    if unknown:
        raise SessionOptionError(
            "tools", f"unknown tool(s): {', '.join(unknown)}; available: {', '.join(sorted(known))}"
        )
    wanted = list(dict.fromkeys([*tools, *custom]))
    if wanted:
        app.options["tools"] = ",".join(wanted)
    else:
        app.options["no_tools"] = True


async def _start(app: App, manager: SessionManager | None, ui: Any) -> EngineSession:
    from piko.engine.setup import SetupError
    from piko.engine.setup import open_session_manager

    try:
        if manager is None:
            manager = open_session_manager(app)
        engine: EngineSession = await app.create_agent_session(
            ui=ui, mode="sdk", session_manager=manager, freeze_startup=False
        )
    except SetupError as exc:
        if "model" in app.options and ("model" in str(exc).lower() or "provider" in str(exc).lower()):
            raise SessionOptionError("model", str(exc)) from exc
        raise SessionSetupError(str(exc)) from exc
    return engine


def _unconfigure(app: App) -> None:
    try:
        app.pm.hook.piko_unconfigure(config=app)
    except Exception as exc:  # closing: a plugin's failure is reported, the close goes on
        app.pm.diagnose(f"piko_unconfigure failed: {type(exc).__name__}: {exc}")


class AgentSession:
    """One conversation with a model, embedded in a program (``async with`` closes it).

    After ``close()`` the state can still be read (``messages``, ``model``,
    ``get_last_assistant_text()``...); every action raises :class:`SessionClosedError`. Its state (``messages``, ``model``, ``thinking_level``...) is the engine session's, read
    live. ``new_session``, ``switch_session``, ``fork`` and ``import_session`` change the
    conversation of this same object: subscriptions and event streams stay bound to it (pi's
    runtime replaces its session object instead, and subscribers must bind again).
    """

    def __init__(self, engine: EngineSession, app: App) -> None:
        self._engine = engine
        self._app = app
        self._closed = False
        self._prompts: set[asyncio.Task[None]] = set()
        self._streams: dict[asyncio.Queue[Any], Callable[[], None]] = {}  # queue -> its stop()
        self._unsubscribes: list[Callable[[], None]] = []
        self._on_extension_error = engine.listeners.emit_now
        app.dispatcher.error_listeners.append(self._on_extension_error)

    # -- the parts beneath, for what this layer does not cover ------------------------------------

    @property
    def engine(self) -> EngineSession:
        """The engine's session (``piko.engine.session.AgentSession``): every part, untyped."""
        self._check_open()
        return self._engine

    @property
    def app(self) -> App:
        """This session's own :class:`~piko.app.application.App` (settings, plugins, registries)."""
        return self._app

    # -- state ------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (state stays readable; actions raise)."""
        return self._closed

    @property
    def messages(self) -> list[Any]:
        """The conversation in context (user, assistant, tool-result and custom messages)."""
        return list(self._engine.messages)

    # read live from the engine's session
    model: Forwarded[Model | None] = Forwarded("_engine", "The model the next prompt goes to.")
    thinking_level: Forwarded[str] = Forwarded(
        "_engine", "The thinking level of the next prompt (``off`` ... ``xhigh``)."
    )
    system_prompt: Forwarded[str] = Forwarded("_engine", "The system prompt as the next request sends it.")
    is_streaming: Forwarded[bool] = Forwarded("_engine", "Whether a run is under way.")
    session_id: Forwarded[str] = Forwarded("_engine", "The session's id (its file's, when it has one).")
    session_file: Forwarded[str | None] = Forwarded(
        "_engine", "The session's JSONL file (written from the first answer on); None in memory."
    )
    cwd: Forwarded[str] = Forwarded("_engine", "The folder the session works in.")

    @property
    def session_manager(self) -> SessionManager:
        """The session's entries and file."""
        manager: SessionManager = self._engine.session_manager
        return manager

    @property
    def diagnostics(self) -> list[str]:
        """What ``pi`` would print as warnings at start-up (settings, plugins, resources, models)."""
        return list(dict.fromkeys([*self._app.diagnostics(), *self._app.notices]))

    def get_last_assistant_text(self) -> str | None:
        """The text of the latest assistant answer, or ``None``."""
        return self._engine.get_last_assistant_text()

    def get_active_tools(self) -> list[str]:
        """Names of the tools the model can call now."""
        return self._engine.get_active_tools()

    def get_all_tools(self) -> list[dict[str, Any]]:
        """Every registered tool: name, description, parameters, source."""
        return self._engine.get_all_tools()

    def set_active_tools(self, names: list[str]) -> None:
        """Activate exactly ``names``; unknown names raise ``ValueError``."""
        self._check_open()
        unknown = [name for name in names if name not in self._app.registries.tools.names()]
        if unknown:
            raise ValueError(f"unknown tool(s): {', '.join(unknown)}")
        self._engine.set_active_tools(names)

    def get_context_usage(self) -> ContextUsage | None:
        """How full the model's context window is, when known."""
        return self._engine.get_context_usage()

    def get_session_stats(self) -> SessionStats:
        """Token, cost and message counts of the session."""
        return self._engine.get_session_stats()

    # -- prompting --------------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        streaming_behavior: StreamingBehavior | None = None,
    ) -> None:
        """Send ``text`` and return when the run is settled (retries, compaction and queued
        follow-ups included). Extension commands (``/name``) and prompt templates work as in pi.

        While the session streams, ``streaming_behavior`` must say whether the text steers the
        run (``"steer"``) or follows it (``"follow_up"``); without it this raises ``RuntimeError``.
        Cancelling the call (``asyncio.wait_for``, ``task.cancel()``) aborts the run it started.
        """
        self._check_open()
        behavior = "followUp" if streaming_behavior in ("follow_up", "followUp") else streaming_behavior
        task = asyncio.ensure_future(self._engine.prompt(text, images, streaming_behavior=behavior))
        self._prompts.add(task)
        task.add_done_callback(self._prompts.discard)
        try:
            await asyncio.shield(task)  # the run is not cut mid-step: it is aborted, and waited for
        except asyncio.CancelledError:
            if not task.done():
                await self._engine.abort()
                await asyncio.wait([task])
            raise

    async def steer(self, text: str, images: list[ImageContent] | None = None) -> str:
        """Queue ``text`` for after the current assistant turn and its tool calls; ``"queued"``."""
        self._check_open()
        await self._engine.steer(text, images)
        return "queued"

    async def follow_up(self, text: str, images: list[ImageContent] | None = None) -> str:
        """Queue ``text`` for when the current run would stop; ``"queued"``."""
        self._check_open()
        await self._engine.follow_up(text, images)
        return "queued"

    async def abort(self) -> None:
        """Stop what runs (handlers, stream, tools, a retry's wait) and wait until idle."""
        self._check_open()
        await self._engine.abort()
        await self._wait_prompts()

    async def wait_for_idle(self) -> None:
        """Wait, without aborting, until no prompt runs and the agent is idle."""
        self._check_open()
        await self._wait_prompts()
        await self._engine.agent.wait_for_idle()

    async def _wait_prompts(self) -> None:
        while self._prompts:
            await asyncio.wait(list(self._prompts))

    # -- events -----------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[Any], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` (sync or async) for every event; returns the unsubscribe function.

        Events are the objects of :mod:`piko.data.events` extension handlers receive
        (``event.TYPE`` is pi's name: ``message_update``, ``tool_execution_end``, ``agent_end``...).
        """
        self._check_open()
        unsubscribe = self._engine.subscribe(callback)
        self._unsubscribes.append(unsubscribe)
        return unsubscribe

    def events(self) -> EventStream:
        """Every event from now on, as an async iterator; it ends when the session closes (or
        leave it with ``break``; ``async with`` or ``aclose()`` unsubscribes at once)."""
        self._check_open()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        unsubscribe = self._engine.subscribe(queue.put_nowait)

        def stop() -> None:
            if self._streams.pop(queue, None) is not None:
                unsubscribe()
                queue.put_nowait(_CLOSED)  # the iteration ends (also one that starts after stop())

        self._streams[queue] = stop

        return EventStream(queue, stop)

    async def stream(self, text: str, images: list[ImageContent] | None = None) -> AsyncIterator[Any]:
        """Prompt with ``text`` and yield each event of the run until it is settled; the prompt's
        exception, if any, is raised at the end. Leaving the loop early aborts the run."""
        events = self.events()
        work = asyncio.ensure_future(self.prompt(text, images))
        try:
            while True:
                getter = asyncio.ensure_future(events.queue.get())
                done, _ = await asyncio.wait({getter, work}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    event = getter.result()
                    if event is _CLOSED:
                        break
                    yield event
                    continue
                getter.cancel()
                while not events.queue.empty():
                    event = events.queue.get_nowait()
                    if event is not _CLOSED:
                        yield event
                break
            await work
        finally:
            events.stop()
            if not work.done():  # left early: the run is aborted (prompt() does that when cancelled)
                work.cancel()
                await asyncio.wait([work])

    # -- model and thinking -----------------------------------------------------------------------

    async def set_model(self, model: Model | str) -> None:
        """Switch to ``model`` (a ``piko.Model`` or ``"provider/id"``); it needs credentials."""
        self._check_open()
        if isinstance(model, str):
            from piko.models.resolver import ModelResolutionError
            from piko.models.resolver import resolve_cli_model

            try:
                found, _level, _warning = resolve_cli_model(self._app.model_registry, None, model)
            except ModelResolutionError as exc:
                raise ValueError(str(exc)) from exc
            if found is None:
                raise ValueError(f"model {model!r} not found")
            model = found
        await self._engine.set_model(model)

    def set_thinking_level(self, level: str) -> None:
        """Set the thinking level (clamped to what the model supports)."""
        self._check_open()
        from piko.models.resolver import is_valid_thinking_level

        if not is_valid_thinking_level(level):
            raise ValueError(f"{level!r} is not one of off, minimal, low, medium, high, xhigh")
        self._engine.set_thinking_level(level)

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Summarise older messages now (aborts what runs first)."""
        self._check_open()
        return await self._engine.compact(custom_instructions)

    # -- session operations (pi's AgentSessionRuntime) --------------------------------------------

    async def new_session(self) -> SessionChange:
        """Start a new conversation (extensions may cancel: see ``cancelled``)."""
        self._check_open()
        await self._settle_for_move()
        return await self._engine.new_session()

    async def switch_session(self, path: str | os.PathLike[str]) -> SessionChange:
        """Continue the session saved in ``path``."""
        self._check_open()
        await self._settle_for_move()
        return await self._engine.switch_session(os.fspath(path))

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ForkOutcome:
        """A new session holding the branch up to ``entry_id`` (a user message's entry)."""
        self._check_open()
        await self._settle_for_move()
        return await self._engine.fork(entry_id, position)

    async def import_session(self, path: str | os.PathLike[str]) -> SessionChange:
        """Copy the session file ``path`` into this project's session folder and switch to it."""
        self._check_open()
        from piko.sessions.file import read_session_file

        source = Path(os.fspath(path)).expanduser().absolute()
        if not source.is_file():
            raise FileNotFoundError(f"session file not found: {source}")
        read_session_file(str(source))  # raises for what is not a session file
        folder = self.session_manager.get_session_dir()
        if not folder:
            raise ValueError("an in-memory session has no session folder to import into")
        target = Path(folder) / source.name
        if source.resolve() != target.resolve():
            Path(folder).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return await self.switch_session(target)

    async def _settle_for_move(self) -> None:
        if self._engine.is_streaming or self._prompts:
            await self.abort()

    # -- lifecycle --------------------------------------------------------------------------------

    async def close(self) -> None:
        """Abort what runs, tell extensions (``session_shutdown``), end event streams and
        subscriptions, and let plugins clean up (``piko_unconfigure``). Closing twice is fine."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._engine.shutdown("quit")
            for task in list(self._prompts):
                if not task.done():
                    task.cancel()
            if self._prompts:
                await asyncio.wait(list(self._prompts))
        finally:
            for stop in list(self._streams.values()):
                stop()
            for unsubscribe in self._unsubscribes:
                unsubscribe()
            self._unsubscribes.clear()
            if self._on_extension_error in self._app.dispatcher.error_listeners:
                self._app.dispatcher.error_listeners.remove(self._on_extension_error)
            _unconfigure(self._app)

    async def __aenter__(self) -> AgentSession:
        self._check_open()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise SessionClosedError(
                "this AgentSession is closed; create a new one with piko.create_agent_session()"
            )

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("streaming" if self._engine.is_streaming else "idle")
        model = self._engine.model.key if self._engine.model is not None else None
        return f"<piko.AgentSession {self._engine.session_id} {state} model={model}>"


class EventStream:
    """Events of one :meth:`AgentSession.events` call: ``async for event in stream``."""

    def __init__(self, queue: asyncio.Queue[Any], stop: Callable[[], None]) -> None:
        self.queue = queue
        self.stop = stop

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Any:
        event = await self.queue.get()
        if event is _CLOSED:
            self.stop()
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        """Stop receiving events."""
        self.stop()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
