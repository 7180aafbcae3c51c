"""A recording ACP client: the session updates it was sent, and scripted answers to permission requests."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
from acp import schema

from support.clean_env import hermetic_environment

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

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    def transcript(self) -> list[dict[str, Any]]:
        """The updates as the JSON the client received."""
        return [json.loads(u.model_dump_json(by_alias=True, exclude_none=True)) for u in self.updates]


@contextlib.asynccontextmanager
async def acp_agent(
    home: Path, work: Path, client: RecordingClient, *extra: str, files: bool = False
) -> AsyncIterator[tuple[Any, Any]]:
    """``(connection, process)``: ``pi --mode acp`` started in ``work`` and initialized."""
    env = hermetic_environment()
    env.update(
        PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent.parent)
    )
    async with acp.spawn_agent_process(client, PI, *ARGS, *extra, env=env, cwd=str(work)) as (conn, process):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=files, write_text_file=files)
            ),
            client_info=schema.Implementation(name="test-client", version="1"),
        )
        yield conn, process
