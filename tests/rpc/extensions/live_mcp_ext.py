"""Test extension for RPC mode: registers and removes the MCP demo server while the session runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

DEMO_SERVER = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "demo_server.py"


def activate(pi: Any) -> None:
    def add(args: str, ctx: Any) -> None:
        pi.register_mcp_server(
            "live", {"command": sys.executable, "args": [str(DEMO_SERVER)], "exposure": "direct"}
        )

    def remove(args: str, ctx: Any) -> None:
        pi.unregister_mcp_server("live")

    pi.register_command("addmcp", {"description": "register the demo server", "handler": add})
    pi.register_command("rmmcp", {"description": "remove it", "handler": remove})
