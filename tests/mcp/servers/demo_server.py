"""An MCP server for the tests, built with the SDK's FastMCP; ``--behave`` picks how it misbehaves.

stdio by default; ``--http PORT`` serves streamable HTTP on 127.0.0.1 (port 0: a free one, printed
as ``PORT <n>`` on stdout). Behaviours: ``normal``, ``crash-on-start``, ``hang-initialize``,
``flood-stderr``, ``garbage`` (malformed JSON-RPC lines before the real answers), ``grandchild``
(starts a sleeping grandchild and writes its pid to ``$DEMO_PID_FILE``), ``client-features``
(more tools, asking the client for roots, sampling and elicitation).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import subprocess
import sys
import time

from mcp.server.fastmcp import Context
from mcp.server.fastmcp import FastMCP
from mcp.types import ImageContent
from mcp.types import TextContent

# a 1x1 PNG
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def build(name: str) -> FastMCP:
    server = FastMCP(name, instructions="Demo tools for the piko tests.\nMore lines follow.")

    @server.tool(annotations={"readOnlyHint": True})
    def echo(text: str) -> str:
        """Echo the text back."""
        return "echo: " + text

    @server.tool(name="get.thing")
    def get_thing() -> str:
        """Get a thing."""
        return "thing"

    @server.tool()
    def fail(reason: str = "it broke") -> str:
        """Always fails."""
        raise ValueError(reason)

    @server.tool()
    def big(size: int = 50000) -> str:
        """Return a long text."""
        return "".join(f"line {i:06d}\n" for i in range(size // 12 + 1))[:size]

    @server.tool()
    def picture() -> list[TextContent | ImageContent]:
        """Return a picture."""
        return [
            TextContent(type="text", text="a pixel"),
            ImageContent(type="image", data=PIXEL, mimeType="image/png"),
        ]

    @server.tool()
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleep, reporting progress every 0.2 s."""
        steps = int(seconds / 0.2)
        for i in range(steps):
            await asyncio.sleep(0.2)
            await ctx.report_progress(i + 1, steps)
        return f"slept {seconds}"

    @server.tool()
    async def sleepy(seconds: float) -> str:
        """Sleep without a word."""
        await asyncio.sleep(seconds)
        return "woke"

    @server.tool()
    async def shout(text: str, ctx: Context) -> str:
        """Log the text as a server log message, then return it upper-cased."""
        await ctx.info(f"shouting {text}")
        return text.upper()

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool named 'extra' and announce the changed tool list."""

        def extra() -> str:
            """An extra tool added at run time."""
            return "extra!"

        server.add_tool(extra)
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    def where(variable: str = "DEMO_VALUE") -> str:
        """The server's working directory and one variable of its environment."""
        return f"{os.getcwd()} {os.environ.get(variable)}"

    @server.tool()
    def die() -> str:
        """Exit the server process at once (a crash in the middle of a session)."""
        os._exit(1)

    @server.resource("demo://readme", mime_type="text/plain")
    def readme() -> str:
        """The readme."""
        return "Read me first."

    @server.resource("demo://pixel.png", mime_type="image/png")
    def pixel() -> bytes:
        return base64.b64decode(PIXEL)

    @server.resource("demo://blob.bin", mime_type="application/octet-stream")
    def blob() -> bytes:
        return b"\x00\x01\x02binary"

    @server.resource("demo://item/{item_id}")
    def item(item_id: str) -> str:
        return f"item {item_id}"

    return server


def add_client_feature_tools(server: FastMCP) -> None:
    """Tools that ask the client for what MCP clients may offer: roots, sampling, elicitation."""
    import json

    from mcp.shared.exceptions import McpError
    from mcp.types import SamplingMessage
    from mcp.types import TextContent as Text

    @server.tool()
    async def client_info(ctx: Context) -> str:
        """The capabilities and name the client declared in initialize."""
        params = ctx.session.client_params
        assert params is not None
        caps = params.capabilities.model_dump(mode="json", exclude_none=True)
        return json.dumps({"capabilities": caps, "client": params.clientInfo.name})

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots."""
        listed = await ctx.session.list_roots()
        return json.dumps([r.model_dump(mode="json", exclude_none=True) for r in listed.roots])

    @server.tool()
    async def sample(ctx: Context) -> str:
        """Ask the client's model for a completion."""
        message = SamplingMessage(role="user", content=Text(type="text", text="hi"))
        try:
            result = await ctx.session.create_message([message], max_tokens=10)
        except McpError as error:
            return f"declined: {error.error.message}"
        return f"sampled: {result.content}"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user a question through the client."""
        try:
            result = await ctx.session.elicit_form("Your name?", {"type": "object", "properties": {}})
        except McpError as error:
            return f"declined: {error.error.message}"
        return f"answered: {result.action}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--behave", default="normal")
    parser.add_argument("--name", default="demo")
    parser.add_argument("--http", type=int, default=None)
    args = parser.parse_args()
    behave = args.behave
    if behave == "crash-on-start":
        sys.stderr.write("fatal: missing API key\n")
        sys.exit(3)
    if behave == "hang-initialize":
        time.sleep(3600)
    if behave == "flood-stderr":
        chunk = "noise " * 2000 + "\n"
        for _ in range(500):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    if behave == "garbage":
        sys.stdout.write('this is not json\n{"jsonrpc": "2.0", "oops": 1}\n')
        sys.stdout.flush()
    if behave == "grandchild":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open(os.environ["DEMO_PID_FILE"], "w") as out:
            out.write(f"{os.getpid()} {child.pid}\n")
    server = build(args.name)
    if behave == "client-features":
        add_client_feature_tools(server)
    if args.http is not None:
        run_http(server, args.http)
    else:
        server.run()


def run_http(server: FastMCP, port: int) -> None:
    import socket

    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart takes the same port
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
