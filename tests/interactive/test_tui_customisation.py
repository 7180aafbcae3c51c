"""TUI customisation by a real extension (``tui_custom_ext.py``) in tmux: autocomplete providers,
raw terminal input, widget truncation, the working indicator, wrapping editors, ``open_terminal``."""

from __future__ import annotations

import re

import pytest

BOTH_MODES = pytest.mark.parametrize("tui_mode", ["regular", "fullscreen"])
LONG = "\n\n".join(f"Paragraph {i}: " + "words " * 30 for i in range(60))


@BOTH_MODES
def test_autocomplete_provider_with_a_trigger_character(ready):
    t = ready("tui_custom_ext.py")
    t.type("see #")  # the trigger character opens the menu by itself
    screen = t.wait_for(r"→ #2983\s+Extension API for autocomplete")
    assert "#2753" in screen
    t.type("27")
    screen = t.wait_for(r"→ #2753")
    assert "#2983" not in screen
    t.keys("Tab")
    t.wait_for(r"^see #2753\s*$")
    t.keys("C-u")
    t.type("/lon")  # the built-in provider still answers below it
    t.wait_for(r"→ long-widget\s+A widget of many lines")


def test_terminal_input_listener_consumes_and_replaces_keys(ready):
    t = ready("tui_custom_ext.py")
    t.submit("/keys-on")
    t.wait_for(r"listening to keys")
    t.type("a%b~c")
    t.wait_for(r"^abtildec\s*$")
    t.keys("C-u")
    t.submit("/keys-off")
    t.wait_for(r"not listening")
    t.type("x%y~z")
    t.wait_for(r"^x%y~z\s*$")


@BOTH_MODES
def test_a_widget_of_many_lines_is_cut_at_ten_with_a_notice(ready):
    t = ready("tui_custom_ext.py")
    t.submit("/long-widget 15")
    screen = t.wait_for(r"\.\.\. \(widget truncated\)")
    assert "row 09" in screen and "row 10" not in screen
    t.submit("/long-widget 10")
    screen = t.wait_for(lambda s: "row 09" in s and "widget truncated" not in s)
    assert "row 10" not in screen


def test_working_indicator_frames_and_hidden_indicator(ready):
    turns = [{"blocks": [{"text": LONG}]}, {"blocks": [{"text": LONG}]}, {"blocks": [{"text": "done"}]}]
    t = ready("tui_custom_ext.py", turns=turns, tokens_per_second=150)
    t.submit("/indicator")
    t.wait_for(r"indicator on")
    t.submit("Write a lot")
    screen = t.wait_for(r"<[*+]> Working\.\.\.")
    assert not re.search(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working", screen)
    t.keys("Escape")
    t.wait_for(lambda s: "Operation aborted" in s and "Working..." not in s)
    t.submit("/indicator none")
    t.wait_for(r"indicator none")
    t.submit("More")
    screen = t.wait_for(r"^ Working\.\.\.", timeout=10)
    assert "<*>" not in screen and "<+>" not in screen
    t.keys("Escape")
    t.wait_for(lambda s: "Operation aborted" in s and "Working..." not in s)
    t.submit("/indicator off")
    t.wait_for(r"indicator off")
    t.submit("Last")
    t.wait_for(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working|^ done")


def test_an_editor_component_wraps_the_one_before(ready):
    t = ready("tui_custom_ext.py")
    t.submit("/framed")
    t.wait_for(r"^={100}$")
    t.submit("/wrap")
    screen = t.wait_for(r"wrapping the previous editor")
    assert re.search(r"^={100}$", screen, re.M)
    t.type("still typing here")
    t.wait_for(r"^still typing here")


def test_open_terminal_runs_a_command_in_a_new_tmux_window(ready, tmp_path):
    marker = tmp_path / "launched.txt"
    t = ready("tui_custom_ext.py", inside_tmux=True)
    t.submit(f"/launch {marker}")
    t.wait_for(r"launched @\d+")
    t.wait_for(lambda _s: marker.exists() and "launched from piko" in marker.read_text())
    t.submit("/launch-bad zellij")
    t.wait_for(r"refused TerminalLaunchError: zellij pane launch \(not supported by piko\) failed")
    t.submit("/launch-bad nosuch")
    t.wait_for(r"refused TypeError: open_terminal: unknown multiplexer 'nosuch'")


def test_omp_style_tool_renderers_draw_the_call_and_result(ready):
    turns = [
        {"blocks": [{"tool_call": {"name": "echo_omp", "arguments": {"text": "hello"}}}]},
        {"blocks": [{"text": "echoed"}]},
    ]
    t = ready("tui_custom_ext.py", turns=turns)
    t.submit("echo it")
    screen = t.wait_for(r"OMP RESULT for hello expanded=False")
    assert "OMP CALL hello" in screen


@BOTH_MODES
def test_thinking_renderers_draw_below_each_visible_thinking_block(ready):
    thought = "Considering the request."
    turns = [{"blocks": [{"thinking": thought}, {"text": "The answer."}]}]
    t = ready("tui_custom_ext.py", turns=turns)
    t.submit("think")
    screen = t.wait_for(r"The answer\.")
    lines = [line.strip() for line in screen.split("\n")]
    at = lines.index(thought)
    assert lines[at + 1 : at + 5] == ["", f"thinking chars: {len(thought)}", "", "block 0 / thinking 0"], (
        screen
    )
    assert lines.index("The answer.") > at + 4
    t.keys("C-t")  # thinking hidden: its renderers go with it
    t.wait_for(lambda s: "Thinking blocks: hidden" in s and "thinking chars" not in s)


@BOTH_MODES
def test_markdown_transformers_change_what_is_drawn_not_the_message(ready):
    turns = [{"blocks": [{"thinking": "quiet thought"}, {"text": "step one --> step two"}]}]
    t = ready("markdown_ext.py", "markdown_only_ext.py", turns=turns)
    t.submit("look :warning: here")
    screen = t.wait_for(r"step one → step two")
    assert "QUIET THOUGHT" in screen and "look [WARN] here" in screen
    assert "replaced before use" not in screen and "CHANGELOG ONLY" not in screen
    t.submit("/say left --> right")
    t.wait_for(r"left → right")
    t.submit("/seen")
    t.wait_for(r"seen \['assistant', 'assistant-thinking', 'custom', 'user'\]")
    session = next((t.agent / "sessions").rglob("*.jsonl")).read_text()
    assert "step one --> step two" in session and "→" not in session


def test_entry_renderers_draw_custom_entries_live_and_when_continued(term, ready):
    turns = [{"blocks": [{"text": "First answer."}]}, {"blocks": [{"text": "Second answer."}]}]
    t = ready("tui_custom_ext.py", turns=turns)
    t.submit("first question")
    t.wait_for(r"First answer\.")
    t.submit("/card Indexed files")
    t.wait_for(r"CARD Indexed files: 17$")
    t.submit("/plain-entry")
    t.submit("second question")
    t.wait_for(r"Second answer\.")
    t.close()
    again = term(start=False, extensions=["tui_custom_ext.py"])
    again.root = t.root
    again.home, again.agent, again.work = t.home, t.agent, t.work
    again.start([*again.args, "--continue"])
    again.wait_ready()
    history = again.wait_for(r"Second answer\.", scrollback=True)
    order = [history.rindex(text) for text in ("First answer.", "CARD Indexed files: 17", "second question")]
    assert order == sorted(order), history
