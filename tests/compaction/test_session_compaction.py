"""Compaction end to end: an agent session on the scripted LLM server, with the default strategy plugin."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from builders import words

from piko.data.messages import AssistantMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import UserMessage
from piko.plugins.compaction import prompts

OVERFLOW_BODY = {
    "error": {
        "message": (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in "
            "9000 tokens. Please reduce the length of the messages."
        ),
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


def reply(text: str, total: int | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"blocks": [{"text": text}]}
    if total is not None:
        turn["usage"] = {"input": total - 20, "output": 20}
    return turn


async def try_compact(session: Any, instructions: str | None = None) -> Any:
    """``session.compact()``: its result, or the message it raised with."""
    try:
        return await session.compact(instructions)
    except RuntimeError as exc:
        return str(exc)


def session_lines(session: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(session.session_file).read_text(encoding="utf-8").splitlines()]


def prompt_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request."""
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def message_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for m in body["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        out.append((m["role"], content or ""))
    return out


# ---------------------------------------------------------------------------
# Threshold
# ---------------------------------------------------------------------------

# A 4000-token window that compacts above 3000 (1000 reserved), keeping the last 150 tokens.
THRESHOLD_SESSION: dict[str, Any] = {
    "context_window": 4000,
    "settings": {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 150}},
}


def past_the_threshold(answers: list[str]) -> list[dict[str, Any]]:
    """Three answers reporting 1100, 2100 and 3200 tokens: the third passes 4000 - 1000, so the
    session compacts after it."""
    return [reply(answer, total=total) for answer, total in zip(answers, (1100, 2100, 3200), strict=True)]


def test_threshold_compaction_after_a_long_exchange(world, run) -> None:
    questions = [words(f"question {i}", 100) for i in range(4)]
    answers = [words(f"answer {i}", 100) for i in range(3)]
    summary = "## Goal\nTHE SUMMARY"
    turns = [
        *past_the_threshold(answers),
        reply(summary),
        reply("after compaction"),
    ]

    async def scenario() -> Any:
        session = await world.session(turns, **THRESHOLD_SESSION)
        for question in questions[:3]:
            await session.prompt(question)
        context_after = list(session.messages)
        await session.prompt(questions[3])
        return session, context_after

    session, context_after = run(scenario())
    assert world.event_types().count("compaction_start") == 1
    (start,) = world.of_type("compaction_start")
    (end,) = world.of_type("compaction_end")
    assert start.reason == "threshold" and end.reason == "threshold"
    assert end.error_message is None and end.aborted is False and end.will_retry is False

    # the session file: the compaction entry in pi's format, after the third answer
    lines = session_lines(session)
    third_question = next(
        e for e in lines
        if e["type"] == "message" and e["message"]["role"] == "user" and e["message"]["content"][0]["text"] == questions[2]
    )  # fmt: skip
    third_answer = next(e for e in lines if e.get("parentId") == third_question["id"])
    (entry,) = [e for e in lines if e["type"] == "compaction"]
    assert list(entry) == [
        "type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook",
    ]  # fmt: skip
    assert entry["parentId"] == third_answer["id"]
    assert entry["firstKeptEntryId"] == third_question["id"]  # keep 150: the third answer and question
    assert entry["tokensBefore"] == 3200  # the last response's reported usage
    assert entry["summary"] == summary  # no file was touched: no file lists
    assert entry["details"] == {"readFiles": [], "modifiedFiles": []}
    assert entry["fromHook"] is False
    assert end.result == {
        "summary": summary,
        "firstKeptEntryId": third_question["id"],
        "tokensBefore": 3200,
        "details": {"readFiles": [], "modifiedFiles": []},
    }

    # the summarization request: the first two exchanges as text, the structured prompt, no tools
    body = world.requests()[3]
    assert body["messages"][0] == {"role": "system", "content": prompts.SYSTEM_PROMPT}
    text = prompt_text(body)
    expected_conversation = "\n\n".join(
        [
            f"[User]: {questions[0]}",
            f"[Assistant]: {answers[0]}",
            f"[User]: {questions[1]}",
            f"[Assistant]: {answers[1]}",
        ]
    )
    assert text == f"<conversation>\n{expected_conversation}\n</conversation>\n\n{prompts.SUMMARY_PROMPT}"
    assert body["max_completion_tokens"] == 800  # 0.8 * reserveTokens
    assert "tools" not in body

    # the context after compaction: the summary first, then the kept messages
    assert isinstance(context_after[0], CompactionSummaryMessage) and context_after[0].summary == summary
    assert context_after[0].tokens_before == 3200
    assert [type(m).__name__ for m in context_after[1:]] == ["UserMessage", "AssistantMessage"]
    assert context_after[1].content[0].text == questions[2]
    # ... and what the model is sent next
    roles = message_texts(world.requests()[4])
    assert roles[0][0] == "system"
    assert roles[1][0] == "user" and "THE SUMMARY" in roles[1][1]
    assert roles[2:] == [("user", questions[2]), ("assistant", answers[2]), ("user", questions[3])]


def test_a_message_queued_during_threshold_compaction_is_delivered_after_it(world, run) -> None:
    turns = [
        *past_the_threshold([words(f"answer {i}", 100) for i in range(3)]),
        reply("## Goal\nSUMMARY"),
        reply("answer to the queued message"),
    ]

    async def scenario() -> Any:
        session = await world.session(turns, **THRESHOLD_SESSION)
        queued: list[Any] = []

        def on_event(event: Any) -> None:
            if getattr(type(event), "TYPE", None) == "compaction_start" and not queued:
                queued.append(asyncio.ensure_future(session.follow_up("and one more thing")))

        session.subscribe(on_event)
        for i in range(3):
            await session.prompt(words(f"question {i}", 100))
        return session

    session = run(scenario())
    assert world.event_types().count("compaction_end") == 1
    # the queued message went to the model after the compaction, without a new prompt
    assert len(world.requests()) == 5
    assert prompt_text(world.requests()[4]) == "and one more thing"
    assert session.messages[-1].content[0].text == "answer to the queued message"


def test_below_the_threshold_nothing_happens(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session(
            [reply("short", total=2900)],
            context_window=4000,
            settings={"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}},
        )
        await session.prompt(words("question", 100))
        return session

    session = run(scenario())
    assert "compaction_start" not in world.event_types()
    assert len(world.requests()) == 1
    assert not [e for e in session_lines(session) if e["type"] == "compaction"]


def test_auto_compaction_disabled_in_settings(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session(
            [reply("short", total=3900)],
            context_window=4000,
            settings={"compaction": {"enabled": False, "reserveTokens": 1000, "keepRecentTokens": 10}},
        )
        await session.prompt(words("question", 100))

    run(scenario())
    assert "compaction_start" not in world.event_types()


# ---------------------------------------------------------------------------
# Overflow
# ---------------------------------------------------------------------------


def test_context_overflow_compacts_and_retries_once(world, run) -> None:
    first_q, second_q = words("first question", 100), words("second question", 100)
    turns = [
        reply(words("first answer", 100), total=1200),
        {"status": 400, "error_body": OVERFLOW_BODY},
        reply("## Goal\nOVERFLOW SUMMARY"),
        reply("Recovered answer", total=300),
    ]

    async def scenario() -> Any:
        session = await world.session(turns, settings={"compaction": {"keepRecentTokens": 50}})
        await session.prompt(first_q)
        await session.prompt(second_q)
        return session

    session = run(scenario())
    (start,) = world.of_type("compaction_start")
    (end,) = world.of_type("compaction_end")
    assert start.reason == "overflow"
    assert (
        end.will_retry is True
        and end.error_message is None
        and end.result["summary"].endswith("OVERFLOW SUMMARY")
    )
    assert len(world.requests()) == 4
    # the summarizer saw the first exchange; the retry carries the summary and the second question only
    assert "first question" in prompt_text(world.requests()[2])
    assert "second question" not in prompt_text(world.requests()[2])
    retried = message_texts(world.requests()[3])
    assert [role for role, _ in retried] == ["system", "user", "user"]
    assert "OVERFLOW SUMMARY" in retried[1][1] and retried[2][1] == second_q
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.content[0].text == "Recovered answer"
    # on file: the failed response stays in the history, then the compaction, then the answer
    kinds = [(e["type"], e.get("message", {}).get("stopReason")) for e in session_lines(session)[-3:]]
    assert kinds == [("message", "error"), ("compaction", None), ("message", "stop")]


def test_a_second_overflow_gives_up(world, run) -> None:
    turns = [
        reply(words("first answer", 100), total=1200),
        {"status": 400, "error_body": OVERFLOW_BODY},
        reply("## Goal\nS"),
        {"status": 400, "error_body": OVERFLOW_BODY},
    ]

    async def scenario() -> Any:
        session = await world.session(turns, settings={"compaction": {"keepRecentTokens": 50}})
        await session.prompt(words("first question", 100))
        await session.prompt(words("second question", 100))

    run(scenario())
    ends = world.of_type("compaction_end")
    assert [e.will_retry for e in ends] == [True, False]
    assert ends[1].error_message == (
        "Context overflow recovery failed after one compact-and-retry attempt. "
        "Try reducing context or switching to a larger-context model."
    )
    assert len(world.requests()) == 4


# ---------------------------------------------------------------------------
# Manual
# ---------------------------------------------------------------------------


async def _prompted(world: Any, turns: list[dict[str, Any]], *prompts: str, **kwargs: Any) -> Any:
    """A session (keeping the last 150 tokens when it compacts, unless ``settings`` say otherwise)
    that has sent ``prompts``, the scripted ``turns`` answering."""
    settings = kwargs.pop("settings", {"compaction": {"keepRecentTokens": 150}})
    session = await world.session(turns, settings=settings, **kwargs)
    for text in prompts:
        await session.prompt(text)
    return session


async def _two_exchanges(world: Any, extra_turns: list[dict[str, Any]], **kwargs: Any) -> Any:
    turns = [reply(words("answer one", 100)), reply(words("answer two", 100)), *extra_turns]
    return await _prompted(world, turns, words("question one", 100), words("question two", 100), **kwargs)


def test_manual_compaction_with_custom_instructions(world, run) -> None:
    async def scenario() -> Any:
        session = await _two_exchanges(world, [reply("## Goal\nMANUAL")])
        outcome = await session.compact("focus on the parser module")
        return session, outcome

    session, outcome = run(scenario())
    assert outcome.summary == "## Goal\nMANUAL" and outcome.details == {
        "readFiles": [],
        "modifiedFiles": [],
    }
    (end,) = world.of_type("compaction_end")
    assert end.reason == "manual" and end.result["summary"] == "## Goal\nMANUAL"
    assert "auto_compaction_start" not in world.event_types()
    text = prompt_text(world.requests()[2])
    assert text.endswith(
        prompts.SUMMARY_PROMPT + "\n\nGive particular attention to: focus on the parser module"
    )
    assert "[User]: question one" in text and "question two" not in text
    assert session.compaction.last_result.summary == "## Goal\nMANUAL"
    assert isinstance(session.messages[0], CompactionSummaryMessage)
    assert [type(m) for m in session.messages[1:]] == [UserMessage, AssistantMessage]


def test_manual_compaction_of_a_small_session_says_why_not(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([reply("hello")])
        await session.prompt("hi")
        return await try_compact(session)

    assert run(scenario()) == "Nothing to compact (session too small)"
    (end,) = world.of_type("compaction_end")
    assert end.error_message == "Compaction failed: Nothing to compact (session too small)"
    assert len(world.requests()) == 1


def test_compacting_twice_in_a_row_is_refused(world, run) -> None:
    async def scenario() -> Any:
        session = await _two_exchanges(world, [reply("## Goal\nONE")])
        await session.compact()
        return await try_compact(session)

    assert run(scenario()) == "Already compacted"
    ends = world.of_type("compaction_end")
    assert ends[0].error_message is None
    assert ends[1].error_message == "Compaction failed: Already compacted"


def test_a_second_compaction_folds_the_first(world, run) -> None:
    (world.project / "notes.txt").write_text("alpha\n", encoding="utf-8")
    turns = [
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]},
        reply(words("answer one", 100)),
        reply(words("answer two", 100)),
        reply("## Goal\nFIRST"),
        reply(words("answer three", 100)),
        reply("## Goal\nSECOND"),
    ]

    async def scenario() -> Any:
        session = await _prompted(world, turns, words("question one", 100), words("question two", 100))
        await session.compact()
        await session.prompt(words("question three", 100))
        await session.compact()
        return session

    session = run(scenario())
    first, second = [e for e in session_lines(session) if e["type"] == "compaction"]
    assert first["summary"] == "## Goal\nFIRST\n\n<read-files>\nnotes.txt\n</read-files>"
    assert first["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": []}
    # the second summarization updates the first summary with what came after its kept point
    text = prompt_text(world.requests()[5])
    conversation, _, rest = text.partition("</conversation>\n\n")
    assert (
        "question two" in conversation
        and "answer two" in conversation
        and "question three" not in conversation
    )
    assert "question one" not in conversation  # already in the first summary
    assert rest == f"<previous-summary>\n## Goal\nFIRST\n</previous-summary>\n\n{prompts.UPDATE_PROMPT}"
    # the first compaction's files carry over although notes.txt was not read again
    assert second["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": []}
    assert second["summary"] == "## Goal\nSECOND\n\n<read-files>\nnotes.txt\n</read-files>"
    kept = next(e for e in session_lines(session) if e["id"] == second["firstKeptEntryId"])
    assert kept["message"]["content"][0]["text"].startswith("question three")
    assert [m.summary for m in session.messages if isinstance(m, CompactionSummaryMessage)] == [
        second["summary"]
    ]


def test_split_turn_gets_two_summaries(world, run) -> None:
    (world.project / "big.txt").write_text("data line\n" * 200, encoding="utf-8")
    turns = [
        reply(words("early answer", 50)),
        {"blocks": [{"text": "Reading."}, {"tool_call": {"name": "read", "arguments": {"path": "big.txt"}}}]},
        reply(words("final answer", 100)),
        reply("HISTORY PART"),
        reply("PREFIX PART"),
    ]

    async def scenario() -> Any:
        session = await _prompted(world, turns, words("early question", 50), words("read big.txt", 20))
        await session.compact()
        return session

    session = run(scenario())
    (entry,) = [e for e in session_lines(session) if e["type"] == "compaction"]
    kept = next(e for e in session_lines(session) if e["id"] == entry["firstKeptEntryId"])
    assert kept["message"]["role"] == "assistant"  # the cut is inside the turn, after the tool result
    # two requests in parallel; the server answered them in arrival order
    history_body, prefix_body = world.requests()[3], world.requests()[4]
    if prompts.TURN_PREFIX_PROMPT in prompt_text(history_body):
        history_body, prefix_body = prefix_body, history_body
        history_text, prefix_text = "PREFIX PART", "HISTORY PART"
    else:
        history_text, prefix_text = "HISTORY PART", "PREFIX PART"
    assert prompt_text(prefix_body).endswith(prompts.TURN_PREFIX_PROMPT)
    assert "[User]: read big.txt" in prompt_text(prefix_body)
    assert '[Assistant tool calls]: read(path="big.txt")' in prompt_text(prefix_body)
    assert "[User]: early question" in prompt_text(history_body)
    assert "read big.txt" not in prompt_text(history_body)
    assert prefix_body["max_completion_tokens"] == 8192  # 0.5 * reserveTokens (16384)
    assert history_body["max_completion_tokens"] == 13107  # 0.8 * 16384
    assert entry["summary"] == (
        history_text + prompts.SPLIT_TURN_SEPARATOR + prefix_text + "\n\n<read-files>\nbig.txt\n</read-files>"
    )
    assert [type(m).__name__ for m in session.messages] == ["CompactionSummaryMessage", "AssistantMessage"]


# ---------------------------------------------------------------------------
# Extensions: session_before_compact
# ---------------------------------------------------------------------------

CANCEL_EXTENSION = """
seen = []

def activate(pi):
    def before(event, ctx):
        prep = event.preparation
        seen.append({
            "first_kept": prep.first_kept_entry_id,
            "count": len(prep.messages_to_summarize),
            "tokens_before": prep.tokens_before,
            "custom": event.custom_instructions,
            "branch": len(event.branch_entries),
        })
        return {"cancel": True}

    pi.on("session_before_compact", before)
"""

SUPPLY_EXTENSION = """
compacted = []

def activate(pi):
    def before(event, ctx):
        return {"compaction": {
            "summary": "Summary from the extension",
            "firstKeptEntryId": event.preparation.first_kept_entry_id,
            "tokensBefore": 4242,
            "details": {"mine": True},
        }}

    pi.on("session_before_compact", before)
    pi.on("session_compact", lambda event, ctx: compacted.append((event.compaction_entry.summary, event.from_extension)))
"""


def test_an_extension_cancels_compaction(world, run) -> None:
    ext = world.write_extension("cancel_compact", CANCEL_EXTENSION)

    async def scenario() -> Any:
        session = await _two_exchanges(world, [], extensions=[ext])
        return session, await try_compact(session, "my focus")

    session, outcome = run(scenario())
    assert outcome == "Compaction cancelled"
    (end,) = world.of_type("compaction_end")
    assert end.aborted is True and end.error_message is None and end.result is None
    assert len(world.requests()) == 2  # no summarization request
    assert not [e for e in session_lines(session) if e["type"] == "compaction"]
    (seen,) = sys.modules["piko_extension_cancel_compact"].seen
    assert seen["count"] == 2 and seen["custom"] == "my focus" and seen["tokens_before"] > 0
    assert seen["first_kept"] and seen["branch"] == len(session.session_manager.get_branch())


def test_an_extension_supplies_the_summary(world, run) -> None:
    ext = world.write_extension("supply_compact", SUPPLY_EXTENSION)

    async def scenario() -> Any:
        session = await _two_exchanges(world, [], extensions=[ext])
        await session.compact()
        return session

    session = run(scenario())
    assert len(world.requests()) == 2  # the model was not asked
    (entry,) = [e for e in session_lines(session) if e["type"] == "compaction"]
    assert (entry["summary"], entry["tokensBefore"], entry["details"], entry["fromHook"]) == (
        "Summary from the extension",
        4242,
        {"mine": True},
        True,
    )
    assert sys.modules["piko_extension_supply_compact"].compacted == [("Summary from the extension", True)]
    assert session.messages[0].summary == "Summary from the extension"


COMPACTING_EXTENSION = """
seen = []

def activate(pi):
    def compacting(event, ctx):
        seen.append((event.session_id == ctx.session_manager.get_session_id(), len(event.messages)))
        return {"context": ["The user's ticket is PIKO-42."], "preserveData": {"ticket": "PIKO-42"}}

    pi.on("session.compacting", compacting)
    pi.on("session.compacting", lambda event, ctx: {"prompt": "Summarize in one line, naming the ticket."})
"""


def test_session_compacting_gives_the_summarizer_context_a_prompt_and_kept_data(world, run) -> None:
    ext = world.write_extension("compacting", COMPACTING_EXTENSION)

    async def scenario() -> Any:
        session = await _two_exchanges(world, [reply("ONE LINE")], extensions=[ext])
        await session.compact()
        return session

    session = run(scenario())
    assert sys.modules["piko_extension_compacting"].seen == [(True, 2)]
    text = prompt_text(world.requests()[2])
    assert "<context>\nThe user's ticket is PIKO-42.\n</context>" in text
    assert text.endswith("Summarize in one line, naming the ticket.")
    assert prompts.SUMMARY_PROMPT not in text
    (entry,) = [e for e in session_lines(session) if e["type"] == "compaction"]
    assert entry["details"]["ticket"] == "PIKO-42" and "readFiles" in entry["details"]


def test_session_compacting_is_skipped_when_the_summary_is_supplied(world, run) -> None:
    supply = world.write_extension("supply_compact2", SUPPLY_EXTENSION)
    compacting = world.write_extension(
        "compacting2", COMPACTING_EXTENSION.replace("seen = []", "seen = []  # 2")
    )

    async def scenario() -> Any:
        session = await _two_exchanges(world, [], extensions=[supply, compacting])
        await session.compact()
        return session

    run(scenario())
    assert sys.modules["piko_extension_compacting2"].seen == []


# ---------------------------------------------------------------------------
# Failures and cancellation
# ---------------------------------------------------------------------------


def test_a_failing_summary_request_is_reported(world, run) -> None:
    failure = {
        "status": 400,
        "error_body": {"error": {"message": "model is on fire", "type": "invalid_request_error"}},
    }

    async def scenario() -> Any:
        session = await _two_exchanges(world, [failure])
        return session, await try_compact(session)

    session, outcome = run(scenario())
    assert outcome.startswith("Summarization failed: ") and "model is on fire" in outcome
    (end,) = world.of_type("compaction_end")
    assert end.error_message.startswith("Compaction failed: Summarization failed: ")
    assert "model is on fire" in end.error_message
    assert not [e for e in session_lines(session) if e["type"] == "compaction"]
    assert session.compaction.last_error == end.error_message


def test_threshold_failure_uses_pis_wording(world, run) -> None:
    failure = {"status": 400, "error_body": {"error": {"message": "nope", "type": "invalid_request_error"}}}

    async def scenario() -> Any:
        session = await world.session(
            [reply(words("answer", 100), total=3500), failure],
            context_window=4000,
            settings={"compaction": {"reserveTokens": 1000, "keepRecentTokens": 50}},
        )
        await session.prompt(words("question", 100))

    run(scenario())
    (end,) = world.of_type("compaction_end")
    assert end.error_message.startswith("Auto-compaction failed: ")


def test_aborting_a_running_compaction(world, run) -> None:
    slow = {**reply("never used"), "headers_delay_s": 5}

    async def scenario() -> Any:
        session = await _two_exchanges(world, [slow])
        task = asyncio.ensure_future(try_compact(session))
        for _ in range(500):
            if len(world.server.requests) == 3:
                break
            await asyncio.sleep(0.01)
        session.compaction.abort()
        return session, await asyncio.wait_for(task, 3)

    session, outcome = run(scenario())
    assert outcome == "Compaction cancelled"
    (end,) = world.of_type("compaction_end")
    assert end.aborted is True and end.error_message is None
    assert not [e for e in session_lines(session) if e["type"] == "compaction"]


# ---------------------------------------------------------------------------
# Another strategy
# ---------------------------------------------------------------------------

STRATEGY_PLUGIN = """
from piko import hookimpl
from piko.data.events import CompactionResult

class KeepLastTwo:
    def __init__(self, entries):
        messages = [e for e in entries if e.type == "message" and e.role != "system"]  # tool records aside
        self.first_kept_entry_id = messages[-2].id
        self.tokens_before = 1
        self.dropped = len(messages) - 2

@hookimpl(tryfirst=True)
def piko_compaction_prepare(request, ctx):
    return KeepLastTwo(request.branch_entries)

@hookimpl(tryfirst=True)
def piko_compact(request, ctx):
    prep = request.preparation
    return CompactionResult(summary=f"dropped {prep.dropped} messages", details={"strategy": "last-two"})
"""


def test_a_strategy_plugin_replaces_the_default(world, run) -> None:
    ext = world.write_extension("keep_last_two", STRATEGY_PLUGIN)

    async def scenario() -> Any:
        session = await _two_exchanges(world, [], extensions=[ext])
        return session, await session.compact()

    session, outcome = run(scenario())
    assert len(world.requests()) == 2  # the default strategy did not ask the model
    assert outcome.summary == "dropped 2 messages"
    (entry,) = [e for e in session_lines(session) if e["type"] == "compaction"]
    # what the strategy left out is filled in from its preparation
    assert entry["tokensBefore"] == 1 and entry["details"] == {"strategy": "last-two"}
    kept = next(e for e in session_lines(session) if e["id"] == entry["firstKeptEntryId"])
    assert kept["message"]["content"][0]["text"].startswith("question two")
    assert entry["fromHook"] is False
