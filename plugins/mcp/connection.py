"""One MCP server's connection on the SDK's ``ClientSession``: start, list, call, reconnect, stop.

Imported only when a server is configured: it imports the ``mcp`` SDK. Stdio servers are
spawned here (not by the SDK's ``stdio_client``) so that the connection owns the process: it
keeps the tail of its stderr for status lines, and on stop closes stdin, then sends SIGTERM
and SIGKILL to the process group, so no ``npx``/``uvx`` grandchild survives.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

from piko.plugins.mcp.config import ServerConfig
from piko.plugins.mcp.config import expand_home
from piko.plugins.mcp.config import resolve_map
from piko.plugins.mcp.log import McpLog

STDERR_TAIL_BYTES = 4096
CONNECT_ATTEMPTS = 3  # HTTP network errors and transient statuses are retried twice
STOP_GRACE_S = 0.5  # after stdin closes, before SIGTERM; then as long again before SIGKILL
CLIENT_INFO = types.Implementation(name="pi", version="1.6.0")
SESSION_TERMINATED = "Session terminated"  # the SDK's answer to a request the server 404s

# every live stdio server's process group, so an exit without a clean stop still kills them
LIVE_PROCESS_GROUPS: set[int] = set()


def _quiet_sdk_logging() -> None:
    """The SDK logs transport errors with tracebacks; piko reports each failure in one line (and
    servers' own log messages go to ``mcp.log``), so its loggers print nothing."""
    import logging

    logger = logging.getLogger("mcp")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


_quiet_sdk_logging()


class ConnectionFailed(Exception):
    """The server could not be reached or did not complete ``initialize``."""


class ConnectionDropped(ConnectionFailed):
    """The session ended while a request waited for its answer; ``unsent`` when it ended on a
    refused connection or an expired session, so the request cannot have reached the server."""

    def __init__(self, message: str, unsent: bool) -> None:
        super().__init__(message)
        self.unsent = unsent


def _innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _never_sent(error: BaseException | None) -> bool:
    """Whether ``error`` says a request did not reach the server: the connection was refused,
    or the server no longer knows the session (HTTP 404, after a restart)."""
    import httpx

    if error is None:
        return False
    error = _innermost(error)
    if isinstance(error, httpx.ConnectError):
        return True
    from mcp.shared.exceptions import McpError

    return isinstance(error, McpError) and error.error.message == SESSION_TERMINATED


def kill_process_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError, OSError):
        return False
    return True


def describe_error(error: BaseException) -> str:
    """One line for an exception, looking inside exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    import httpx

    if isinstance(error, httpx.HTTPStatusError):
        return f"MCP HTTP request failed with status {error.response.status_code}"
    if isinstance(error, FileNotFoundError):
        return f"spawn {error.filename} ENOENT" if error.filename else str(error)
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _is_transient(error: BaseException) -> bool:
    import httpx

    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, httpx.HTTPStatusError):
        status = error.response.status_code
        return status in (408, 429) or status >= 500
    return isinstance(error, httpx.TransportError)


class StderrTail:
    """Reads a server's stderr as it comes and keeps its last few kilobytes."""

    def __init__(self) -> None:
        self.data = b""

    async def pump(self, stream: Any) -> None:
        with contextlib.suppress(Exception):
            async for chunk in stream:
                self.data = (self.data + chunk)[-STDERR_TAIL_BYTES:]

    def text(self) -> str:
        return self.data.decode("utf-8", "replace").strip()


@contextlib.asynccontextmanager
async def stdio_transport(
    config: ServerConfig, cwd: str, tail: StderrTail, on_exit: Callable[[], None]
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stream pair over a server process of our own (newline-delimited JSON-RPC)."""
    raw = config.raw
    command = expand_home(str(raw["command"]))
    args = [expand_home(str(a)) for a in raw.get("args") or []]
    env = {**os.environ, **resolve_map(raw.get("env"), f'MCP server "{config.name}" env')}
    workdir = raw.get("cwd")
    folder = os.path.join(cwd, expand_home(workdir)) if isinstance(workdir, str) else cwd
    process = await anyio.open_process([command, *args], env=env, cwd=folder, start_new_session=True)
    pgid = process.pid
    LIVE_PROCESS_GROUPS.add(pgid)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        buffer = b""
        try:
            async with read_writer:
                assert process.stdout is not None
                async for chunk in process.stdout:
                    lines = (buffer + chunk).split(b"\n")
                    buffer = lines.pop()
                    for line in lines:
                        if not line.strip():
                            continue
                        try:
                            message = types.JSONRPCMessage.model_validate_json(line)
                        except Exception as error:  # malformed JSON-RPC: reported, the rest goes on
                            await read_writer.send(ValueError(f"malformed JSON-RPC from server: {error}"))
                            continue
                        await read_writer.send(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            on_exit()

    async def write_stdin() -> None:
        try:
            async with write_reader:
                assert process.stdin is not None
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(read_stdout)
            group.start_soon(write_stdin)
            group.start_soon(tail.pump, process.stderr)
            try:
                yield read_stream, write_stream
            finally:
                await stop_process(process, pgid)
                group.cancel_scope.cancel()
    finally:
        LIVE_PROCESS_GROUPS.discard(pgid)
        kill_process_group(pgid)


async def stop_process(process: Any, pgid: int) -> None:
    """Close stdin, then SIGTERM, then SIGKILL to the whole process group."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    with anyio.move_on_after(STOP_GRACE_S):
        await process.wait()
    if process.returncode is None or _group_alive(pgid):
        kill_process_group(pgid, signal.SIGTERM)
        with anyio.move_on_after(STOP_GRACE_S):
            while _group_alive(pgid):
                await anyio.sleep(0.02)
        kill_process_group(pgid)
    with anyio.move_on_after(STOP_GRACE_S), contextlib.suppress(Exception):
        await process.wait()


@contextlib.asynccontextmanager
async def http_transport(config: ServerConfig, auth: Any = None) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's streamable HTTP transport with the entry's resolved headers (and ``auth``, an
    ``httpx.Auth`` such as the SDK's OAuth provider)."""
    import httpx
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = resolve_map(config.raw.get("headers"), f'MCP server "{config.name}" header')
    timeout = httpx.Timeout(config.timeout_s, read=max(config.timeout_s, 300.0))
    async with (
        create_mcp_http_client(headers=headers, timeout=timeout, auth=auth) as client,
        streamable_http_client(str(config.raw["url"]), http_client=client) as (read, write, _session_id),
    ):
        yield read, write


class ServerConnection:
    """A server's state (``connecting``, ``connected``, ``failed``, ``disconnected``, ``disabled``),
    its tools, and calls to it. The SDK session lives in one task of its own from connect to stop."""

    def __init__(
        self,
        config: ServerConfig,
        cwd: str,
        log: McpLog,
        on_tools: Callable[[ServerConnection], Awaitable[None] | None] | None = None,
        on_notification: Callable[[str, str, Any], None] | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.cwd = cwd
        self.log = log
        self.on_tools = on_tools
        self.on_notification = on_notification
        self.state_listeners: list[Callable[[], None]] = []  # told of every change of state
        self._state = "disabled" if not config.enabled else "idle"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.instructions: str | None = None
        self.has_resources = False
        self.stderr = StderrTail()
        self.session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Event | None = None
        self._refresh: asyncio.Task[None] | None = None
        self.dropped_by: BaseException | None = None  # what ended the last connected session

    @property
    def state(self) -> str:
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        changed = value != self._state
        self._state = value
        if changed:
            for listener in list(self.state_listeners):
                with contextlib.suppress(Exception):  # a listener must not break the connection
                    listener()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background (``wait_ready`` waits for the outcome)."""
        if self.state == "disabled" or (self._task is not None and not self._task.done()):
            return
        self.state, self.error, self.dropped_by = "connecting", None, None
        self._stop, self._ready = asyncio.Event(), asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the connection succeeded or failed; True when connected."""
        if self._ready is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._ready.wait()), timeout)
        return self.state == "connected"

    async def reconnect(self) -> bool:
        """Close the connection and connect again, waiting up to the server's timeout; True when
        connected."""
        await self.stop()
        self.start()
        return await self.wait_ready(self.config.timeout_s)

    async def ensure_connected(self) -> None:
        """Reconnect a dropped or failed connection, then wait for it (the next call's own wait)."""
        if self.state == "connected" and self.session is not None:
            return
        if self.state in ("disconnected", "failed", "idle"):
            self.start()
        await self.wait_ready(self.config.timeout_s)
        if self.state != "connected":
            raise ConnectionFailed(f'MCP server "{self.name}" is not connected: {self.error or self.state}')

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._task), STOP_GRACE_S * 3)
            if not self._task.done():
                self._task.cancel()
        if self.state in ("connected", "connecting"):
            self.state = "idle"

    async def _run(self) -> None:
        assert self._stop is not None and self._ready is not None
        for attempt in range(CONNECT_ATTEMPTS):
            try:
                await self._session_lifetime()
                return
            except BaseException as error:  # the SDK's task groups raise groups
                if isinstance(error, asyncio.CancelledError):
                    raise
                transient = self.config.kind == "http" and _is_transient(error)
                if self.state == "connected":  # it was up: a dropped connection
                    self.state, self.error = "disconnected", describe_error(error)
                    self.dropped_by = error
                    break
                if transient and attempt < CONNECT_ATTEMPTS - 1:
                    await asyncio.sleep(0.2 * (attempt + 1))
                    continue
                if attempt == 0 and self._rejected_sign_in(error):
                    continue  # refresh the rejected token, then try once more
                self.state, self.error = "failed", self._explain(error)
                break
        self.session = None
        self._ready.set()

    def _rejected_sign_in(self, error: BaseException) -> bool:
        from piko.plugins.mcp import oauth

        inner = error
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        return isinstance(inner, oauth.NeedsSignIn) and oauth.expire_stored(self.config, self.log.agent_dir)

    def _explain(self, error: BaseException) -> str:
        """The one-line error; a 401 from a server that may use OAuth says how to sign in."""
        import httpx

        inner = error
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        if isinstance(inner, httpx.HTTPStatusError) and inner.response.status_code == 401:
            from piko.plugins.mcp import oauth

            if oauth.uses_oauth(self.config):
                return f"needs sign-in: run `pi mcp login {self.name}`"
        return describe_error(error)

    async def _session_lifetime(self) -> None:
        assert self._stop is not None and self._ready is not None
        closed = asyncio.Event()
        if self.config.kind == "stdio":
            transport = stdio_transport(self.config, self.cwd, self.stderr, closed.set)
        else:
            from piko.plugins.mcp import oauth

            auth = (
                oauth.session_auth(self.config, self.log.agent_dir) if oauth.uses_oauth(self.config) else None
            )
            transport = http_transport(self.config, auth)
        async with transport as (read, write), ClientSession(
            read, write, read_timeout_seconds=timedelta(seconds=self.config.timeout_s),
            logging_callback=self._on_log, message_handler=self._on_message, client_info=CLIENT_INFO,
            list_roots_callback=self._list_roots,
        ) as session:  # fmt: skip
            with anyio.fail_after(self.config.timeout_s):
                initialized = await session.initialize()
                self.instructions = initialized.instructions
                self.has_resources = initialized.capabilities.resources is not None
                self.tools = await self._list_tools(session)
            self.session = session
            self.state, self.error = "connected", None
            await self._tools_changed()
            self._ready.set()
            stop = asyncio.ensure_future(self._stop.wait())
            gone = asyncio.ensure_future(closed.wait())
            try:
                await asyncio.wait({stop, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
                gone.cancel()
            if closed.is_set() and not self._stop.is_set():
                tail = self.stderr.text().splitlines()
                self.state = "disconnected"
                self.error = "server exited" + (f": {tail[-1]}" if tail else "")
            self.session = None

    @staticmethod
    async def _list_tools(session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _page in range(100):
            page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
            tools.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        return tools

    async def _tools_changed(self) -> None:
        if self.on_tools is not None:
            result = self.on_tools(self)
            if result is not None:
                await result

    # -- what the client offers the server --------------------------------------------------------
    # pi 1.6 offers roots only: sampling and elicitation requests are declined (the SDK's answer
    # when no callback is given, and then it declares neither capability)

    async def _list_roots(self, context: Any) -> types.ListRootsResult:
        """``roots/list``: the session's working directory, as pi 1.6 answers."""
        from pathlib import Path

        folder = Path(os.path.abspath(self.cwd))  # as given, like pi (symlinks kept)
        return types.ListRootsResult(roots=[types.Root(uri=types.FileUrl(folder.as_uri()), name=folder.name)])

    # -- notifications ---------------------------------------------------------------------------

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log.write(self.name, str(params.level), params.logger, params.data)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.log.write(self.name, "error", None, describe_error(message))
            return
        if not isinstance(message, types.ServerNotification):
            return
        notification = message.root
        method = getattr(notification, "method", "")
        params = getattr(notification, "params", None)
        if isinstance(notification, types.ToolListChangedNotification) and self.session is not None:
            # not awaited here: the answer to tools/list comes through the loop that called us
            self._refresh = asyncio.get_running_loop().create_task(self._refresh_tools(self.session))
        if self.on_notification is not None:
            dumped = params.model_dump(mode="json", exclude_none=True) if params is not None else None
            self.on_notification(self.name, method, dumped)

    async def _refresh_tools(self, session: ClientSession) -> None:
        try:
            self.tools = await self._list_tools(session)
            await self._tools_changed()
        except Exception as error:
            self.log.write(
                self.name, "error", None, f"tools/list after a change failed: {describe_error(error)}"
            )

    async def settled(self) -> None:
        """Wait for a tool-list refresh under way (a call's result waits for the tools it added)."""
        refresh = self._refresh
        if refresh is not None and not refresh.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(refresh), self.config.timeout_s)

    # -- requests --------------------------------------------------------------------------------

    async def call_tool(self, tool: str, arguments: dict[str, Any], signal: Any = None) -> Any:
        """``tools/call``; the timeout restarts with each progress notification. Not retried, the
        server may have acted, unless the request cannot have reached it (a refused connection,
        or a server that restarted and no longer knows the session): then it is sent once more on
        a new session."""
        try:
            return await self._call_tool_once(tool, arguments, signal)
        except Exception as error:
            unsent = error.unsent if isinstance(error, ConnectionDropped) else _never_sent(error)
            if not unsent:
                raise
            await self._restart()
        return await self._call_tool_once(tool, arguments, signal)

    async def _restart(self) -> None:
        """End what is left of the current session, then connect again."""
        if self.state == "connected":
            await self.stop()
        self.state = "disconnected" if self.state != "disabled" else self.state
        await self.ensure_connected()

    async def _call_tool_once(self, tool: str, arguments: dict[str, Any], signal: Any) -> Any:
        await self.ensure_connected()
        session = self.session
        assert session is not None
        last = [time.monotonic()]

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            last[0] = time.monotonic()

        call = asyncio.ensure_future(
            session.call_tool(
                tool, arguments, read_timeout_seconds=timedelta(days=1), progress_callback=progress
            )
        )
        result = await self._bounded(call, last, signal)
        await asyncio.sleep(0)  # a notification sent before the result is handled first
        if self._refresh is not None:
            await self.settled()
        return result

    async def _bounded(self, call: asyncio.Future[Any], last: list[float], signal: Any) -> Any:
        """The answer to ``call``, within the timeout (restarted by progress, ``last``), unless
        the abort ``signal`` fires or the session ends first (its pending requests get no answer)."""
        timeout = self.config.timeout_s
        session_task = self._task
        try:
            while True:
                remaining = last[0] + timeout - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f'MCP server "{self.name}" did not answer within {timeout:g} s')
                if signal is not None and getattr(signal, "aborted", False):
                    raise asyncio.CancelledError
                waiting: set[asyncio.Future[Any]] = {call}
                if session_task is not None:
                    waiting.add(session_task)
                done, _ = await asyncio.wait(
                    waiting,
                    timeout=remaining if signal is None else min(remaining, 0.1),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if call in done:
                    return call.result()
                if session_task is not None and session_task in done:
                    raise ConnectionDropped(
                        f'MCP server "{self.name}" disconnected: {self.error or "connection closed"}',
                        unsent=_never_sent(self.dropped_by),
                    )
        finally:
            if not call.done():
                call.cancel()

    async def request(self, make: Callable[[ClientSession], Awaitable[Any]], retry: bool = True) -> Any:
        """A list/read request; retried once after a transient HTTP error or a dropped session
        (it changes nothing on the server)."""
        await self.ensure_connected()
        assert self.session is not None
        try:
            call = asyncio.ensure_future(make(self.session))
            return await self._bounded(call, [time.monotonic()], None)
        except Exception as error:
            dropped = isinstance(error, ConnectionDropped) or _never_sent(error)
            if not (retry and (dropped or (self.config.kind == "http" and _is_transient(error)))):
                raise
            if dropped:
                await self._restart()
        return await self.request(make, retry=False)

    def status_line(self) -> str:
        """One line: state, tool count, and the error with the tail of stderr."""
        if self.state == "connected":
            return f"connected, {len(self.tools)} tools"
        if self.state in ("failed", "disconnected"):
            line = f"{self.state}: {self.error}"
            tail = self.stderr.text().splitlines()
            if tail and (self.error or "") not in tail[-1]:
                line += f" (stderr: {tail[-1][:200]})"
            return line
        return self.state
