"""What the ``data`` battery files share: real ``pi`` runs against the scripted server, and checks
of session files (every line readable, the chain intact) and of what the provider received."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

_TESTS = Path(__file__).resolve().parents[1]
for _folder in (_TESTS / "agent", _TESTS / "rpc"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from agent_harness import MOCK  # noqa: E402
from agent_harness import PI  # noqa: E402
from agent_harness import PiEnv  # noqa: E402
from agent_harness import make_env  # noqa: E402
from rpc_client import RpcProcess  # noqa: E402

STUBBORN_EXTENSION = str(_TESTS / "support" / "stubborn_tool_ext.py")
FAST_RETRY = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 20}}

__all__ = [
    "FAST_RETRY",
    "MOCK",
    "PI",
    "STUBBORN_EXTENSION",
    "PiEnv",
    "RpcProcess",
    "make_env",
    "read_lines",
    "rpc_process",
    "unpaired_tool_results",
]


def read_lines(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """The JSON objects of a session file, and the 1-based numbers of the lines that are not one."""
    objects: list[dict[str, Any]] = []
    bad: list[int] = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            bad.append(number)
            continue
        if isinstance(value, dict):
            objects.append(value)
        else:
            bad.append(number)
    return objects, bad


def unpaired_tool_results(body: Any) -> list[str]:
    """Tool results of a request body (OpenAI chat completions or Anthropic messages) that answer
    no tool call of the assistant message before them, or answer one twice."""
    found: list[str] = []
    open_calls: set[str] = set()
    for message in (body or {}).get("messages") or []:
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            open_calls = {c.get("id") for c in message.get("tool_calls") or []}
            if isinstance(content, list):
                open_calls |= {b.get("id") for b in content if b.get("type") == "tool_use"}
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                found.append(str(call_id))
            open_calls.discard(call_id)
        elif role == "user" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    call_id = block.get("tool_use_id")
                    if call_id not in open_calls:
                        found.append(str(call_id))
                    open_calls.discard(call_id)
    return found


def rpc_process(env: PiEnv, *args: str) -> RpcProcess:
    """``pi --mode rpc`` in ``env`` (its config dir and scripted server)."""
    return RpcProcess(env.home, env.work, ["--mode", "rpc", *args], env=env.extra_env)
