"""Slash commands, completion, extension dialogs, statuses, widgets, shortcuts and renderers."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from scripted_turns import TWELVE_ECHOES
from scripted_turns import bash_then_answer
from support.dialogs_extension import PATH as DIALOGS
from tmux_terminal import Terminal

BOTH_MODES = pytest.mark.parametrize("tui_mode", ["regular", "fullscreen"])


@pytest.fixture
def ui(ready: Callable[..., Terminal]) -> Terminal:
    """piko with ``ui_ext.py`` and the dialogs extension, whose commands most tests here drive."""
    return ready("ui_ext.py", str(DIALOGS))


def test_slash_opens_completion_and_filters(ui):
    ui.type("/")
    screen = ui.wait_for(r"→ \S+")
    ui.save("slash-menu")
    assert re.search(r"\(1/\d+\)", screen)
    ui.type("pic")
    screen = ui.wait_for(r"→ pick\s+Pick from a list")
    ui.keys("Tab")
    ui.wait_for(r"^/pick\s*$")
    ui.keys("C-u")
    ui.type("/colour ")
    ui.wait_for(r"→ red")
    ui.type("g")
    screen = ui.wait_for(r"→ green")
    assert "red" not in screen.split("→ green")[1]
    ui.keys("Enter")
    ui.wait_for(r"colour green")


@BOTH_MODES
def test_extension_select_confirm_input_and_editor_dialogs(ui):
    ui.submit("/pick")
    screen = ui.wait_for(r"Pick one")
    ui.save("select")
    assert "→ alpha" in screen and "↑↓ navigate" in screen
    ui.keys("Down", "Down")
    ui.wait_for(r"→ gamma")
    ui.keys("Enter")
    ui.wait_for(r"picked 'gamma'")

    ui.submit("/sure")
    ui.wait_for(r"Really do it\?")
    ui.keys("Escape")
    ui.wait_for(r"Warning: confirmed False")

    ui.submit("/ask")
    ui.wait_for(r"e\.g\. Ada")
    ui.type("Grace")
    ui.keys("Enter")
    ui.wait_for(r"name 'Grace'")

    ui.submit("/secret")
    ui.wait_for(r"Your token")
    ui.type("hunter2")
    screen = ui.wait_for(r"\*{7}")
    assert "hunter2" not in screen  # typed text is masked
    ui.keys("Enter")
    ui.wait_for(r"token has 7 characters")

    ui.submit("/edit-it")
    ui.wait_for(r"Edit the text")
    ui.keys("End")
    ui.type(" and more")
    ui.keys("Enter")
    ui.wait_for(r"edited 'prefilled and more'")


def test_dialog_timeout_counts_down_and_cancels(ui):
    ui.submit("/quick")
    ui.wait_for(r"Quick! \(\ds\)")
    screen = ui.wait_for(r"Error: timed out with None", timeout=10)
    assert "Quick!" not in screen.split("Error: timed out")[1]


@BOTH_MODES
def test_status_widgets_editor_text_and_custom_message(ui):
    ui.submit("/decorate")
    screen = ui.wait_for(r"ext-status-on")
    ui.save("widgets")
    lines = screen.split("\n")
    border = [i for i, line in enumerate(lines) if re.fullmatch(r"─{100}", line)]
    above = lines.index(" widget line one") if " widget line one" in lines else lines.index("widget line one")
    below = next(i for i, line in enumerate(lines) if "below the editor" in line)
    assert above < border[0] and below > border[-1]
    assert lines[-1].strip() == "" or "ext-status-on" in "\n".join(lines[-4:])
    ui.submit("/undecorate")
    ui.wait_for(lambda s: "ext-status-on" not in s and "widget line one" not in s)
    ui.submit("/fill")
    ui.wait_for(r"^text from the extension", timeout=10)
    ui.keys("C-u")
    ui.submit("/note hello renderer")
    ui.wait_for(r"NOTE>> hello renderer")


@BOTH_MODES
def test_shortcut_runs_and_reserved_key_is_refused(ui):
    assert "shortcut 'ctrl+t' is reserved" in ui.history()
    ui.keys("M-x")
    ui.wait_for(r"shortcut fired")
    ui.keys("C-t")
    screen = ui.wait_for(r"Thinking blocks: hidden")
    assert "must not fire" not in screen


@BOTH_MODES
def test_custom_components_overlays_footer_and_editor(ui, tui_mode):
    ui.submit("/panel")
    screen = ui.wait_for(r"custom panel: press q")
    assert not re.search(r"^─{100}$", screen, re.M)  # in place of the editor
    ui.type("q")
    ui.wait_for(r"custom panel closed")
    ui.submit("/overlay")
    screen = ui.wait_for(r"floating overlay: press q")
    ui.save("overlay")
    if tui_mode == "fullscreen":  # floating over the transcript, the editor still below
        assert re.search(r"^─{100}$", screen, re.M), screen
    ui.type("q")
    ui.wait_for(r"floating overlay closed")
    ui.submit("/footer")
    screen = ui.wait_for(r"custom footer 100")
    assert "(auto)" not in screen
    ui.submit("/footer off")
    ui.wait_for(r"\(auto\)")
    ui.submit("/framed")
    screen = ui.wait_for(r"^={100}$")
    ui.type("typed in the framed editor")
    screen = ui.wait_for(r"typed in the framed editor")
    assert not re.search(r"^─{100}$", screen, re.M), screen
    ui.keys("C-u")
    ui.submit("/framed off")
    ui.wait_for(lambda s: "=" * 100 not in s and re.search(r"^─{100}$", s, re.M))


def test_templates_skills_and_unknown_commands_reach_the_model(term):
    turns = [
        {"blocks": [{"text": "reply one"}]},
        {"blocks": [{"text": "reply two"}]},
        {"blocks": [{"text": "reply three"}]},
    ]
    t = term(
        turns=turns,
        agent_files={
            "prompts/review.md": "---\ndescription: Review code\n---\nPlease review $1 carefully.",
            "skills/greeter/SKILL.md": "---\nname: greeter\ndescription: Greets people\n---\nSay hello nicely.",
        },
    )
    screen = t.wait_ready()
    assert "[Skills]" in screen and "greeter" in screen
    assert "[Prompts]" in screen and "/review" in screen
    t.submit("/review main.py")
    t.wait_for(r"reply one")
    assert "Please review main.py carefully." in t.history()
    t.submit("/skill:greeter now")
    t.wait_for(r"reply two")
    history = t.history()
    assert "[skill] greeter" in history
    t.submit("/nosuchcommand here")
    t.wait_for(r"reply three")
    assert "/nosuchcommand here" in t.history()


def test_builtin_commands_model_tree_and_double_escape(term):
    turns = [{"blocks": [{"text": "first reply"}]}, {"blocks": [{"text": "second reply"}]}]
    t = term(turns=turns)
    t.wait_ready()
    t.submit("/hotkeys")
    t.wait_for(r"Keyboard Shortcuts", scrollback=True)
    t.submit("one")
    t.wait_for(r"first reply")
    t.submit("two")
    t.wait_for(r"second reply")
    t.keys("Escape")
    time.sleep(0.15)
    t.keys("Escape")
    screen = t.wait_for(r"Session Tree")
    t.save("tree")
    assert "user: one" in screen and "user: two" in screen
    t.keys("Escape")
    t.wait_for(lambda s: "Session Tree" not in s)
    t.submit("/tree")
    t.wait_for(r"Session Tree")
    t.keys("Escape")
    t.wait_for(lambda s: "Session Tree" not in s)
    t.keys("C-l")
    t.wait_for(r"No models available|Select model")
    t.save("model")


def test_large_paste_collapses_to_a_marker(term):
    t = term(turns=[{"blocks": [{"text": "got it"}]}])
    t.wait_ready()
    pasted = "\n".join(f"pasted line {i}" for i in range(30))
    t.paste(pasted)
    screen = t.wait_for(r"\[paste #1 \+30 lines\]")
    assert "pasted line 5" not in screen
    t.keys("Enter")
    t.wait_for(r"got it")
    history = t.history()
    assert "pasted line 0" in history and "pasted line 29" in history


def test_keybindings_json_rebinds_an_action(term):
    t = term(agent_files={"keybindings.json": '{"app.thinking.toggle": ["ctrl+y"]}'})
    t.wait_ready()
    t.keys("C-y")
    t.wait_for(r"Thinking blocks: hidden")


def test_ctrl_o_shows_full_tool_output(term):
    t = term(turns=bash_then_answer(TWELVE_ECHOES, "ran it"))
    t.wait_ready()
    t.submit("run")
    t.wait_for(r"ran it")
    history = t.history()
    assert "earlier lines, ctrl+o to expand)" in history
    shown = history.split("earlier lines, ctrl+o to expand)")[1].split("Took")[0]
    assert "line0" not in shown and "line11" in shown
    t.keys("C-o")
    t.wait_for(r"^ line0\s*$")


def test_ctrl_g_edits_the_message_in_the_external_editor(term, tmp_path):
    script = tmp_path / "fake-editor.sh"
    script.write_text('#!/bin/sh\nprintf "%s and more from the editor" "$(cat "$1")" > "$1"\n')
    script.chmod(0o755)
    t = term(env={"EDITOR": str(script)})
    t.wait_ready()
    t.type("draft text")
    t.keys("C-g")
    t.wait_for(r"^draft text and more from the editor")


def test_alt_up_restores_queued_messages_to_the_editor(term):
    long = "\n\n".join(f"Paragraph {i}: " + "words " * 12 for i in range(80))
    t = term(turns=[{"blocks": [{"text": long}]}, {"blocks": [{"text": "unused"}]}], tokens_per_second=200)
    t.wait_ready()
    t.submit("go long")
    t.wait_for(r"Paragraph 1:", scrollback=True)
    t.submit("queued thought")
    t.wait_for(r"Steering: queued thought")
    t.keys("M-Up")
    screen = t.wait_for(r"Restored 1 queued message to editor")
    assert "Steering: queued thought" not in screen
    assert re.search(r"^queued thought\s*$", screen, re.M)
    t.keys("Escape")
    t.wait_for(r"Operation aborted")


def test_every_ui_method_of_the_reference_works_in_the_terminal(term, tmp_path):
    import json
    from pathlib import Path

    walk = Path(__file__).resolve().parents[1] / "support" / "ui_walk_extension.py"
    log = tmp_path / "walk.jsonl"
    t = term(args=["--provider", "faux", "-e", str(walk)], env={"PIKO_TEST_LOG": str(log)})
    t.wait_ready()
    t.submit("/uiwalk")
    t.wait_for(r"uiwalk done", timeout=20)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [row for row in rows if "method" in row and not row["ok"]] == []
    assert rows[-1] == {"mode": "tui", "has_ui": True}
