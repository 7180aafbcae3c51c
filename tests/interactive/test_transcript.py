"""The transcript: streamed markdown printed block by block, once, exactly as the whole answer renders."""

from __future__ import annotations

import re

import pytest

from piko.plugins.modes.interactive.markdown import split_blocks
from piko.plugins.modes.interactive.theme import builtin_theme
from piko.plugins.modes.interactive.tool_view import ToolView
from piko.plugins.modes.interactive.transcript import BashItem
from piko.plugins.modes.interactive.transcript import MarkdownItem
from piko.plugins.modes.interactive.transcript import RenderContext
from piko.plugins.modes.interactive.transcript import StaticItem
from piko.plugins.modes.interactive.transcript import ToolItem
from piko.plugins.modes.interactive.transcript import Transcript
from piko.plugins.modes.interactive.transcript import join_pieces

ANSWER = """# Title

First paragraph with **bold** and `code`
spanning two lines.

```python
def f(x):
    return x * 2
```

- one
- two

  still item two

1. first
2. second

> quoted
> text

| a | b |
|---|---|
| 1 | 2 |

Last words."""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plain(lines: list[str]) -> list[str]:
    return [_ANSI.sub("", line) for line in lines]


def context(width: int = 60) -> RenderContext:
    return RenderContext(theme=builtin_theme("dark"), color_system="truecolor", width=width)


def whole(ctx: RenderContext, text: str) -> list[str]:
    pieces = [ctx.painter.markdown(tokens, width=ctx.width) for _s, tokens in split_blocks(text)]
    return join_pieces([p for p in pieces if p])


@pytest.mark.parametrize("step", [1, 3, 17])
def test_streamed_markdown_prints_each_block_once_and_matches_the_whole(step: int) -> None:
    ctx = context()
    transcript = Transcript()
    item = MarkdownItem()
    transcript.add(item)
    printed: list[str] = []
    for end in range(0, len(ANSWER) + 1, step):
        item.set_text(ANSWER[:end])
        printed += join_pieces(transcript.pump(ctx))
        # printed and live together always show the answer so far, from its start
        shown = plain(printed + join_pieces(transcript.live_pieces(ctx)))
        assert shown == plain(whole(ctx, ANSWER[:end])) if ANSWER[:end].strip() else shown == []
    item.set_text(ANSWER)
    item.finish()
    printed += join_pieces(transcript.pump(ctx))
    assert len(transcript) == 0
    assert printed == whole(ctx, ANSWER)
    text = "\n".join(plain(printed))
    assert text.count("return x * 2") == 1
    assert text.count("Last words.") == 1


def test_an_unfinished_block_stays_live_until_the_next_one_starts() -> None:
    ctx = context()
    transcript = Transcript()
    item = transcript.add(MarkdownItem())
    assert isinstance(item, MarkdownItem)
    item.set_text("First paragraph.\n\nSecond para")
    printed = plain(join_pieces(transcript.pump(ctx)))
    assert printed == ["", " First paragraph."]
    assert plain(join_pieces(transcript.live_pieces(ctx))) == ["", " Second para"]
    item.set_text("First paragraph.\n\nSecond paragraph.\n\n```\ncode")
    printed = plain(join_pieces(transcript.pump(ctx)))
    assert printed == ["", " Second paragraph."]
    assert "code" in "\n".join(plain(join_pieces(transcript.live_pieces(ctx))))


def test_items_print_in_order_and_wait_for_a_running_tool() -> None:
    ctx = context()
    transcript = Transcript()
    tool = ToolItem(ToolView(tool_call_id="1", name="bash", args={"command": "sleep 1"}))
    transcript.add(tool)
    transcript.add(StaticItem(lambda c: "after the tool"))
    assert transcript.pump(ctx) == []
    assert "after the tool" in "\n".join(plain(join_pieces(transcript.live_pieces(ctx))))
    tool.view.set_result({"content": [{"type": "text", "text": "done"}]}, partial=False)
    tool.done = True
    lines = plain(join_pieces(transcript.pump(ctx)))
    text = "\n".join(lines)
    assert text.index("$ sleep 1") < text.index("done") < text.index("after the tool")
    assert len(transcript) == 0


def test_hidden_thinking_prints_the_label_only() -> None:
    ctx = context()
    ctx.hide_thinking = True
    transcript = Transcript()
    item = transcript.add(MarkdownItem(thinking=True))
    item.set_text("secret reasoning\n\nmore")
    assert plain(join_pieces(transcript.live_pieces(ctx))) == ["", " Thinking..."]
    item.finish()
    assert plain(join_pieces(transcript.pump(ctx))) == ["", " Thinking..."]


def test_bash_item_shows_the_tail_and_the_exit_code() -> None:
    ctx = context()
    item = BashItem("make", spinner=lambda: "*")
    item.append("\n".join(f"out {i}" for i in range(30)) + "\n")
    running = "\n".join(plain(item.live(ctx)[0]))
    assert "$ make" in running and "Running... (escape to cancel)" in running and "out 29" in running
    assert "out 9" not in running  # only the last 20 lines

    class Result:
        exit_code = 2
        cancelled = False
        output = ""
        truncated = False
        full_output_path = None

    item.complete(Result())
    done = "\n".join(plain(item.take(ctx)[0]))
    assert "... 10 more lines (ctrl+o to expand)" in done
    assert "(exit 2)" in done
    ctx.expanded = True
    assert "out 0" in "\n".join(plain(item.render(ctx)))


def test_pumping_for_the_fullscreen_view_draws_nothing_finished() -> None:
    """A resumed session of thousands of messages: fullscreen takes them without drawing them
    (the view draws only what is in view); printed later (a switch to regular), they are whole."""
    ctx = context()
    transcript = Transcript()
    drawn: list[int] = []
    for n in range(50):
        transcript.add(StaticItem(lambda c, n=n: drawn.append(n) or f"message {n}"))
        answer = transcript.add(MarkdownItem())
        answer.set_text(f"answer **{n}**\n\nsecond paragraph")
        answer.finish()
    streaming = transcript.add(MarkdownItem())
    streaming.set_text("first block\n\nstill stream")
    assert transcript.pump(ctx, draw=False) == []
    assert drawn == [] and len(transcript) == 1  # only the streaming answer is left
    printed = "\n".join(plain(join_pieces(transcript.printed_pieces(ctx))))
    assert "message 49" in printed and "answer 49" in printed and "second paragraph" in printed
    assert "first block" in printed and "still stream" not in printed  # its finished block only
