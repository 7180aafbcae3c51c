"""Fixtures of the MCP tests: a pi world with the scripted LLM server, and real MCP servers."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_support import DEMO_SERVER
from mcp_support import McpEnv
from support.llm_server import LLMServer
from support.pi_dirs import make_pi_dirs


@pytest.fixture
def mcp_env(tmp_path: Path) -> Iterator[Callable[..., McpEnv]]:
    """``mcp_env(turns)``: a running scripted LLM server and a pi config pointing at it."""
    with ExitStack() as stack:

        def start(turns: list[dict[str, Any]]) -> McpEnv:
            server = stack.enter_context(LLMServer(turns))
            home, work = make_pi_dirs(tmp_path, server, model_fields={"mock": {"input": ["text", "image"]}})
            return McpEnv(home, work, server)

        yield start


AUTH_SERVER = str(Path(__file__).resolve().parent / "servers" / "auth_server.py")


@pytest.fixture
def auth_server() -> Iterator[Callable[..., str]]:
    """``auth_server(token_seconds, *flags)``: the OAuth-protected server and its authorization
    server (``servers/auth_server.py``) on 127.0.0.1; the MCP URL."""
    processes: list[subprocess.Popen[str]] = []

    def start(token_seconds: int = 3600, *extra: str) -> str:
        process = subprocess.Popen([sys.executable, AUTH_SERVER, "--token-seconds", str(token_seconds), *extra],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        processes.append(process)
        assert process.stdout is not None
        port = int(process.stdout.readline().split()[1])
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def http_server() -> Iterator[Callable[..., str]]:
    """``http_server(name="demo")``: the demo server over streamable HTTP on 127.0.0.1; its URL."""
    processes: list[subprocess.Popen[str]] = []

    def start(name: str = "demo") -> str:
        process = subprocess.Popen(
            [sys.executable, DEMO_SERVER, "--http", "0", "--name", name],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        processes.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        port = int(line.split()[1])
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
