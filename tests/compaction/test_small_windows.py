"""Compaction on models with small context windows (4k, 8k) and the default settings.

With ``keepRecentTokens`` 20000 and ``reserveTokens`` 16384, the kept tail of such a model is
the whole session and its threshold is below zero: the budgets are fitted to the window
(``piko.engine.compaction.fitted_budgets``) so that threshold and overflow compaction free space,
the overflowed request is retried, and an overflow that cannot be helped ends in one clear error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from builders import assistant
from builders import branch_of
from builders import call
from builders import exchanges
from builders import result
from builders import user
from builders import words
from test_session_compaction import OVERFLOW_BODY
from test_session_compaction import message_texts
from test_session_compaction import prompt_text
from test_session_compaction import reply
from test_session_compaction import session_lines
from test_session_compaction import try_compact

from piko.data.events import CompactionResult
from piko.data.messages import AssistantMessage
from piko.engine.compaction import fitted_budgets
from piko.plugins.compaction.prepare import CompactionSettings
from piko.plugins.compaction.prepare import prepare_compaction

OVERFLOW = {"status": 400, "error_body": OVERFLOW_BODY}


def usage_turn(text: str, total: int) -> dict[str, Any]:
    return reply(text, total=total)


def test_budgets_are_fitted_to_the_window() -> None:
    defaults = (16384, 20000)
    # a window of at least twice the reserve keeps pi's budgets as they are
    assert fitted_budgets(*defaults, 200_000) == (16384, 20000)
    assert fitted_budgets(*defaults, 64_000) == (16384, 20000)
    # the kept tail takes at most half of what is left below the threshold
    assert fitted_budgets(*defaults, 32_768) == (16384, 8192)
    # below that the reserve shrinks: the threshold is the lower of reserveTokens and 3/4 of the window
    assert fitted_budgets(*defaults, 24_000) == (7616, 8192)
    assert fitted_budgets(*defaults, 8192) == (2048, 3072)
    assert fitted_budgets(*defaults, 4096) == (1024, 1536)
    # the overhead (system prompt, tools) counted in the usage is left out of the tail's share
    assert fitted_budgets(*defaults, 4096, overhead=1000) == (1024, 1036)
    # no window known: the settings as they are; settings smaller than the fit are kept
    assert fitted_budgets(*defaults, 0) == defaults
    assert fitted_budgets(1000, 500, 4096) == (1000, 500)


def test_prepare_cuts_inside_a_tail_that_does_not_fit_the_window() -> None:
    manager, ids = branch_of(*exchanges(3, user_tokens=1000))
    entries = manager.get_branch()
    defaults = CompactionSettings()
    assert prepare_compaction(entries, defaults) is None  # 3300 tokens < keepRecentTokens: pi's answer
    prep = prepare_compaction(entries, defaults, context_window=4096)
    assert prep is not None and prep.first_kept_entry_id == ids[2]  # the budget, 1536, ends in u2
    assert [m.content[0].text[:2] for m in prep.messages_to_summarize] == ["u1", "a1"]
    # an overflow means the estimate was too low: at most half of the messages are kept
    prep = prepare_compaction(entries[:5], defaults, context_window=200_000, overflow=True)
    assert prep is not None and prep.first_kept_entry_id == ids[2]


def test_trailing_tool_results_larger_than_the_budget_keep_their_call() -> None:
    """pi 1.6's rule: the cut falls on the last assistant message, not back on the first message."""
    manager, ids = branch_of(
        user(words("read it", 20)), assistant(words("reading", 10)),
        user(words("now the big one", 20)),
        assistant(words("reading", 10), calls=[call("c1", "read", path="big.txt")]),
        result("c1", words("huge", 5000)),
    )  # fmt: skip
    prep = prepare_compaction(manager.get_branch(), CompactionSettings(keep_recent_tokens=1000))
    assert prep is not None and prep.first_kept_entry_id == ids[3] and prep.is_split_turn
    assert [m.content[0].text[:4] for m in prep.messages_to_summarize] == ["read", "read"]
    assert [m.content[0].text[:3] for m in prep.turn_prefix_messages] == ["now"]


def test_overflow_on_a_4k_model_compacts_and_retries(world, run) -> None:
    questions = [words(f"question {i}", 300) for i in range(3)]
    turns = [
        usage_turn(words("answer 0", 50), 900),
        usage_turn(words("answer 1", 50), 1500),
        OVERFLOW,
        reply("## Goal\nSMALL WINDOW SUMMARY"),
        usage_turn("Retried answer.", 1200),
    ]

    async def scenario() -> Any:
        session = await world.session(turns, context_window=4096)
        for question in questions:
            await session.prompt(question)
        return session

    session = run(scenario())
    (start,) = world.of_type("compaction_start")
    (end,) = world.of_type("compaction_end")
    assert start.reason == "overflow" and end.error_message is None and end.will_retry is True
    assert end.result["summary"].startswith("## Goal\nSMALL WINDOW SUMMARY")
    requests = world.requests()
    assert len(requests) == 5
    summarized = prompt_text(requests[3])
    assert "question 0" in summarized and "question 1" not in summarized
    retried = message_texts(requests[4])
    assert [role for role, _ in retried] == ["system", "user", "user", "assistant", "user"]
    assert "SMALL WINDOW SUMMARY" in retried[1][1] and retried[-1][1] == questions[2]
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.content[0].text == "Retried answer."


def test_threshold_compaction_frees_space_on_an_8k_model(world, run) -> None:
    turns = [
        usage_turn(words("answer 0", 100), 1500),
        usage_turn(words("answer 1", 100), 4000),
        usage_turn(words("answer 2", 100), 6500),  # above 6144: the fitted threshold of 8192
        reply("## Goal\nTHRESHOLD SUMMARY"),
    ]

    async def scenario() -> Any:
        session = await world.session(turns, context_window=8192)
        for i in range(3):
            await session.prompt(words(f"question {i}", 800))
        return session

    session = run(scenario())
    (end,) = world.of_type("compaction_end")
    assert end.reason == "threshold" and end.error_message is None and end.result is not None
    summarized = prompt_text(world.requests()[3])
    assert "question 0" in summarized and "question 1" not in summarized
    assert [e["type"] for e in session_lines(session)][-1] == "compaction"
    # the summary may use 80% of the fitted reserve, not of reserveTokens (more than the window)
    assert world.requests()[3]["max_completion_tokens"] == int(0.8 * 2048)


def test_below_the_fitted_threshold_nothing_happens(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([usage_turn("short", 2000)], context_window=4096)
        await session.prompt("hi")

    run(scenario())
    assert "compaction_start" not in world.event_types()


def test_an_overflow_that_cannot_be_compacted_ends_in_one_clear_error(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([OVERFLOW], context_window=4096)
        await session.prompt(words("one enormous prompt", 2000))
        return session

    session = run(scenario())
    (end,) = world.of_type("compaction_end")
    assert end.reason == "overflow" and end.will_retry is False and end.result is None
    assert end.error_message == (
        "Context overflow recovery failed: nothing to compact: the latest messages alone exceed the "
        "context window (4096 tokens). Try a shorter request or a larger-context model."
    )
    last = session.messages[-1]  # the failed response stays the last word: the modes report it
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "maximum context length" in str(last.error_message)
    assert len(world.requests()) == 1


def test_print_mode_reports_an_unrecoverable_overflow(world) -> None:
    server = world.start_server([OVERFLOW])
    world.write_models(server.base_url, 4096)
    done = subprocess.run(
        [sys.executable, "-m", "piko", "--no-session", "--provider", "mock", "--model", "mock-1", "-p", "hi"],
        env=dict(os.environ), cwd=world.project, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "maximum context length is 8192 tokens" in done.stderr
    assert done.stdout == ""


def test_manual_compact_on_a_4k_model(world, run) -> None:
    async def scenario() -> Any:
        turns = [usage_turn(words(f"answer {i}", 50), total) for i, total in enumerate((900, 1700, 2400))]
        session = await world.session([*turns, reply("## Goal\nMANUAL SMALL")], context_window=4096)
        for i in range(3):
            await session.prompt(words(f"question {i}", 700))
        return await try_compact(session)

    outcome = run(scenario())
    assert isinstance(outcome, CompactionResult), outcome
    assert outcome.summary.startswith("## Goal\nMANUAL SMALL")
    summarized = prompt_text(world.requests()[3])
    assert "question 0" in summarized and "question 1" not in summarized
    assert json.dumps(outcome.details) == '{"readFiles": [], "modifiedFiles": []}'
