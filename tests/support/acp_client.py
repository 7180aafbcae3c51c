"""A recording ACP client: the session updates it was sent, scripted answers to permission
requests, editor buffers for the fs methods and real processes for the terminal methods."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
from acp import schema

from piko.testing import hermetic_environment

PI = str(Path(sys.executable).with_name("pi"))
ARGS = ["--mode", "acp", "--provider", "mock", "--model", "mock-1", "--tools", "read,bash,edit,write"]


class RecordingClient:
    """Keeps every ``session/update``; answers permission requests from ``answers`` in order
    (an option id, or ``None`` for a cancelled request)."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permission_requests: list[Any] = []
        self.answers: list[str | None] = []
        self.buffers: dict[str, str] = {}  # path -> the text an editor holds (fs capability tests)
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, Terminal] = {}
        self.terminal_calls: list[tuple[str, str]] = []  # (method, terminal id) in order
        self.refuse_terminals = False
        self.initialized: Any = None  # the agent's answer to initialize

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **_: Any) -> Any:
        self.permission_requests.append({"tool_call": tool_call, "options": options})
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(self, path: str, session_id: str, **_: Any) -> Any:
        if path not in self.buffers:
            raise acp.RequestError.resource_not_found(path)
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, content: str, path: str, session_id: str, **_: Any) -> Any:
        self.writes.append((path, content))
        self.buffers[path] = content
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: Any = None,
        cwd: Any = None,
        env: Any = None,
        output_byte_limit: Any = None,
        **_: Any,
    ) -> Any:
        if self.refuse_terminals:
            raise acp.RequestError.internal_error({"message": "no terminals today"})
        terminal = Terminal(
            command, list(args or []), cwd, {e.name: e.value for e in env or []}, output_byte_limit
        )
        await terminal.start()
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        self.terminal_calls.append(("create", terminal_id))
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.terminal_calls.append(("wait", terminal_id))
        code = await self.terminals[terminal_id].wait()
        return schema.WaitForTerminalExitResponse(
            exit_code=code if code >= 0 else None, signal=None if code >= 0 else str(-code)
        )

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.terminal_calls.append(("output", terminal_id))
        return self.terminals[terminal_id].output()

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.terminal_calls.append(("kill", terminal_id))
        self.terminals[terminal_id].kill()
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.terminal_calls.append(("release", terminal_id))
        self.terminals[terminal_id].kill()
        return schema.ReleaseTerminalResponse()

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    def transcript(self) -> list[dict[str, Any]]:
        """The updates as the JSON the client received."""
        return [json.loads(u.model_dump_json(by_alias=True, exclude_none=True)) for u in self.updates]


class Terminal:
    """A command the client runs for the agent: stdout and stderr together, the last
    ``limit`` bytes kept (as ACP asks of clients)."""

    def __init__(
        self, command: str, args: list[str], cwd: str | None, env: dict[str, str], limit: int | None
    ) -> None:
        self.argv, self.cwd, self.env, self.limit = [command, *args], cwd, env, limit
        self.data = b""
        self.truncated = False

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv, cwd=self.cwd, env={**os.environ, **self.env},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.data += chunk
            if self.limit is not None and len(self.data) > self.limit:
                self.data, self.truncated = self.data[-self.limit :], True

    async def wait(self) -> int:
        code = await self.process.wait()
        await self.reader
        return code

    def output(self) -> Any:
        code = self.process.returncode
        status = None if code is None else schema.TerminalExitStatus(exit_code=max(code, 0))
        text = self.data.decode("utf-8", "replace")
        return schema.TerminalOutputResponse(output=text, truncated=self.truncated, exit_status=status)

    def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, 9)


@contextlib.asynccontextmanager
async def acp_agent(
    home: Path,
    work: Path,
    client: RecordingClient,
    *extra: str,
    files: bool = False,
    terminal: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """``(connection, process)``: ``pi --mode acp`` started in ``work`` (with ``env`` added to a
    clean environment) and initialized (the answer is ``client.initialized``)."""
    environment = hermetic_environment()
    environment.update(
        PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent.parent)
    )
    environment.update(env or {})
    async with acp.spawn_agent_process(client, PI, *ARGS, *extra, env=environment, cwd=str(work)) as (
        conn,
        process,
    ):
        client.initialized = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=files, write_text_file=files),
                terminal=terminal,
            ),
            client_info=schema.Implementation(name="test-client", version="1"),
        )
        yield conn, process
