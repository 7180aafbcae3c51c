"""Helpers of the MCP tests: the demo server's entries, scripted turns, and a pi world to run in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

PI = str(Path(sys.executable).with_name("pi"))
DEMO_SERVER = str(Path(__file__).resolve().parent / "servers" / "demo_server.py")
_KEY_SUFFIXES = ("_API_KEY", "_OAUTH_TOKEN", "_BEARER_TOKEN_BEDROCK")


def stdio_entry(behave: str = "normal", **extra: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry running the demo server over stdio."""
    args = [DEMO_SERVER] if behave == "normal" else [DEMO_SERVER, "--behave", behave]
    return {"command": sys.executable, "args": args, **extra}


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """A scripted turn calling one tool."""
    return {"blocks": [{"tool_call": {"name": name, "arguments": arguments or {}}}]}


def answer(text: str = "Done.") -> dict[str, Any]:
    return {"blocks": [{"text": text}]}


def turn_end_dump(path: Path, expression: str, *, sort_keys: bool = False) -> Path:
    """Write to ``path`` an extension that, at each turn end, writes the JSON of ``expression``
    (Python over ``pi``, ``json``, ``os`` and ``sys``) to the file named by ``$OUT``."""
    path.write_text(
        "import json, os, sys\n"
        "def activate(pi):\n"
        "    def on_turn_end(event, ctx):\n"
        f"        data = {expression}\n"
        f"        open(os.environ['OUT'], 'w').write(json.dumps(data, sort_keys={sort_keys}))\n"
        "    pi.on('turn_end', on_turn_end)\n"
    )
    return path


def tool_names(body: dict[str, Any]) -> list[str]:
    """The tools a chat-completions request declared."""
    return [t["function"]["name"] for t in body.get("tools") or []]


def tool_messages(body: dict[str, Any]) -> list[Any]:
    """The tool results a chat-completions request carried."""
    return [m for m in body["messages"] if m.get("role") == "tool"]


@dataclass
class McpEnv:
    home: Path
    work: Path
    server: Any
    extra_env: dict[str, str] = field(default_factory=dict)

    def environment(self, env: dict[str, str] | None = None) -> dict[str, str]:
        full = {k: v for k, v in os.environ.items() if not k.endswith(_KEY_SUFFIXES)}
        for name in ("PIKO_TRACE", "PI_CODING_AGENT_SESSION_DIR", "PIKO_DISABLE_PLUGINS", "PIKO_PLUGINS"):
            full.pop(name, None)
        full.update(PI_CODING_AGENT_DIR=str(self.home), PIKO_CACHE_DIR=str(self.home / "cache"),
                    HOME=str(self.home.parent))  # fmt: skip
        full.update(self.extra_env)
        full.update(env or {})
        return full

    def run(
        self, *args: str, timeout: float = 90, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PI, *args], cwd=self.work, env=self.environment(env), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip

    def prompt(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """``pi -p --provider mock --model mock-1 *args``."""
        return self.run("-p", "--provider", "mock", "--model", "mock-1", *args, **kwargs)

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [PI, *args], cwd=self.work, env=self.environment(env), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def write_mcp(self, servers: dict[str, Any], *, project: bool = False, **top: Any) -> Path:
        path = (self.work / ".pi" if project else self.home) / "mcp.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"mcpServers": servers, **top}), encoding="utf-8")
        return path

    def trust(self) -> None:
        (self.home / "trusted-projects.json").write_text(json.dumps({"projects": {str(self.work): True}}))

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.server.requests]
