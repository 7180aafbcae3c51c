"""Start-up variants and session state in a real terminal: argv prompts, no model, resume, retries,
compaction, themes, model and thinking keys."""

from __future__ import annotations

import re


def test_messages_on_the_command_line_are_sent_at_start(term):
    t = term(
        turns=[{"blocks": [{"text": "answer one"}]}, {"blocks": [{"text": "answer two"}]}],
        args=["--provider", "faux", "first from argv", "second from argv"],
    )
    history = t.wait_for(r"answer two", scrollback=True)
    assert history.index("first from argv") < history.index("answer one") < history.index("second from argv")


def test_without_a_model_the_guidance_shows_and_the_editor_works(term):
    t = term(args=[])
    screen = t.wait_ready(timeout=25)
    history = t.wait_for(r"Providers and their variables", scrollback=True)
    t.save("no-model")
    assert "No models available." in history and "/login" in history
    t.submit("hello?")
    t.wait_for(r"Error: No model selected\.", scrollback=True)
    t.type("/log")
    t.wait_for(r"→ login|→ logout")
    assert "no-model" in screen


def test_resume_opens_the_session_picker(term):
    first = term(turns=[{"blocks": [{"text": "the OSPREY answer"}]}])
    first.wait_ready()
    first.submit("question about birds")
    first.wait_for(r"OSPREY")
    first.close()
    again = term(start=False, turns=[{"blocks": [{"text": "resumed fine"}]}])
    again.home, again.agent, again.work = first.home, first.agent, first.work
    again.start(["--provider", "faux", "--resume"])
    again.wait_for(r"question about birds")
    again.save("picker")
    again.keys("Down", "Enter")
    screen = again.wait_for(r"the OSPREY answer")
    again.save("resumed")
    assert "question about birds" in screen
    again.submit("more")
    again.wait_for(r"resumed fine")


def test_retries_are_visible_and_end_in_success(term):
    turns = [
        {"error": "503 overloaded, try again"},
        {"blocks": [{"text": "worked on retry"}]},
    ]
    t = term(turns=turns, settings={"retry": {"baseDelayMs": 1500, "maxRetries": 2}})
    t.wait_ready()
    t.submit("flaky please")
    screen = t.wait_for(r"Retrying \(1/2\) in \ds\.\.\. \(escape to cancel\)")
    t.save("retrying")
    t.wait_for(r"worked on retry", timeout=20)
    assert "Retrying" not in t.screen()
    assert "Retry failed" not in t.history()
    assert "flaky please" in screen


def test_manual_compaction_shows_progress_and_the_summary(term):
    turns = [
        {"blocks": [{"text": "first long reply " * 20}]},
        {"blocks": [{"text": "second reply"}]},
        {"blocks": [{"text": "## Goal\nA summary of everything."}], "delay_s": 1},
    ]
    t = term(turns=turns, settings={"compaction": {"keepRecentTokens": 10}})
    t.wait_ready()
    t.submit("one")
    t.wait_for(r"first long reply")
    t.submit("two")
    t.wait_for(r"second reply")
    t.submit("/compact")
    screen = t.wait_for(r"\[compaction\]", timeout=20)
    t.save("compacted")
    assert re.search(r"Compacted from [\d,]+ tokens \(ctrl\+o to expand\)", screen)


def test_light_theme_from_settings_colours_the_screen(term):
    t = term(settings={"theme": "light"}, turns=[{"blocks": [{"text": "hi"}]}])
    t.wait_ready()
    t.submit("colour check")
    t.wait_for(r"^ hi$")
    coloured = t.screen(colors=True)
    assert "48;2;232;232;232" in coloured  # light userMessageBg #e8e8e8
    unknown = term(settings={"theme": "no-such-theme"})
    unknown.wait_ready()
    assert 'Failed to load theme "no-such-theme": Theme not found' in unknown.history()


def test_model_and_thinking_keys_report_what_they_can_do(term):
    t = term()
    t.wait_ready()
    t.keys("C-p")
    t.wait_for(r"Only one model available")
    t.keys("BTab")
    t.wait_for(r"Current model does not support thinking")
    t.keys("C-t")
    t.wait_for(r"Thinking blocks: hidden")
    t.keys("C-t")
    t.wait_for(r"Thinking blocks: visible")


def test_session_start_handlers_can_ask_with_a_dialog(term):
    t = term(extensions=["startup_dialog_ext.py"], turns=[{"blocks": [{"text": "ok then"}]}])
    t.wait_for(r"Start how\?")
    t.keys("Down", "Enter")
    # the header and the answer's notice both drawn (a loaded machine may draw them a poll apart)
    screen = t.wait_for(lambda s: "starting careful" in s and "piko v" in s)
    assert screen.index("piko v") < screen.index("starting careful")
    t.wait_ready()
    t.submit("go")
    t.wait_for(r"ok then")


def test_custom_theme_from_the_agent_dir_is_listed_and_used(term):
    import json
    from pathlib import Path

    data = json.loads(
        (Path(__file__).resolve().parents[2] / "plugins/modes/interactive/themes/dark.json").read_text()
    )
    data["name"] = "neon"
    data["vars"]["userMsgBg"] = "#102030"
    t = term(
        settings={"theme": "neon"},
        agent_files={"themes/neon.json": json.dumps(data)},
        turns=[{"blocks": [{"text": "neon reply"}]}],
    )
    screen = t.wait_ready()
    assert "[Themes]" in screen and "neon" in screen
    t.submit("in colour")
    t.wait_for(r"neon reply")
    assert "48;2;16;32;48" in t.screen(colors=True)


def test_a_missing_session_stops_before_the_screen_opens(term):
    t = term(args=["--provider", "faux", "--session", "zzzz", "@missing.txt"])
    screen = t.wait_for(r"piko exited with 1")
    # as pi: the session is looked up first (before the @files), and no editor was drawn
    assert t.stderr.read_text() == "No session found matching 'zzzz'\n"
    assert "ctrl+c" not in screen
