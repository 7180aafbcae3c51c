"""A streamable HTTP server that restarts mid-session: the next call reconnects (a new MCP session)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from mcp_support import DEMO_SERVER
from mcp_support import answer
from mcp_support import call
from mcp_support import tool_messages

from piko.testing.rpc_client import RpcProcess

pytestmark = pytest.mark.timeout(180)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class DemoHttp:
    """The demo server over HTTP on a fixed port, to stop and start again."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, DEMO_SERVER, "--http", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        assert self.process.stdout.readline().startswith("PORT ")
        for _ in range(500):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@pytest.fixture
def demo_http():
    server = DemoHttp(free_port())
    server.start()
    yield server
    server.stop()


def test_a_restarted_http_server_is_reconnected_on_the_next_call(mcp_env, demo_http) -> None:
    """A call while the server is down fails at once (not after the 300 s timeout) and the session
    goes on; after a restart, the next call opens a new MCP session, whether or not a call failed
    in between (the old session's id means nothing to the new process)."""
    env = mcp_env(
        [call("mcp__demo__echo", {"text": "before"}), answer(),
         call("mcp__demo__echo", {"text": "down"}), answer(),
         call("mcp__demo__echo", {"text": "after"}), answer(),
         call("mcp__demo__echo", {"text": "again"}), answer()]
    )  # fmt: skip
    url = f"http://127.0.0.1:{demo_http.port}/mcp"
    env.write_mcp({"demo": {"url": url, "exposure": "direct", "timeout": 300}})
    args = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
    rpc = RpcProcess(env.home, env.work, args, env.environment())
    try:
        rpc.prompt("one", timeout=60)
        demo_http.stop()
        rpc.prompt("two", timeout=60)  # would wait out the 300 s timeout if the call hung
        demo_http.start()
        rpc.prompt("three", timeout=60)
        demo_http.stop()
        demo_http.start()  # restarted with no call in between
        rpc.prompt("four", timeout=60)
    finally:
        code = rpc.close()
    assert code == 0, rpc.stderr
    bodies = env.bodies()
    assert tool_messages(bodies[1])[-1]["content"] == "echo: before"
    down = tool_messages(bodies[3])[-1]["content"]
    assert down.startswith('MCP server "demo"') and "connect" in down, down
    assert tool_messages(bodies[5])[-1]["content"] == "echo: after"
    assert tool_messages(bodies[7])[-1]["content"] == "echo: again"
