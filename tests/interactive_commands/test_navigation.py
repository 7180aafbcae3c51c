"""/new, /fork, /clone, /tree and /resume on real session files (and the tree rows)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from icmd_harness import label
from icmd_harness import lines_of

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.plugins.modes.interactive.command_api import PickAction
from piko.plugins.modes.interactive.commands.session_picker import format_age
from piko.plugins.modes.interactive.commands.tree_view import initial_row
from piko.plugins.modes.interactive.commands.tree_view import tree_rows
from piko.sessions.manager import SessionManager


def texts(path: str | Path) -> list[tuple[str, str]]:
    """``(role, text)`` of the messages of a session file, in file order."""
    out = []
    for entry in lines_of(path):
        if entry["type"] == "message":
            content = entry["message"].get("content")
            text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
            out.append((entry["message"]["role"], text))
    return out


def reply(text: str) -> dict[str, Any]:
    return {"blocks": [{"text": text}]}


async def two_exchanges(world: Any, extra: list[dict[str, Any]] | None = None) -> Any:
    session = await world.session([reply("first answer"), reply("second answer"), *(extra or [])])
    await session.prompt("first question")
    await session.prompt("second question")
    return session


def test_new_starts_a_fresh_session_file(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context([reply("hi"), reply("fresh")])
        await session.prompt("hello")
        old = session.session_file
        await ctx.run("/new")
        await session.prompt("again")
        return session, ctx, old

    session, ctx, old = run(scenario())
    assert session.session_file != old
    assert texts(old) == [("user", "hello"), ("assistant", "hi")]
    assert texts(session.session_file) == [("user", "again"), ("assistant", "fresh")]
    assert ctx.redraws == 1
    assert ctx.texts("show") == ["✓ New session started"]
    # the model of the previous session carries over
    types = [e["type"] for e in lines_of(session.session_file)]
    assert types[:3] == ["session", "model_change", "thinking_level_change"]


def test_fork_creates_a_session_before_the_chosen_message(world, run) -> None:
    async def scenario() -> Any:
        session = await two_exchanges(world)
        ctx = world.context(session)
        old = session.session_file
        ctx.picks.append(label("second question"))
        await ctx.run("/fork")
        return session, ctx, old

    session, ctx, old = run(scenario())
    title, items, opts = ctx.pick_calls[0]
    assert title.startswith("Fork from Message")
    assert [i.label for i in items] == ["first question", "second question"]
    assert opts["initial"] == items[-1].value
    assert session.session_file != old
    assert ctx.editor == "second question"
    assert ctx.redraws == 1 and ctx.texts("info") == ["Forked to new session"]
    header = lines_of(session.session_file)[0]
    assert header["parentSession"] == old
    assert texts(session.session_file) == [("user", "first question"), ("assistant", "first answer")]
    assert [type(m).__name__ for m in session.messages] == ["UserMessage", "AssistantMessage"]
    assert texts(old)[-1] == ("assistant", "second answer")


def test_fork_and_clone_with_nothing_to_copy(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session(options={"no_session": True})
        session.session_manager.reset_leaf()
        ctx = world.context(session)
        await ctx.run("/fork")
        await ctx.run("/clone")
        return ctx

    ctx = run(scenario())
    assert ctx.texts("info") == ["No messages to fork from", "Nothing to clone yet"]


def test_clone_copies_the_whole_branch(world, run) -> None:
    async def scenario() -> Any:
        session = await two_exchanges(world)
        ctx = world.context(session)
        old = session.session_file
        ctx.editor = "draft"
        await ctx.run("/clone")
        return session, ctx, old

    session, ctx, old = run(scenario())
    assert session.session_file != old
    assert texts(session.session_file) == texts(old)
    assert ctx.editor == "" and ctx.texts("info") == ["Cloned to new session"]


def test_tree_moves_the_leaf_and_writes_the_branch_summary(world, run) -> None:
    async def scenario() -> Any:
        session = await two_exchanges(world, [reply("## Goal\nTHE BRANCH SUMMARY")])
        ctx = world.context(session)
        ctx.picks.append(label("assistant: first answer"))
        ctx.ui.script("select", "Summarize")
        await ctx.run("/tree")
        return session, ctx

    session, ctx = run(scenario())
    title, items, opts = ctx.pick_calls[0]
    assert title == "Session Tree"
    assert [i.label for i in items] == [
        "• user: first question",
        "• assistant: first answer",
        "• user: second question",
        "• assistant: second answer",
    ]
    assert [i.depth for i in items] == [0, 0, 0, 0]
    assert [i.current for i in items] == [False, False, False, True]
    assert opts["initial"] == items[-1].value
    assert ctx.ui.calls[0][:2] == ("select", "Summarize branch?")
    lines = lines_of(session.session_file)
    summary = lines[-1]
    assert summary["type"] == "branch_summary"
    assert "THE BRANCH SUMMARY" in summary["summary"]
    first_answer = next(e for e in lines if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert summary["parentId"] == first_answer["id"]
    assert session.session_manager.get_leaf_id() == summary["id"]
    assert ctx.redraws == 1
    assert ctx.texts("info") == ["Summarizing branch...", "Navigated to selected point"]
    # the summarization request went to the model
    assert len(world.requests()) == 3


def test_tree_to_a_user_message_puts_its_text_in_the_editor(world, run) -> None:
    async def scenario() -> Any:
        session = await two_exchanges(world)
        ctx = world.context(session)
        ctx.picks.append(label("user: second question"))
        ctx.ui.script("select", "No summary")
        await ctx.run("/tree")
        # a new prompt now starts a second branch
        world.server.add_turns([reply("other answer")])
        await session.prompt("another question")
        ctx.picks.append(None)
        await ctx.run("/tree")
        return session, ctx

    _session, ctx = run(scenario())
    assert ctx.editor == "second question"
    assert len(world.requests()) == 3  # no summary requested
    _title, items, _opts = ctx.pick_calls[1]
    assert [(i.depth, i.label) for i in items] == [
        (0, "• user: first question"),
        (0, "• assistant: first answer"),
        (1, "• user: another question"),
        (2, "• assistant: other answer"),  # pi: the first generation after a branch is indented once more
        (1, "user: second question"),
        (2, "assistant: second answer"),
    ]
    assert [i.label for i in items if i.current] == ["• assistant: other answer"]


def test_tree_escape_from_the_summary_question_returns_to_the_tree(world, run) -> None:
    async def scenario() -> Any:
        session = await two_exchanges(world, [reply("## Goal\nCUSTOM")])
        ctx = world.context(session)
        leaf = session.session_manager.get_leaf_id()
        ctx.picks.extend([label("user: second question"), label("assistant: first answer")])
        ctx.ui.script("select", None, "Summarize with custom prompt", "Summarize with custom prompt")
        ctx.ui.script("editor", None, "Mention the second question")
        await ctx.run("/tree")
        return session, ctx, leaf

    session, ctx, leaf = run(scenario())
    # back to the tree on the entry chosen, then a cancelled editor asks again
    assert ctx.pick_calls[1][2]["initial"] == ctx.pick_calls[0][1][2].value
    assert [c[0] for c in ctx.ui.calls] == ["select", "select", "editor", "select", "editor"]
    body = world.requests()[2]
    assert "Mention the second question" in json.dumps(body)
    assert lines_of(session.session_file)[-1]["type"] == "branch_summary"
    assert session.session_manager.get_leaf_id() != leaf


def test_tree_on_the_current_leaf_and_with_skip_prompt(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session(
            [reply("first answer"), reply("second answer")], settings={"branchSummary": {"skipPrompt": True}}
        )
        await session.prompt("first question")
        await session.prompt("second question")
        ctx = world.context(session)
        ctx.picks.extend([label("assistant: second answer"), label("assistant: first answer")])
        await ctx.run("/tree")
        await ctx.run("/tree")
        return session, ctx

    session, ctx = run(scenario())
    assert ctx.texts("info") == ["Already at this point", "Navigated to selected point"]
    assert not ctx.ui.calls
    assert lines_of(session.session_file)[-1]["type"] == "message"


def test_tree_of_an_empty_session(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context(options={"no_session": True})
        # a fresh session holds only its model and thinking level entries; the default filter would hide
        # everything, so every entry is shown
        ctx.picks.append(None)
        await ctx.run("/tree")
        empty = world.context(session)
        session.session_manager = SessionManager.in_memory(str(world.project))
        await empty.run("/tree")
        return ctx, empty

    ctx, empty = run(scenario())
    assert [i.label for i in ctx.pick_calls[0][1]] == ["• [model: mock-1]", "• [thinking: off]"]
    assert empty.texts("info") == ["No entries in session"]


def test_tree_rows_name_entries_as_pi_does() -> None:
    manager = SessionManager.in_memory("/work")
    manager.append_model_change("mock", "mock-1")
    user = manager.append_message(UserMessage(content="read the file\nplease", timestamp=1))
    call = ToolCall(id="c1", name="read", arguments={"path": "a.py", "offset": 10, "limit": 5})
    manager.append_message(AssistantMessage(content=[call], stop_reason="toolUse", timestamp=2))
    manager.append_message(ToolResultMessage(tool_call_id="c1", tool_name="read", timestamp=3))
    answer = manager.append_message(AssistantMessage(content=[TextContent(text="done")], timestamp=4))
    manager.append_label(user, "start")
    manager.append_compaction("x", answer, 12345)
    aborted = manager.append_message(AssistantMessage(content=[], stop_reason="aborted", timestamp=5))
    rows = tree_rows(manager)
    assert [r.text for r in rows] == [
        "• [start] user: read the file please",
        "• [read: a.py:10-14]",
        "• assistant: done",
        "• [compaction: 12k tokens]",
        "• assistant: (aborted)",
    ]
    assert initial_row(manager, rows) == aborted
    assert [r.text for r in tree_rows(manager, "user-only")] == ["• [start] user: read the file please"]
    assert [r.text for r in tree_rows(manager, "labeled-only")] == ["• [start] user: read the file please"]
    assert "• [label: start]" in [r.text for r in tree_rows(manager, "all")]
    assert "• [read: a.py:10-14]" not in [r.text for r in tree_rows(manager, "no-tools")]
    # the leaf on a hidden entry: the nearest shown ancestor is where the selector starts
    manager.append_model_change("other", "other-1")
    assert initial_row(manager, tree_rows(manager)) == aborted


def test_resume_switches_files_and_scopes(world, run, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def scenario() -> Any:
        other_project = await world.session([reply("far away")], cwd=elsewhere)
        await other_project.prompt("question elsewhere")
        session = await world.session([reply("answer A"), reply("answer B")])
        await session.prompt("question A")
        first = session.session_file
        await session.new_session()
        await session.prompt("question B")
        session.set_session_name("Named B")
        ctx = world.context(session)
        ctx.picks.extend([label("question A")])
        await ctx.run("/resume")
        after_first = session.session_file
        ctx.picks.extend([PickAction(name="scope"), label("question elsewhere")])
        await ctx.run("/resume")
        return session, ctx, first, after_first, other_project.session_file

    session, ctx, first, after_first, far_file = run(scenario())
    title, items, _opts = ctx.pick_calls[0]
    assert title == "Resume Session (Current Folder)"
    assert ctx.pick_calls[0][2]["header_text"].startswith(
        "◉ Current Folder | ○ All  Name: All  Sort: Threaded"
    )
    assert [i.label for i in items] == ["Named B", "question A"]  # the newest first, no scope row
    assert items[0].current and not items[1].current
    assert items[1].detail == "2 now"
    assert after_first == first
    assert [type(m).__name__ for m in session.messages][:2] == ["UserMessage", "AssistantMessage"]
    assert "Resumed session" in ctx.texts("info")
    all_title, all_items, _ = ctx.pick_calls[2]
    assert all_title == "Resume Session (All)"
    assert {i.label for i in all_items} == {"Named B", "question A", "question elsewhere"}
    far_row = next(i for i in all_items if i.label == "question elsewhere")
    assert far_row.detail.endswith("2 now") and str(elsewhere.name) in far_row.detail
    assert session.session_file == far_file
    assert session.cwd == str(elsewhere)


def test_pick_session_at_startup_with_a_pick_function(world, run) -> None:
    from piko.plugins.modes.interactive.commands import pick_session_at_startup

    async def scenario() -> Any:
        session = await world.session([reply("answer A")])
        await session.prompt("question A")
        seen: list[Any] = []

        async def pick(title: str, items: list[Any], **opts: Any) -> Any:
            seen.append((title, [i.label for i in items]))
            return items[0].value

        chosen = await pick_session_at_startup(session.app, pick)
        return session, chosen, seen

    session, chosen, seen = run(scenario())
    assert chosen == session.session_file
    assert seen == [("Resume Session (Current Folder)", ["question A"])]


def test_terminal_pick_filters_moves_and_cancels() -> None:
    import asyncio

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from piko.plugins.modes.interactive.command_api import PickItem
    from piko.plugins.modes.interactive.commands.session_picker import terminal_pick

    items = [PickItem(label=name, value=i) for i, name in enumerate(["alpha", "beta", "gamma", "delta"])]

    async def choose(keys: str, **kwargs: Any) -> Any:
        with create_pipe_input() as pipe:
            pipe.send_text(keys)
            return await terminal_pick("Pick", items, input=pipe, output=DummyOutput(), **kwargs)

    assert asyncio.run(choose("\x1b[B\x1b[B\r")) == 2
    assert asyncio.run(choose("\x1b[A\r")) == 3  # wraps to the last row
    assert asyncio.run(choose("elt\r")) == 3
    assert asyncio.run(choose("\r", initial=1)) == 1
    assert asyncio.run(choose("\x03")) is None
    assert asyncio.run(choose("zzz\r")) is None


def test_tree_rows_with_two_roots_put_the_active_one_first() -> None:
    manager = SessionManager.in_memory("/work")
    manager.append_message(UserMessage(content="old start", timestamp=1))
    manager.append_message(AssistantMessage(content=[TextContent(text="old answer")], timestamp=2))
    manager.reset_leaf()
    manager.append_message(UserMessage(content="new start", timestamp=3))
    leaf = manager.append_message(AssistantMessage(content=[TextContent(text="new answer")], timestamp=4))
    rows = tree_rows(manager)
    assert [(r.depth, r.text) for r in rows] == [
        (0, "• user: new start"),
        (1, "• assistant: new answer"),
        (0, "user: old start"),
        (1, "assistant: old answer"),
    ]
    assert initial_row(manager, rows) == leaf


def test_resume_of_a_damaged_file_shows_each_line_left_out(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([reply("answer A"), reply("answer B")])
        await session.prompt("question A")
        damaged = Path(session.session_file)
        lines = damaged.read_text().splitlines(keepends=True)
        assistant_line = next(n for n, line in enumerate(lines, 1) if '"role":"assistant"' in line)
        cut = lines[assistant_line - 1].index('"content"') + 4
        lines[assistant_line - 1] = (
            lines[assistant_line - 1][:cut] + "\x00BROKEN" + lines[assistant_line - 1][cut + 7 :]
        )
        damaged.write_text("".join(lines) + "not json\n")
        await session.new_session()
        await session.prompt("question B")
        ctx = world.context(session)
        ctx.picks.extend([label("question A")])
        await ctx.run("/resume")
        return ctx, damaged, assistant_line, len(lines) + 1

    ctx, damaged, assistant_line, junk_line = run(scenario())
    warnings = ctx.texts("warning")
    assert any(w.startswith(f"{damaged}:{junk_line}: ") and "line skipped" in w for w in warnings)
    assert any(w.startswith(f"{damaged}:{assistant_line}: ") and "unreadable message" in w for w in warnings)


def test_tree_to_a_branch_with_a_damaged_message_shows_what_was_left_out(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session(
            [reply("first answer"), reply("second answer"), reply("third answer")],
            settings={"branchSummary": {"skipPrompt": True}},
        )
        await session.prompt("first question")
        await session.prompt("second question")
        ctx = world.context(session)
        ctx.picks.extend([label("assistant: first answer")])
        await ctx.run("/tree")
        await session.prompt("third question")
        path = Path(session.session_file)
        lines = path.read_text().splitlines(keepends=True)
        number = next(n for n, line in enumerate(lines, 1) if "second answer" in line)
        cut = lines[number - 1].index('"content"') + 4
        lines[number - 1] = lines[number - 1][:cut] + "\x00BROKEN" + lines[number - 1][cut + 7 :]
        path.write_text("".join(lines))
        await session.switch_session(str(path))  # read again: the other branch is not parsed yet
        ctx.picks.extend([label("[unreadable line]")])
        await ctx.run("/tree")
        return ctx, path, number

    ctx, path, number = run(scenario())
    assert any(w.startswith(f"{path}:{number}: ") and "unreadable message" in w for w in ctx.texts("warning"))


def test_resume_selector_sorts_filters_named_renames_and_deletes(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([reply("answer A"), reply("answer B"), reply("answer C")])
        await session.prompt("question A")
        first = session.session_file
        await session.new_session()
        await session.prompt("question B")
        second = session.session_file
        await session.new_session()
        await session.prompt("question C")
        ctx = world.context(session)
        ctx.ui.script("input", "Renamed A")
        ctx.ui.script("confirm", True)
        ctx.picks.extend(
            [
                PickAction(name="sort", value=first),
                PickAction(name="named", value=first),
                PickAction(name="named", value=None),
                PickAction(name="rename", value=first, query="quest"),
                PickAction(name="delete", value=second),
                PickAction(name="delete", value=session.session_file),
                None,
            ]
        )
        await ctx.run("/resume")
        return session, ctx, first, second

    session, ctx, first, second = run(scenario())
    headers = [opts["header_text"].split("\n")[0] for _t, _i, opts in ctx.pick_calls]
    assert headers[0].endswith("Name: All  Sort: Threaded")
    assert headers[1].endswith("Name: All  Sort: Recent")
    assert headers[2].endswith("Name: Named  Sort: Recent")
    assert [i.label for i in ctx.pick_calls[2][1]] == []  # no session has a name yet
    # the selection and the query survive an action
    assert ctx.pick_calls[1][2]["initial"] == first
    assert ctx.pick_calls[4][2]["query"] == "quest"
    assert "Renamed A" in [i.label for i in ctx.pick_calls[4][1]]
    assert "ctrl+d delete" in ctx.pick_calls[0][2]["header_text"]
    import os

    assert not os.path.exists(second)  # deleted after the confirmation
    assert os.path.exists(session.session_file)  # the active session is never deleted
    assert ("error", "Cannot delete the currently active session") in ctx.ui.notices
    assert "question B" not in [i.label for i in ctx.pick_calls[-1][1]]


def test_tree_selector_folds_labels_and_switches_filters(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([reply("first answer"), reply("second answer")])
        await session.prompt("first question")
        await session.prompt("second question")
        manager = session.session_manager
        first_user = next(
            e.id for e in manager.get_entries() if e.type == "message" and e.message.ROLE == "user"
        )
        ctx = world.context(session)
        ctx.ui.script("input", "start here")
        ctx.picks.extend(
            [
                PickAction(name="filter:user-only", value=first_user),
                PickAction(name="filter:user-only", value=first_user),
                PickAction(name="label", value=first_user),
                PickAction(name="fold", value=first_user),
                PickAction(name="unfold", value=first_user),
                None,
            ]
        )
        await ctx.run("/tree")
        return session, ctx, first_user

    session, ctx, first_user = run(scenario())
    calls = ctx.pick_calls
    # pi 1.6: the filter after the (n/N) counter, nothing for the default one
    assert [opts["status"]() for _t, _i, opts in calls[:3]] == ["", " [user]", ""]
    assert [i.label for i in calls[1][1]] == ["• user: first question", "• user: second question"]
    assert "• [start here] user: first question" in [i.label for i in calls[3][1]]
    assert session.session_manager.get_label(first_user) == "start here"
    folded = [i.label for i in calls[4][1]]
    assert folded == ["⊞ • [start here] user: first question"]  # everything under it is folded away
    assert len(calls[5][1]) == len(calls[3][1])  # unfolded again
    # pi 1.6's help under the title (each action's first key) and its search prompt
    assert calls[0][2]["header_text"] == (
        " ↑/↓ move · pgup/pgdn page · ctrl+←/→ branch · shift+l label\n"
        " filters ctrl+d/t/u/l/a · cycle ctrl+o/shift+ctrl+o"
    )
    assert calls[0][2]["search_prompt"] == "  Type to search: "


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-5, "now"),
        (59, "now"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h"),
        (86399, "23h"),
        (86400, "1d"),
        (7 * 86400 - 1, "6d"),
        (7 * 86400, "1w"),
        (30 * 86400 - 1, "4w"),
        (30 * 86400, "1mo"),
        (365 * 86400 - 1, "12mo"),
        (365 * 86400, "1y"),
        (3 * 365 * 86400 + 5, "3y"),
    ],
)
def test_resume_list_shows_session_ages_as_pi_does(seconds: int, shown: str) -> None:
    now = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)
    assert format_age(now - datetime.timedelta(seconds=seconds), now) == shown


def test_tree_search_keeps_the_selection_as_pi16_does() -> None:
    """pi 1.6's /tree search: matches in tree order, the selection on the selected row or its nearest
    shown ancestor (else the last row), remembered while nothing matches, and kept when cleared."""
    import asyncio

    from piko.plugins.modes.interactive.command_api import PickItem
    from piko.plugins.modes.interactive.dialogs import SelectPanel

    labels = ["user: alpha one", "assistant: beta", "user: alpha two", "assistant: gamma"]
    parents = {1: 0, 2: 1, 3: 2}  # one branch: each row's parent is the row above

    def ancestors(value: int) -> list[int]:
        chain = []
        while value in parents:
            value = parents[value]
            chain.append(value)
        return chain

    async def scenario() -> list[tuple[list[str], str | None]]:
        items = [PickItem(label=label, value=n) for n, label in enumerate(labels)]
        panel = SelectPanel("Session Tree", items, initial=3, ancestors=ancestors, status=lambda: "")
        seen = []
        for text in ("a", "alpha", "alpha t", "", "zzz", "", "beta", "zzz", "", "gamma"):
            panel.query.text = text
            selected = panel.shown[panel.index].label if panel.shown else None
            seen.append(([i.label for i in panel.shown], selected))
        return seen

    seen = asyncio.run(scenario())
    everything = labels
    assert seen == [
        (labels, "assistant: gamma"),  # "a" is in every row: the selection stays
        (["user: alpha one", "user: alpha two"], "user: alpha two"),  # the nearest ancestor, not the first
        (["user: alpha two"], "user: alpha two"),
        (everything, "user: alpha two"),  # cleared: where the search left it
        ([], None),
        (everything, "user: alpha two"),  # nothing matched: the selection from before
        (["assistant: beta"], "assistant: beta"),  # alpha two's parent, the nearest ancestor shown
        ([], None),
        (everything, "assistant: beta"),
        (["assistant: gamma"], "assistant: gamma"),  # none of beta's line shown: the last row
    ]
