"""Token estimates, the summarizer's text form of a conversation, file lists and prompts."""

from __future__ import annotations

import pytest
from builders import assistant
from builders import call
from builders import result
from builders import user

from piko.data.messages import AssistantMessage
from piko.data.messages import BashExecutionMessage
from piko.data.messages import BranchSummaryMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import CustomMessage
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ThinkingContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.data.tokens import context_estimate
from piko.data.tokens import estimate_message_tokens
from piko.lib.text import js_length
from piko.plugins.compaction import prompts
from piko.plugins.compaction.file_ops import FileOps
from piko.plugins.compaction.file_ops import format_file_lists
from piko.plugins.compaction.file_ops import strip_file_lists
from piko.plugins.compaction.serialize import serialize_conversation
from piko.plugins.compaction.serialize import truncate_for_summary

IMAGE = ImageContent(data="aGk=", mime_type="image/png")


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        (UserMessage(content="abcde"), 2),  # ceil(5 / 4)
        (UserMessage(content=[TextContent(text="abcd"), IMAGE]), 1),  # pi counts no image for users
        (ToolResultMessage(content=[TextContent(text="abcd"), IMAGE]), 1201),  # 4 + 4800 characters
        (CustomMessage(content="x" * 8), 2),
        (CustomMessage(content=[IMAGE]), 1200),
        # name (4) + JSON.stringify({"path":"a.txt","n":1.5}) (22)
        (AssistantMessage(content=[ToolCall(name="read", arguments={"path": "a.txt", "n": 1.5})]), 7),
        (AssistantMessage(content=[ThinkingContent(thinking="hmm"), TextContent(text="ok")]), 2),
        (BashExecutionMessage(command="ls", output="a\nb\n"), 2),
        (BranchSummaryMessage(summary="s" * 9), 3),
        (CompactionSummaryMessage(summary=""), 0),
        # UTF-16 length, as JavaScript counts: an emoji is 2, an accented letter 1
        (UserMessage(content="😀é"), 1),
        (UserMessage(content="😀😀😀"), 2),
    ],
)
def test_token_estimates_match_pi(message: object, tokens: int) -> None:
    assert estimate_message_tokens(message) == tokens


def test_js_length_counts_utf16_code_units() -> None:
    assert js_length("abc") == 3
    assert js_length("😀") == 2
    assert js_length("日本") == 2


def test_context_estimate_uses_the_last_valid_usage() -> None:
    ok = AssistantMessage(content=[TextContent(text="x")], usage=Usage(total_tokens=500))
    failed = AssistantMessage(stop_reason="error", usage=Usage(total_tokens=9999))
    after = UserMessage(content="a" * 40)
    estimate = context_estimate([UserMessage(content="hi"), ok, failed, after])
    assert (estimate.tokens, estimate.usage_tokens, estimate.trailing_tokens, estimate.last_usage_index) == (
        510,
        500,
        10,
        1,
    )
    none = context_estimate([UserMessage(content="a" * 8)])
    assert (none.tokens, none.last_usage_index) == (2, None)
    # usage given as parts (no total): input + output + cache
    parts = AssistantMessage(usage=Usage(input=10, output=5, cache_read=3, cache_write=2))
    assert context_estimate([parts]).tokens == 20


def test_serialization_has_pis_shape() -> None:
    messages = [
        user("Fix the bug"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="look first"),
                TextContent(text="Reading."),
                ToolCall(id="c1", name="read", arguments={"path": "src/app.py", "offset": 10}),
                ToolCall(id="c2", name="bash", arguments={"command": 'echo "hi"'}),
            ]
        ),
        result("c1", "line1\nline2"),
        ToolResultMessage(tool_call_id="c2", content=[IMAGE]),  # no text: left out
        BashExecutionMessage(command="make", output="ok", exit_code=0),
        CompactionSummaryMessage(summary="Earlier work"),
        UserMessage(content=[]),  # empty: left out
    ]
    text = serialize_conversation(messages)
    parts = text.split("\n\n")
    assert parts[0] == "[User]: Fix the bug"
    assert parts[1] == "[Assistant thinking]: look first"
    assert parts[2] == "[Assistant]: Reading."
    assert (
        parts[3]
        == '[Assistant tool calls]: read(path="src/app.py", offset=10); bash(command="echo \\"hi\\"")'
    )
    assert parts[4] == "[Tool result]: line1\nline2"
    assert parts[5] == "[User]: Ran `make`\n```\nok\n```"
    assert text.count("[User]: Earlier parts of this conversation") == 1  # summaries read as user text
    assert "Earlier work" in text


def test_tool_results_are_cut_to_2000_characters() -> None:
    long = "x" * 2500
    assert truncate_for_summary(long) == "x" * 2000 + "\n\n[... 500 more characters truncated]"
    assert truncate_for_summary("short") == "short"
    text = serialize_conversation([result("c", long)])
    assert text.endswith("[... 500 more characters truncated]")


def test_file_ops_from_tool_calls_and_details() -> None:
    ops = FileOps()
    ops.add_message(
        assistant(
            calls=[
                call("1", "read", path="b.txt"),
                call("2", "read", path="a.txt"),
                call("3", "edit", path="a.txt", edits=[]),
                call("4", "write", path="new.txt", content=""),
                call("5", "bash", command="cat z.txt"),
                call("6", "read", path=""),
                ToolCall(id="7", name="read", arguments={"path": 5}),
            ]
        )
    )
    ops.add_message(user("read c.txt"))  # only assistant tool calls count
    ops.add_details({"readFiles": ["old.txt", 3], "modifiedFiles": ["changed.txt"]})
    ops.add_details("not a dict")
    assert ops.details() == {
        "readFiles": ["b.txt", "old.txt"],
        "modifiedFiles": ["a.txt", "changed.txt", "new.txt"],
    }


def test_file_lists_format_and_strip() -> None:
    block = format_file_lists(["a.txt"], ["b.txt", "c.txt"])
    assert (
        block == "\n\n<read-files>\na.txt\n</read-files>\n\n<modified-files>\nb.txt\nc.txt\n</modified-files>"
    )
    assert format_file_lists([], ["x"]) == "\n\n<modified-files>\nx\n</modified-files>"
    assert format_file_lists([], []) == ""
    assert strip_file_lists("## Goal\nG" + block) == "## Goal\nG"
    assert strip_file_lists("no lists") == "no lists"


def test_prompts_have_the_summary_sections() -> None:
    sections = [
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ]
    for prompt in (prompts.SUMMARY_PROMPT, prompts.UPDATE_PROMPT):
        positions = [prompt.index(s) for s in sections]
        assert positions == sorted(positions)
    assert "## Critical Context" not in prompts.BRANCH_PROMPT
    assert "<previous-summary>" in prompts.UPDATE_PROMPT
    assert prompts.with_focus("P", None) == "P"
    assert prompts.with_focus("P", "the parser").endswith("\n\nGive particular attention to: the parser")
