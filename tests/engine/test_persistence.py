"""The session recorder (``piko.engine.persistence``): what reaches the session file, and from where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import CustomMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.engine.persistence import SessionRecorder
from piko.engine.session_services import SessionServices
from piko.sessions.manager import SessionManager


def _lines(manager: SessionManager) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(str(manager.session_file)).read_text().splitlines()]


def test_finished_messages_are_written_in_order_and_bash_results_only_when_added(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), session_dir=str(tmp_path / "sessions"))
    conversation: list[Any] = []
    recorder = SessionRecorder(SessionServices(manager=lambda: manager, messages=lambda: conversation))
    recorder.record(UserMessage(content="read a", timestamp=1))
    recorder.record(AssistantMessage(content=[TextContent(text="reading")], timestamp=2))
    recorder.record(ToolResultMessage(tool_call_id="c1", tool_name="read", timestamp=3))
    recorder.record(CustomMessage(custom_type="note", content="seen", display=False, timestamp=4))
    recorder.record(BashExecutionMessage(command="ls", output="", timestamp=5))  # not a run's message
    assert conversation == []  # recording does not touch the conversation: the agent holds it
    bash = BashExecutionMessage(command="pwd", output="/\n", exit_code=0, timestamp=6)
    recorder.add(bash)
    assert conversation == [bash]

    lines = _lines(manager)
    assert [line["type"] for line in lines] == [
        "session", "message", "message", "message", "custom_message", "message",
    ]  # fmt: skip
    assert [line.get("message", {}).get("role") for line in lines[1:]] == [
        "user", "assistant", "toolResult", None, "bashExecution",
    ]  # fmt: skip
    custom = lines[4]
    assert (custom["customType"], custom["content"], custom["display"]) == ("note", "seen", False)
    assert lines[5]["message"]["command"] == "pwd"


def test_the_recorder_follows_the_session_to_its_next_file(tmp_path: Path) -> None:
    managers = [SessionManager.create(str(tmp_path), session_dir=str(tmp_path / "sessions"))]
    conversation: list[Any] = []
    recorder = SessionRecorder(SessionServices(manager=lambda: managers[-1], messages=lambda: conversation))
    recorder.record(UserMessage(content="one", timestamp=1))
    recorder.record(AssistantMessage(content=[TextContent(text="first")], timestamp=2))
    managers.append(SessionManager.create(str(tmp_path), session_dir=str(tmp_path / "sessions")))
    recorder.record(UserMessage(content="two", timestamp=3))
    recorder.record(AssistantMessage(content=[TextContent(text="second")], timestamp=4))
    first, second = (_lines(m) for m in managers)
    assert [line["message"]["content"][0]["text"] for line in first[2:]] == ["first"]
    assert [line["message"]["content"][0]["text"] for line in second[2:]] == ["second"]


def test_a_session_reads_back_what_a_run_recorded(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session(["hello back"])
        await session.prompt("hello")
        await session.send_custom_message({"customType": "note", "content": "kept", "display": True})
        return session

    session = run(scenario())
    reopened = SessionManager.open(str(session.session_file))
    context = reopened.build_context()
    assert [type(m).__name__ for m in context.messages] == [
        "UnknownMessage",  # the rig's --tools read,bash: pi 1.6's tool record (a system message)
        "UserMessage",
        "AssistantMessage",
        "CustomMessage",
    ]
    # the file also holds the tool record (pi 1.6's system message); the live session, the talk
    assert [type(m).__name__ for m in session.messages] == [
        type(m).__name__ for m in context.messages if m.role != "system"
    ]
