"""A service: an asyncio HTTP server answering requests, one agent session per conversation.

``POST /conversations/<id>`` with the prompt as the body answers with the assistant's text;
the first request of a conversation creates its session, later ones continue it. Sessions are
kept in memory and closed when the server stops (Ctrl+C or SIGTERM).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import piko


class Conversations:
    """One session per conversation id, each prompted by one request at a time."""

    def __init__(self) -> None:
        self.sessions: dict[str, piko.AgentSession] = {}
        self.locks: dict[str, asyncio.Lock] = {}

    async def answer(self, conversation: str, text: str) -> str:
        lock = self.locks.setdefault(conversation, asyncio.Lock())
        async with lock:
            session = self.sessions.get(conversation)
            if session is None:
                session = await piko.create_agent_session(
                    session_manager=piko.SessionManager.in_memory(), tools=["read", "grep", "find", "ls"]
                )
                self.sessions[conversation] = session
            await session.prompt(text)
            return session.get_last_assistant_text() or ""

    async def close(self) -> None:
        for session in self.sessions.values():
            await session.close()
        self.sessions.clear()


async def handle(
    conversations: Conversations, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        request_line = (await reader.readline()).decode("latin-1").split()
        headers: dict[str, str] = {}
        while (line := (await reader.readline()).decode("latin-1").strip()) != "":
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = (await reader.readexactly(int(headers.get("content-length", "0")))).decode("utf-8")
        if (
            len(request_line) < 2
            or request_line[0] != "POST"
            or not request_line[1].startswith("/conversations/")
        ):
            status, reply = "404 Not Found", "POST /conversations/<id> with the prompt as the body\n"
        else:
            status, reply = "200 OK", await conversations.answer(request_line[1].split("/")[2], body) + "\n"
    except Exception as exc:  # a bad request or a failed prompt: answer it, keep serving
        status, reply = "500 Internal Server Error", f"{type(exc).__name__}: {exc}\n"
    data = reply.encode("utf-8")
    writer.write(
        f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(data)}\r\nconnection: close\r\n\r\n".encode()
        + data
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()


async def main() -> None:
    conversations = Conversations()
    server = await asyncio.start_server(
        lambda r, w: handle(conversations, r, w), "127.0.0.1", int(os.environ.get("PORT", "8765"))
    )
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    async with server:
        await stop.wait()
    await conversations.close()
    print(f"closed {len(conversations.locks)} conversation(s)", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
