"""Helpers of the session tests: fixture paths, message makers, whether the real pi is here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from piko.data.messages import AssistantMessage
from piko.data.messages import Cost
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.data.wire import to_wire
from piko.sessions.manager import SessionContext

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLES = sorted((FIXTURES / "pi_samples").glob("*/session.jsonl"))
PI_WRITTEN = [*SAMPLES, FIXTURES / "pi_rich" / "session.jsonl"]
PI_PREFIX = Path(os.environ.get("PI_PREFIX", "/work/scratch/pi073"))
PI_BIN = PI_PREFIX / "node_modules" / ".bin" / "pi"
PI_DIST = PI_PREFIX / "node_modules" / "@mariozechner" / "pi-coding-agent" / "dist"


def copy_fixture(source: Path, target_dir: Path, name: str | None = None) -> Path:
    target = target_dir / (name or source.name)
    shutil.copyfile(source, target)
    return target


def user(text: str, timestamp: int = 1_780_000_000_000) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def assistant(
    text: str = "ok",
    *,
    provider: str = "mock",
    model: str = "mock-1",
    tool_call: ToolCall | None = None,
    timestamp: int = 1_780_000_000_500,
) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)]
    if tool_call is not None:
        content.append(tool_call)
    return AssistantMessage(
        content=content,
        api="openai-completions",
        provider=provider,
        model=model,
        usage=Usage(
            input=100,
            output=20,
            total_tokens=120,
            cost=Cost(input=0.0000015, output=0.0000015, total=0.000003),
        ),
        stop_reason="toolUse" if tool_call is not None else "stop",
        timestamp=timestamp,
        response_id="chatcmpl-1",
    )


def tool_result(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="bash", content=[TextContent(text=text)], timestamp=1_780_000_000_700
    )


def pi_available() -> bool:
    return shutil.which("node") is not None and PI_BIN.exists()


needs_pi = pytest.mark.skipif(
    not pi_available(),
    reason=f"needs node and pi 0.73.1 in {PI_PREFIX} (npm install @mariozechner/pi-coding-agent@0.73.1; or set PI_PREFIX)",
)


def context_json(context: SessionContext) -> dict[str, Any]:
    """pi's ``SessionContext`` JSON for a piko context."""
    model = {"provider": context.model.provider, "modelId": context.model.model_id} if context.model else None
    return {
        "messages": [to_wire(m) for m in context.messages],
        "thinkingLevel": context.thinking_level,
        "model": model,
    }
