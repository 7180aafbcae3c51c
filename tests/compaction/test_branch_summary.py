"""Branch summaries for ``/tree``: through the agent session on the scripted server, and their preparation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builders import assistant
from builders import branch_of
from builders import call
from builders import result
from builders import user
from builders import words

from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import UserMessage
from piko.plugins.compaction import prompts
from piko.plugins.compaction.branch_summary import prepare_branch_entries
from piko.sessions.manager import SessionManager


def prompt_text(body: dict[str, Any]) -> str:
    return "".join(part["text"] for part in body["messages"][-1]["content"])


def lines_of(session: Any) -> list[dict[str, Any]]:
    return [json.loads(x) for x in Path(session.session_file).read_text(encoding="utf-8").splitlines()]


async def _explored_branch(world: Any, summary_turns: list[dict[str, Any]]) -> tuple[Any, dict[str, str]]:
    (world.project / "notes.txt").write_text("hello\n", encoding="utf-8")
    turns = [
        {"blocks": [{"text": "first answer"}]},
        {"blocks": [{"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}}]},
        {"blocks": [{"text": "the notes say hello"}]},
        *summary_turns,
    ]
    session = await world.session(turns)
    await session.prompt("first question")
    await session.prompt("explore the notes")
    entries = {
        e["message"]["role"] + ":" + str(i): e["id"]
        for i, e in enumerate(lines_of(session))
        if e["type"] == "message"
    }
    ids = {
        "first_answer": next(v for k, v in entries.items() if k.startswith("assistant")),
        "old_leaf": session.session_manager.leaf_id,
    }
    return session, ids


def test_tree_navigation_summarizes_the_branch_left(world, run) -> None:
    async def scenario() -> Any:
        session, ids = await _explored_branch(world, [{"blocks": [{"text": "## Goal\nBRANCH"}]}])
        outcome = await session.navigate_tree(
            ids["first_answer"], summarize=True, custom_instructions="mention the notes"
        )
        return session, ids, outcome

    session, ids, outcome = run(scenario())
    assert outcome.cancelled is False
    body = json.loads(json.dumps(world.requests()[3]))
    text = prompt_text(body)
    assert body["messages"][0] == {"role": "system", "content": prompts.SYSTEM_PROMPT}
    assert body["max_completion_tokens"] == 2048
    conversation = text.split("</conversation>")[0]
    assert "[User]: explore the notes" in conversation
    assert '[Assistant tool calls]: read(path="notes.txt")' in conversation
    assert "[Tool result]" not in conversation  # the call says enough
    assert "first question" not in conversation  # on the path kept
    assert text.endswith(prompts.BRANCH_PROMPT + "\n\nGive particular attention to: mention the notes")

    (entry,) = [e for e in lines_of(session) if e["type"] == "branch_summary"]
    assert (
        entry["summary"]
        == prompts.BRANCH_PREAMBLE + "## Goal\nBRANCH\n\n<read-files>\nnotes.txt\n</read-files>"
    )
    assert entry["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": []}
    assert entry["parentId"] == ids["first_answer"]
    assert "fromHook" not in entry or entry["fromHook"] is False
    kinds = [type(m).__name__ for m in session.messages if m.role != "system"]  # the tool record aside
    assert kinds == ["UserMessage", "AssistantMessage", "BranchSummaryMessage"]


def test_replace_instructions_use_the_users_own_prompt(world, run) -> None:
    async def scenario() -> Any:
        session, ids = await _explored_branch(world, [{"blocks": [{"text": "one line"}]}])
        await session.navigate_tree(
            ids["first_answer"],
            summarize=True,
            custom_instructions="Say it in one line.",
            replace_instructions=True,
        )
        return session

    run(scenario())
    text = prompt_text(world.requests()[3])
    assert text.endswith("</conversation>\n\nSay it in one line.")
    assert "## Goal" not in text


def test_without_summary_no_model_request(world, run) -> None:
    async def scenario() -> Any:
        session, ids = await _explored_branch(world, [])
        await session.navigate_tree(ids["first_answer"])
        return session

    session = run(scenario())
    assert len(world.requests()) == 3
    assert not [e for e in lines_of(session) if e["type"] == "branch_summary"]


# ---------------------------------------------------------------------------
# Preparation
# ---------------------------------------------------------------------------


def test_budget_keeps_the_newest_messages() -> None:
    manager, _ids = branch_of(
        user(words("old", 100)),
        assistant(words("older answer", 100)),
        user(words("new", 100)),
        assistant(words("newest", 100)),
    )
    prepared = prepare_branch_entries(manager.get_branch(), 250)
    assert [m.content[0].text[:3] for m in prepared.messages] == ["new", "new"]
    assert prepared.tokens == 200
    assert len(prepare_branch_entries(manager.get_branch(), 0).messages) == 4  # 0: no limit


def test_a_summary_that_does_not_fit_is_squeezed_in_below_90_percent() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    first = manager.append_message(user(words("u", 10)))
    manager.append_compaction("C" * 400, first, 1)  # 100 tokens
    manager.append_message(user(words("recent", 100)))
    prepared = prepare_branch_entries(manager.get_branch(), 150)
    assert [type(m) for m in prepared.messages] == [CompactionSummaryMessage, UserMessage]
    assert prepared.tokens == 200  # over budget, but the summary counts more than what it replaces
    # above 90% already used: no squeezing
    prepared = prepare_branch_entries(manager.get_branch(), 105)
    assert [type(m) for m in prepared.messages] == [UserMessage]


def test_file_lists_accumulate_over_nested_summaries() -> None:
    manager = SessionManager.in_memory("/tmp/p")
    manager.append_branch_summary("root", "earlier", {"readFiles": ["a.txt"], "modifiedFiles": ["b.txt"]})
    manager.append_branch_summary("root", "by extension", {"readFiles": ["hidden.txt"]}, True)
    manager.append_message(assistant(calls=[call("c", "write", path="c.txt", content="")]))
    manager.append_message(result("c", "ok", name="write"))
    prepared = prepare_branch_entries(manager.get_branch())
    assert prepared.file_ops.details() == {"readFiles": ["a.txt"], "modifiedFiles": ["b.txt", "c.txt"]}
    assert [type(m).__name__ for m in prepared.messages] == [
        "BranchSummaryMessage",
        "BranchSummaryMessage",
        "AssistantMessage",
    ]
    assert isinstance(prepared.messages[0], BranchSummaryMessage)


def test_only_tool_results_means_no_content(world, run) -> None:
    from piko.plugins.compaction.branch_summary import summarize_branch
    from piko.plugins.compaction.summarize import Summarizer

    manager, _ids = branch_of(result("c", "output"))

    async def scenario() -> Any:
        server = world.start_server([])
        world.write_models(server.base_url, 1000)
        from piko.app.application import App

        app = App(cwd=world.project, agent_dir=world.agent_dir).boot()
        model = app.model_registry.find("mock", "mock-1")
        summarizer = Summarizer.for_model(app, model, api_key=None, signal=None)
        return await summarize_branch(manager.get_branch(), summarizer)

    outcome = run(scenario())
    assert outcome == {
        "summary": "No content to summarize",
        "details": {"readFiles": [], "modifiedFiles": []},
    }
    assert world.server.requests == []


def test_branch_summary_failures_and_cancellation(world, run) -> None:
    import asyncio

    import pytest

    from piko.lib.abort import AbortController
    from piko.plugins.compaction.branch_summary import summarize_branch
    from piko.plugins.compaction.summarize import Summarizer
    from piko.plugins.compaction.summarize import SummaryAborted

    manager, _ids = branch_of(user("explore"), assistant("explored"))
    failure = {
        "status": 400,
        "error_body": {"error": {"message": "bad things", "type": "invalid_request_error"}},
    }
    slow = {"blocks": [{"text": "late"}], "headers_delay_s": 5}

    async def scenario() -> Any:
        server = world.start_server([failure, slow])
        world.write_models(server.base_url, 1000)
        from piko.app.application import App

        app = App(cwd=world.project, agent_dir=world.agent_dir).boot()
        model = app.model_registry.find("mock", "mock-1")
        with pytest.raises(RuntimeError, match=r"^Branch summarization failed: .*bad things"):
            await summarize_branch(
                manager.get_branch(), Summarizer.for_model(app, model, api_key=None, signal=None)
            )
        controller = AbortController()
        task = asyncio.ensure_future(
            summarize_branch(
                manager.get_branch(), Summarizer.for_model(app, model, api_key=None, signal=controller.signal)
            )
        )
        while len(server.requests) < 2:
            await asyncio.sleep(0.01)
        controller.abort()
        with pytest.raises(SummaryAborted, match="Branch summarization cancelled"):
            await asyncio.wait_for(task, 3)

    run(scenario())
