"""The agent side of ACP: sessions, prompt turns streamed as updates, cancellation, permissions.

An ACP session is a piko session file: its id is the file's session id, ``session/load`` finds
the file by that id in the project's session folder (as ``--session <id>`` does) and replays
its conversation as updates. One :class:`~piko.engine.session.AgentSession` serves the
connection, as in pi's other modes: a prompt for another session switches to it first (with
the ``session_before_switch`` events extensions expect). ``session/cancel`` aborts the run.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any
from typing import cast

import acp
from acp import schema

from piko import __version__
from piko import hookimpl
from piko.plugins.modes.acp import auth
from piko.plugins.modes.acp import config
from piko.plugins.modes.acp import updates
from piko.plugins.modes.acp.ui import AcpUI


async def run_acp(app: Any) -> int:
    """Serve ACP on stdin/stdout until the client closes the connection; returns the exit code."""
    loop = asyncio.get_running_loop()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)  # stray prints (extensions, libraries) go to stderr, never into the protocol
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol_fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    agent = PikoAgent(app)
    try:
        # ACP's Agent protocol also lists optional methods (list, fork, resume, close sessions,
        # config options); the package answers "method not found" for those piko leaves out
        await acp.run_agent(cast(Any, agent), writer, reader)
    finally:
        await agent.close()
    return 0


class PikoAgent:
    """piko behind ACP's ``Agent`` interface (the package calls these methods by name)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.client: Any = None
        self.session: Any = None
        self.client_capabilities: Any = None
        self._outbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None
        self.written: dict[str, str] = {}  # texts the client wrote for a tool, by path (for diffs)
        self._cancelled = False
        self._current_tool: tuple[str, str] | None = None  # (id, title) of the tool call being prepared
        self._before: dict[str, tuple[str, str | None]] = {}  # edit/write: path and text before, for diffs
        self._terminals: dict[str, str] = {}  # tool call id -> the client terminal its bash runs in
        self._config_sent = ""  # the config options the client last saw (snapshot)
        self._quiet_config = 0  # >0 while a request answers with the options itself

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    # -- the protocol's requests --------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **_: Any
    ) -> schema.InitializeResponse:
        self.client_capabilities = client_capabilities
        self._use_client_files(client_capabilities)
        if getattr(client_capabilities, "terminal", False):
            from piko.plugins.modes.acp.terminal import use_client_terminal

            if use_client_terminal(self.app, self) and self.session is not None:
                self.session.set_active_tools(self.session.get_active_tools(), persist=False)
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, acp.PROTOCOL_VERSION),
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, embedded_context=True),
            ),
            auth_methods=self._auth_methods(),
            agent_info=schema.Implementation(name="piko", title="piko", version=__version__),
        )

    def _use_client_files(self, capabilities: Any) -> None:
        """When the client reads and writes files, the file tools go through it, so they see
        the editor's unsaved buffers (``piko_workspace_read_text`` / ``_write_text``)."""
        fs = getattr(capabilities, "fs", None)
        read, write = bool(getattr(fs, "read_text_file", False)), bool(getattr(fs, "write_text_file", False))
        pm = self.app.pm
        for name, wanted, bridge in (
            ("modes.acp.client-read", read, _ClientReads(self)),
            ("modes.acp.client-write", write, _ClientWrites(self)),
        ):
            if wanted and pm.get_plugin(name) is None:
                pm.register(bridge, name)

    async def authenticate(self, method_id: str, **_: Any) -> schema.AuthenticateResponse:
        """An environment-variable method works when the client started piko with the variable set."""
        registry = self.app.model_registry
        provider = auth.provider_of(registry, method_id)
        if provider is None:
            raise acp.RequestError.invalid_params({"message": f"no authentication method '{method_id}'"})
        if not registry.has_auth(provider):
            raise acp.RequestError.auth_required({"message": registry.missing_key_message(provider)})
        return schema.AuthenticateResponse()

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> schema.NewSessionResponse:
        self._check_cwd(cwd)
        session = await self._agent_session()
        if session.messages or session.session_manager.get_entries():
            result = await session.new_session()
            if result.cancelled:
                raise acp.RequestError.internal_error({"message": "an extension cancelled the new session"})
        self._advertise_commands_soon()
        return schema.NewSessionResponse(
            session_id=session.session_id, modes=None, config_options=self._config_options()
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> schema.LoadSessionResponse:
        self._check_cwd(cwd)
        self._quiet_config += 1
        try:
            await self._switch_to(session_id)
        finally:
            self._quiet_config -= 1
        for message in self.session.messages:
            for update in _replayed(message):
                self._send(update)
        self._advertise_commands_soon()
        await self._flush()
        return schema.LoadSessionResponse(config_options=self._config_options())

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> None:
        return None

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> schema.SetSessionConfigOptionResponse:
        await self._switch_to(session_id)
        self._quiet_config += 1
        try:
            await config.apply(self.session, config_id, value)
        finally:
            self._quiet_config -= 1
        return schema.SetSessionConfigOptionResponse(config_options=self._config_options())

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        await self._switch_to(session_id)
        session = self.session
        text, images = _prompt_content(prompt)
        self._require_auth(text)
        self._cancelled = False
        last: list[Any] = []
        unsubscribe = session.subscribe(lambda event: self._on_event(event, last))
        try:
            await session.prompt(text, images or None, source="acp")
        except Exception as exc:
            raise acp.RequestError.internal_error({"message": str(exc) or type(exc).__name__}) from exc
        finally:
            unsubscribe()
            await self._flush()
        message = last[-1] if last else None
        if self._cancelled:  # the protocol wants "cancelled" whatever the run ended with
            return schema.PromptResponse(stop_reason="cancelled")
        if message is not None and getattr(message, "stop_reason", None) == "error":
            raise acp.RequestError.internal_error(
                {"message": message.error_message or "the model request failed"}
            )
        return schema.PromptResponse(stop_reason=updates.stop_reason(message))

    def _require_auth(self, text: str) -> None:
        """No key for the session's model: ``auth_required``, which clients answer with their
        login flow (a ``/command`` needs no model, so it still runs)."""
        model, registry = self.session.model, self.session.model_registry
        if model is None or text.lstrip().startswith("/") or registry.has_auth(model.provider):
            return
        raise acp.RequestError.auth_required(
            {
                "message": registry.missing_key_message(model.provider),
                "authMethods": [auth.method_id(model.provider)],
            }
        )

    async def cancel(self, session_id: str, **_: Any) -> None:
        if self.session is not None and self.session.session_id == session_id:
            self._cancelled = True
            await self.session.abort()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close(self) -> None:
        """The client went away: stop what runs and shut the session down."""
        if self.session is not None:
            try:
                await self.session.abort()
                await self.session.shutdown("quit")
            except Exception as exc:
                sys.stderr.write(f"piko acp: shutdown failed: {exc}\n")
        if self._sender is not None:
            self._sender.cancel()

    # -- sessions -----------------------------------------------------------------------------

    def _check_cwd(self, cwd: str) -> None:
        if os.path.realpath(cwd) != os.path.realpath(str(self.app.cwd)):
            raise acp.RequestError.invalid_params(
                {"message": f"piko serves {self.app.cwd}; start it in {cwd} for that project"}
            )

    async def _agent_session(self) -> Any:
        if self.session is None:
            from piko.engine.setup import SetupError

            ui = AcpUI(self._ask_permission, self._notice)
            try:
                self.session = await self.app.create_agent_session(ui=ui, mode="acp")
            except SetupError as exc:
                raise acp.RequestError.internal_error({"message": str(exc)}) from exc
            if self.app.pm.get_plugin("modes.acp.config-watch") is None:
                self.app.pm.register(_ConfigWatch(self), "modes.acp.config-watch")
            self.app.event_bus.on("plan", self._on_plan)
            self.app.report()
        return self.session

    async def _switch_to(self, session_id: str) -> None:
        session = await self._agent_session()
        if session.session_id == session_id:
            return
        from piko.sessions.manager import SessionManager
        from piko.sessions.manager import SessionNotFoundError

        try:
            path = SessionManager.open(session_id, cwd=str(self.app.cwd)).get_session_file()
        except (SessionNotFoundError, Exception) as exc:
            raise acp.RequestError.resource_not_found(session_id) from exc
        result = await session.switch_session(path)
        if result.cancelled:
            raise acp.RequestError.internal_error({"message": "an extension cancelled the session switch"})

    def _config_options(self) -> list[Any]:
        """The session's config options, remembered as what the client has seen."""
        options = config.config_options(self.session)
        self._config_sent = config.snapshot(options)
        return options

    def config_may_have_changed(self) -> None:
        """Tell the client when the model or thinking level changed under it (an extension,
        a command, a session switch); requests that answer with the options stay quiet."""
        if self.session is None or self._quiet_config:
            return
        options = config.config_options(self.session)
        if config.snapshot(options) != self._config_sent:
            self._config_sent = config.snapshot(options)
            self._send(
                schema.ConfigOptionUpdate(session_update="config_option_update", config_options=options)
            )

    # -- updates ------------------------------------------------------------------------------

    def _on_event(self, event: Any, last: list[Any]) -> None:
        kind = getattr(event, "TYPE", "")
        cwd = str(self.app.cwd)
        if kind == "message_update":
            change = event.assistant_message_event
            delta = getattr(change, "delta", None)
            if change is not None and delta:
                if change.type == "text_delta":
                    self._send(acp.update_agent_message_text(delta))
                elif change.type == "thinking_delta":
                    self._send(acp.update_agent_thought_text(delta))
        elif kind == "message_end" and getattr(event.message, "ROLE", "") == "assistant":
            last.append(event.message)
        elif kind == "tool_execution_start":
            title = updates.tool_title(event.tool_name, event.args)
            path = updates.tool_path(event.args, cwd)
            if event.tool_name in ("edit", "write") and path:
                self._before[event.tool_call_id] = (path, updates.read_text(path))
            self._current_tool = (event.tool_call_id, title)
            self._send(
                acp.start_tool_call(
                    event.tool_call_id,
                    title,
                    kind=updates.tool_kind(event.tool_name),  # type: ignore[arg-type]
                    status="in_progress",
                    locations=[schema.ToolCallLocation(path=path)] if path else None,
                    raw_input=event.args,
                )
            )
        elif kind == "tool_execution_end":
            self._send(self._finished_tool(event))

    def show_terminal(self, tool_call_id: str, terminal_id: str) -> None:
        """A tool call runs in a client terminal: the client shows it in the tool call."""
        self._terminals[tool_call_id] = terminal_id
        self._send(acp.update_tool_call(tool_call_id, content=[acp.tool_terminal_ref(terminal_id)]))

    def _finished_tool(self, event: Any) -> Any:
        content: list[Any] = []
        terminal_id = self._terminals.pop(event.tool_call_id, None)
        if terminal_id is not None:  # the terminal shows the output (clients keep it after release)
            content.append(acp.tool_terminal_ref(terminal_id))
        edited = self._before.pop(event.tool_call_id, None)
        if edited is not None and not event.is_error:
            path, before = edited
            after = self.written.pop(path, None) or updates.read_text(path)
            if after is not None:
                content.append(acp.tool_diff_content(path, after, before))
        text = updates.result_text(event.result)
        if text and not content:
            content.append(acp.tool_content(acp.text_block(text)))
        return acp.update_tool_call(
            event.tool_call_id,
            status="failed" if event.is_error else "completed",
            content=content or None,
            raw_output={"text": text} if text else None,
        )

    def _on_plan(self, data: Any) -> None:
        """An extension reported its plan (``pi.events.emit("plan", ...)``): the client shows it."""
        update = updates.plan_update(data)
        if update is None:
            sys.stderr.write("piko acp: a plan event without entries was ignored\n")
            return
        self._send(update)

    def _notice(self, text: str) -> None:
        self._send(acp.update_agent_message_text(f"\n{text}\n"))

    def _advertise_commands_soon(self) -> None:
        commands = [
            schema.AvailableCommand(name=c["name"], description=c.get("description") or c["name"])
            for c in self.session.get_commands()
        ]
        self._send(acp.helpers.update_available_commands(commands))

    def _send(self, update: Any) -> None:
        """Queue an update for the client; one sender keeps them in order."""
        if self.session is None:
            return
        self._outbox.put_nowait((self.session.session_id, update))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.ensure_future(self._send_all())

    async def _send_all(self) -> None:
        while not self._outbox.empty():
            session_id, update = self._outbox.get_nowait()
            try:
                await self.client.session_update(session_id, update)
            except Exception as exc:
                sys.stderr.write(f"piko acp: an update could not be sent: {exc}\n")

    async def _flush(self) -> None:
        """Wait until every queued update is sent (before the answer that ends a request)."""
        while self._sender is not None and not self._sender.done():
            await asyncio.shield(self._sender)
        if not self._outbox.empty():
            await self._send_all()

    # -- permissions --------------------------------------------------------------------------

    async def _ask_permission(self, title: str, choices: list[tuple[str, str, str]]) -> str | None:
        """The client's choice among ``choices`` (``(id, name, kind)``), or ``None`` if cancelled."""
        await self._flush()  # the client has seen the tool call it is asked about
        tool_id, tool_title = self._current_tool or ("piko-question", title)
        response = await self.client.request_permission(
            session_id=self.session.session_id,
            tool_call=schema.ToolCallUpdate(tool_call_id=tool_id, title=f"{tool_title}: {title}"),
            options=[schema.PermissionOption(option_id=i, name=n, kind=k) for i, n, k in choices],  # type: ignore[arg-type]
        )
        outcome = response.outcome
        return getattr(outcome, "option_id", None) if getattr(outcome, "outcome", "") == "selected" else None

    def _auth_methods(self) -> list[Any]:
        try:
            return auth.auth_methods(self.app.model_registry)
        except Exception as exc:  # a broken models.json must not keep the client from connecting
            sys.stderr.write(f"piko acp: no authentication methods: {exc}\n")
            return []


class _ConfigWatch:
    """Hears model and thinking-level changes, so the client's selectors follow them."""

    def __init__(self, agent: PikoAgent) -> None:
        self._agent = agent

    @hookimpl
    def piko_model_select(self, event: Any, ctx: Any) -> None:
        self._agent.config_may_have_changed()

    @hookimpl
    def piko_thinking_level_select(self, event: Any, ctx: Any) -> None:
        self._agent.config_may_have_changed()


class _ClientReads:
    """The client's text of a file (its buffer, unsaved changes included); the disk when it has none."""

    def __init__(self, agent: PikoAgent) -> None:
        self._agent = agent

    @hookimpl
    async def piko_workspace_read_text(self, request: Any, ctx: Any) -> str | None:
        agent = self._agent
        if agent.client is None or agent.session is None:
            return None
        try:
            answer = await agent.client.read_text_file(path=request.path, session_id=agent.session.session_id)
        except Exception:
            return None  # not a file the client knows: the tool reads the disk and says what is wrong
        return str(answer.content)


class _ClientWrites:
    """Writes through the client, which updates its buffer and the file."""

    def __init__(self, agent: PikoAgent) -> None:
        self._agent = agent

    @hookimpl
    async def piko_workspace_write_text(self, request: Any, ctx: Any) -> bool:
        agent = self._agent
        if agent.client is None or agent.session is None or request.content is None:
            return False
        try:
            await agent.client.write_text_file(
                content=request.content, path=request.path, session_id=agent.session.session_id
            )
        except Exception as exc:
            sys.stderr.write(
                f"piko acp: the client could not write {request.path}: {exc}; writing the disk\n"
            )
            return False
        agent.written[request.path] = request.content
        return True


def _prompt_content(blocks: list[Any]) -> tuple[str, list[Any]]:
    """The prompt's text (embedded resources as fenced files, links by URI) and its images."""
    from piko.data.messages import ImageContent

    texts: list[str] = []
    images: list[Any] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                texts.append(f'<file name="{_uri_path(resource.uri)}">\n{text}\n</file>')
        elif kind == "resource_link":
            texts.append(f"@{_uri_path(block.uri)}")
    return "\n\n".join(texts), images


def _uri_path(uri: str) -> str:
    return uri.removeprefix("file://")


def _replayed(message: Any) -> list[Any]:
    """The updates that show a stored message again (``session/load``)."""
    role = getattr(message, "ROLE", "")
    out: list[Any] = []
    if role == "user":
        text = message.content if isinstance(message.content, str) else updates.result_text(message)
        if text:
            out.append(acp.update_user_message_text(text))
    elif role == "assistant":
        for block in message.content:
            kind = getattr(block, "TYPE", "")
            if kind == "text" and block.text:
                out.append(acp.update_agent_message_text(block.text))
            elif kind == "thinking" and block.thinking:
                out.append(acp.update_agent_thought_text(block.thinking))
            elif kind == "toolCall":
                title = updates.tool_title(block.name, block.arguments)
                out.append(
                    acp.start_tool_call(
                        block.id, title, kind=updates.tool_kind(block.name), status="completed",  # type: ignore[arg-type]
                        raw_input=block.arguments,
                    )
                )  # fmt: skip
    return out
