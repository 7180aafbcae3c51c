"""Session statistics (``piko.engine.stats``): counts, tokens and cost, context use, the last answer's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import Model
from piko.data.messages import TextContent
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.data.wire import record_to_wire
from piko.engine.stats import ContextUsage
from piko.engine.stats import context_usage
from piko.engine.stats import last_assistant_text
from piko.sessions.manager import SessionManager

USAGE = {"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 1}


def test_stats_count_the_conversation_in_context(rig, run) -> None:
    turns = [
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "missing.txt"}}}], "usage": USAGE},
        {"blocks": [{"text": "done"}], "usage": USAGE},
    ]

    async def scenario() -> Any:
        session = await rig.session(turns)
        await session.prompt("read it")
        return session

    session = run(scenario())
    stats = session.get_session_stats()
    assert (stats.session_file, stats.session_id) == (session.session_file, session.session_id)
    assert (stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results) == (
        1,
        2,
        1,
        1,
    )
    assert stats.total_messages == 4 and stats.cost == 0
    tokens = stats.tokens
    assert (tokens.input, tokens.output, tokens.cache_read, tokens.cache_write, tokens.total) == (
        200,
        40,
        10,
        2,
        252,
    )
    assert stats.context_usage == session.get_context_usage()
    # the wire form, as pi names and orders it (RPC get_session_stats)
    wire = record_to_wire(stats)
    assert list(wire) == [
        "sessionFile", "sessionId", "userMessages", "assistantMessages", "toolCalls", "toolResults",
        "totalMessages", "tokens", "cost", "contextUsage",
    ]  # fmt: skip
    assert wire["tokens"] == {"input": 200, "output": 40, "cacheRead": 10, "cacheWrite": 2, "total": 252}
    assert list(wire["contextUsage"]) == ["tokens", "contextWindow", "percent"]


def _answer(text: str, tokens: int, stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], usage=Usage(input=tokens), stop_reason=stop)


def test_context_use_is_unknown_after_a_compaction_until_an_answer_measures_it(tmp_path: Path) -> None:
    model = Model(id="m", provider="p", context_window=1000)
    manager = SessionManager.in_memory(str(tmp_path))
    first = manager.append_message(UserMessage(content="question", timestamp=1))
    manager.append_message(_answer("answer", 800))
    messages = [UserMessage(content="question " * 50, timestamp=1)]
    before = context_usage(model, messages, manager.get_branch)
    assert before is not None and before.tokens and before.percent == before.tokens / 1000 * 100

    manager.append_compaction("summary", first, 800, None, False)
    assert context_usage(model, messages, manager.get_branch) == ContextUsage(
        tokens=None, context_window=1000, percent=None
    )
    manager.append_message(_answer("failed", 0, stop="error"))  # a failed answer measures nothing
    assert context_usage(model, messages, manager.get_branch).tokens is None
    manager.append_message(_answer("measured", 300))
    assert context_usage(model, messages, manager.get_branch).tokens == before.tokens


def test_no_model_or_no_window_gives_no_context_use(tmp_path: Path) -> None:
    def unread() -> list[Any]:
        raise AssertionError("the branch is not read without a window")

    assert context_usage(None, [], unread) is None
    assert context_usage(Model(id="m", provider="p", context_window=0), [], unread) is None


def test_the_last_answer_text_skips_aborted_answers() -> None:
    answers: list[Any] = [
        _answer("  the real answer \n", 1),
        _answer("cut short", 1, stop="aborted"),
    ]
    assert last_assistant_text(answers) == "the real answer"
    assert last_assistant_text([_answer("   ", 1)]) is None
    assert last_assistant_text([UserMessage(content="no answer yet", timestamp=1)]) is None
